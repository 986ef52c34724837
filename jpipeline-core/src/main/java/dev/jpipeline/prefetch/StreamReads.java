package dev.jpipeline.prefetch;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.util.function.BooleanSupplier;

/**
 * Reading a stream source (a blocking channel, or an input stream through one) into a stage buffer, in order, by
 * the one thread that reads it: the prefetch reader thread, or producer 0 of the parallel form.
 */
final class StreamReads {

    /** A source that returns no bytes this many times in a row fails (it is non-blocking, or broken). */
    private static final int MAX_EMPTY_READS = 1000;

    /** What a fill read: {@code length} bytes, and whether the source ended. */
    record Filled(long length, boolean end) {
    }

    private StreamReads() {
    }

    /**
     * Reads into {@code stage} until it is full, the source ends, or {@code stop} says so (checked between reads).
     *
     * @throws IOException when a read fails, or the source keeps returning no bytes
     */
    static Filled fill(ReadableByteChannel source, MemorySegment stage, BooleanSupplier stop) throws IOException {
        ByteBuffer into = stage.asByteBuffer();
        for (int empty = 0; into.hasRemaining() && !stop.getAsBoolean(); ) {
            int n = source.read(into);
            if (n < 0) {
                return new Filled(into.position(), true);
            }
            empty = n == 0 ? empty + 1 : 0;
            if (empty == MAX_EMPTY_READS) {
                throw new IOException("the source returned no bytes " + MAX_EMPTY_READS
                    + " times in a row (a non-blocking channel cannot be prefetched)");
            }
        }
        return new Filled(into.position(), false);
    }
}
