package dev.jpipeline.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

class DemoCommandTest {

    @Test
    void demoStreamsAndVerifies() {
        String[] result = Cli.run("demo", "--mib", "4", "--chunk-kib", "64");
        assertEquals("0", result[0], result[2]);
        assertTrue(result[1].contains("streamed 4 MiB as 64 stages of 64 KiB"), result[1]);
        assertTrue(result[1].contains(": verified"), result[1]);
        assertTrue(result[1].contains("stages/s"), result[1]);
    }

    @Test
    void badSizesAreRefusedWithExitCode2() {
        String[] result = Cli.run("demo", "--mib", "1", "--chunk-kib", "3");
        assertEquals("2", result[0]);
        assertTrue(result[2].contains("whole number of --chunk-kib stages"), result[2]);
    }

    @Test
    void checksumDependsOnPosition() {
        MemorySegment data = MemorySegment.ofArray(new long[] {5, 7});
        MemorySegment swapped = MemorySegment.ofArray(new long[] {7, 5});
        assertTrue(StreamChecksum.of(data, 0, 2) != StreamChecksum.of(swapped, 0, 2));
        assertEquals(StreamChecksum.of(data, 0, 2),
            StreamChecksum.of(data, 0, 1) + StreamChecksum.of(data.asSlice(8), 1, 1));
    }
}
