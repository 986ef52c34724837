package dev.jpipeline.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tiny chunks: millions of stages run in memory that does not grow with their number, and the command warns that
 * the per-stage hand-off dominates. (Before, a per-stage array and the trace grew until OutOfMemoryError.)
 */
class SmallChunkTest {

    @Test
    void threeByteChunksOf64MibRunInA256MibHeap(@TempDir Path dir) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        // 22,369,622 stages; 255 stages in flight and one producer and one consumer keep the run to seconds
        Process p = new ProcessBuilder(List.of(java, "-Xmx256m", "-cp", System.getProperty("java.class.path"),
            Main.class.getName(), "stream", "--synthetic", "64m", "--chunk", "3", "--stages", "255", "--producers",
            "1", "--consumers", "1"))
            .redirectOutput(dir.resolve("out").toFile()).redirectError(dir.resolve("err").toFile()).start();
        boolean finished = p.waitFor(240, TimeUnit.SECONDS);
        if (!finished) {
            p.destroyForcibly().waitFor();
        }
        String out = Files.readString(dir.resolve("out"), StandardCharsets.UTF_8);
        String err = Files.readString(dir.resolve("err"), StandardCharsets.UTF_8);
        assertTrue(finished, "within 240 s: " + out + err);
        assertEquals(0, p.exitValue(), out + err);
        assertTrue(err.startsWith("jpipeline: warning: --chunk 3 B is below 16.0 KiB: each stage's hand-off"), err);
        MemorySegment data = StreamJob.synthetic(64L << 20).data();
        CRC32C crc = new CRC32C();
        crc.update(data.asByteBuffer());
        assertEquals(String.format("0x%08x", crc.getValue()), StreamCommandTest.result(out), out);
        assertTrue(out.contains("window    the tracer kept each thread's newest " + StreamCommand.SUMMARY_EVENTS
            + " events"), "without --trace, a bounded window: " + out);
    }
}
