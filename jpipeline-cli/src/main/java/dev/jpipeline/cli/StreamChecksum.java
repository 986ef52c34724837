package dev.jpipeline.cli;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The demo's checksum: a sum, modulo 2^64, of every long mixed with its position in the stream. Because each
 * term depends on the position, a chunk delivered to the wrong place, twice, or not at all changes the sum;
 * because it is a sum, consumers can add up disjoint parts in any order.
 */
final class StreamChecksum {

    private StreamChecksum() {
    }

    /** The checksum of {@code longs} longs of {@code data}, the first of which sits at stream index {@code first}. */
    static long of(MemorySegment data, long first, long longs) {
        long sum = 0;
        for (long i = 0; i < longs; i++) {
            sum += mix(data.getAtIndex(ValueLayout.JAVA_LONG, i) + first + i);
        }
        return sum;
    }

    /** The finalizer of SplitMix64: a bijection that spreads every input bit over the output. */
    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
