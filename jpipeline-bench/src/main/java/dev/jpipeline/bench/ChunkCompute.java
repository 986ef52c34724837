package dev.jpipeline.bench;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.zip.CRC32C;

/**
 * The per-chunk computations of the streaming and prefetch benchmarks: a sum of longs (about as fast as a kernel
 * copy from the page cache), CRC32C (an intrinsic, several times faster) and SHA-256 (several times slower).
 */
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
    },
    /** The JDK's SHA-256 of the chunk (intrinsic where the CPU has SHA extensions): the digest's first 8 bytes. */
    SHA256 {
        @Override
        long apply(MemorySegment chunk) {
            try {
                MessageDigest sha = MessageDigest.getInstance("SHA-256");
                sha.update(chunk.asByteBuffer());
                return ByteBuffer.wrap(sha.digest()).getLong();
            } catch (NoSuchAlgorithmException e) {
                throw new AssertionError("every JDK has SHA-256", e);
            }
        }
    };

    /** The chunk's result; results of a stream are added up. */
    abstract long apply(MemorySegment chunk);
}
