package dev.jpipeline.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

class DemoCommandTest {

    @Test
    void demoStreamsAndVerifies() {
        String[] result = Cli.run("demo", "--size", "4MiB", "--chunk", "64k");
        assertEquals("0", result[0], result[2]);
        assertTrue(result[1].startsWith("jpipeline demo: 2 producer threads copy chunks into 4 stage buffers while 2 "
            + "consumer threads checksum them\n  a partitioned pipeline, block scope (cuda::thread_scope_block): "
            + "each thread produces or consumes, all in this JVM\n"), result[1]);
        assertTrue(result[1].contains("streamed 4.0 MiB as 64 chunks of 64.0 KiB"), result[1]);
        assertTrue(result[1].contains(": verified"), result[1]);
        assertTrue(result[1].contains("chunks/s"), result[1]);
    }

    @Test
    void badSizesAreRefusedWithExitCode2() {
        String[] result = Cli.run("demo", "--size", "1m", "--chunk", "3k");
        assertEquals("2", result[0]);
        assertTrue(result[2].contains("--size must be a whole number (at least 1) of --chunk stages, got --size "
            + "1048576 and --chunk 3072"), result[2]);
        String[] odd = Cli.run("demo", "--size", "1m", "--chunk", "24");
        assertEquals("2", odd[0]);
        assertTrue(odd[2].contains("--chunk must be a multiple of 16 bytes"), odd[2]);
    }

    @Test
    void checksumDependsOnPosition() {
        MemorySegment data = MemorySegment.ofArray(new long[] {5, 7});
        MemorySegment swapped = MemorySegment.ofArray(new long[] {7, 5});
        assertTrue(StreamChecksum.of(data, 0, 2) != StreamChecksum.of(swapped, 0, 2));
        assertEquals(StreamChecksum.of(data, 0, 2),
            StreamChecksum.of(data, 0, 1) + StreamChecksum.of(data.asSlice(8), 1, 1));
    }

    @Test
    void demoReportsMiBPerSecondLikeStream() {
        String[] result = Cli.run("demo", "--size", "4MiB", "--chunk", "64k");
        assertEquals("0", result[0], result[2]);
        assertTrue(result[1].matches("(?s).* s, \\d+\\.\\d MiB/s, \\d+ chunks/s\\n.*"), result[1]);
        assertTrue(!result[1].contains("GB/s"), result[1]);
    }
}
