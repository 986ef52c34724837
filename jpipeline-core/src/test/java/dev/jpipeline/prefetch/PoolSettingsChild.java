package dev.jpipeline.prefetch;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.zip.CRC32C;

/** A child JVM for {@link StageBufferPoolTest}: prefetches the file {@code args[0]} twice and prints its CRC-32C. */
public final class PoolSettingsChild {

    private PoolSettingsChild() {
    }

    /** @param args the file */
    public static void main(String[] args) {
        for (int pass = 0; pass < 2; pass++) {
            CRC32C crc = new CRC32C();
            try (var chunks = Prefetch.from(Path.of(args[0])).chunk(64 << 10).stages(4).open()) {
                for (MemorySegment chunk : chunks) {
                    crc.update(chunk.asByteBuffer());
                }
            }
            System.out.println("crc " + Long.toHexString(crc.getValue()));
        }
    }
}
