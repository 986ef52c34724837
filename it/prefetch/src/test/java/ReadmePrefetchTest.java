import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The README's example, built against the installed jpipeline-core, gives the JDK's CRC-32C, and the test JVM has
 * the native access that Surefire's argLine grants (without it the first chunk prints the JDK's warning). */
class ReadmePrefetchTest {

    /** Read before any chunk is made: the JDK's first warning also grants the access, so later it says true. */
    private static boolean nativeAccessGranted;

    @BeforeAll
    static void readTheGrantBeforeAnyChunk() {
        nativeAccessGranted = ReadmePrefetch.class.getModule().isNativeAccessEnabled();
    }

    @Test
    void theTestJvmMayCallRestrictedMethods() {
        assertTrue(nativeAccessGranted,
            "the class path has no native access: Surefire's argLine lacks --enable-native-access=ALL-UNNAMED");
    }

    @Test
    void bothFormsGiveTheJdksCrc32cOfAFileOfSeveralChunks(@TempDir Path dir) throws IOException {
        byte[] bytes = new byte[(9 << 20) + 12345];
        new Random(30).nextBytes(bytes);
        Path file = Files.write(dir.resolve("data.bin"), bytes);
        CRC32C expected = new CRC32C();
        expected.update(bytes);
        assertEquals(expected.getValue(), ReadmePrefetch.crc32c(file));
        assertEquals(expected.getValue(), ReadmePrefetch.parallelCrc32c(file));
    }
}
