package dev.jpipeline.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The README's prefetching example gives the file's CRC-32C both ways, over many chunks and a partial last one. */
@Timeout(120)
class ReadmePrefetchTest {

    @Test
    void bothFormsGiveTheFilesCrc32c(@TempDir Path dir) throws IOException {
        byte[] data = new byte[(9 << 22) + 12345];             // 9 whole 4 MiB chunks and a partial one
        new Random(42).nextBytes(data);
        Path file = Files.write(dir.resolve("data"), data);
        CRC32C direct = new CRC32C();
        direct.update(data);

        assertEquals(direct.getValue(), ReadmePrefetch.crc32c(file));
        assertEquals(direct.getValue(), ReadmePrefetch.parallelCrc32c(file));
    }
}
