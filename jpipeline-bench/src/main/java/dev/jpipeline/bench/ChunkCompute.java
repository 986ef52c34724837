package dev.jpipeline.bench;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.zip.CRC32C;

/** The per-chunk computations of the streaming benchmark: a light one (sum) and a heavier one (CRC32C). */
public enum ChunkCompute {
    /** Sum of the chunk's longs. */
    SUM {
        @Override
        long apply(MemorySegment chunk) {
            long sum = 0;
            long longs = chunk.byteSize() / 8;
            for (long i = 0; i < longs; i++) {
                sum += chunk.getAtIndex(ValueLayout.JAVA_LONG, i);
            }
            return sum;
        }
    },
    /** The JDK's CRC32C of the chunk (an intrinsic). */
    CRC32C {
        @Override
        long apply(MemorySegment chunk) {
            CRC32C crc = new CRC32C();
            crc.update(chunk.asByteBuffer());
            return crc.getValue();
        }
    };

    /** The chunk's result; results of a stream are added up. */
    abstract long apply(MemorySegment chunk);
}
