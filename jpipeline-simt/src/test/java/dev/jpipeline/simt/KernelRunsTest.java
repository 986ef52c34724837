package dev.jpipeline.simt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Kernel.runs(): blocks run compiled and on strands, and each fallback said once, with a JFR event. */
class KernelRunsTest {

    @Test
    void compiledAndStrandBlocksAreCountedAndAFallbackIsSaidOnceWithItsReasonAndAnEvent(@TempDir Path dir)
        throws Exception {
        assumeTrue(ResumptionScan.switchedOn(), "compilation switched off for this run");
        KernelRuns start = Kernel.runs();
        Kernel.launch(Dim3.of(3), Dim3.of(32), 0, ctx -> ctx.syncThreads());     // compiled
        KernelRuns compiled = Kernel.runs();
        assertEquals(3, compiled.compiledBlocks() - start.compiledBlocks());
        assertEquals(0, compiled.strandBlocks() - start.strandBlocks());

        KernelBody warpSync = KernelRunsTest::warpSyncKernel;
        try (Recording recording = new Recording()) {
            recording.enable("dev.jpipeline.KernelFallback");
            recording.start();
            Kernel.launch(Dim3.of(2), Dim3.of(32), 0, warpSync);
            Kernel.launch(Dim3.of(2), Dim3.of(32), 0, warpSync);
            recording.stop();
            Path file = dir.resolve("fallback.jfr");
            recording.dump(file);
            List<RecordedEvent> events = RecordingFile.readAllEvents(file).stream()
                .filter(e -> e.getEventType().getName().equals("dev.jpipeline.KernelFallback"))
                .filter(e -> e.getString("kernel").endsWith("warpSyncKernel"))
                .toList();
            assertEquals(1, events.size(), "one event per kernel class: " + events);
            assertEquals("on strands", events.getFirst().getString("runsAs"));
            assertTrue(events.getFirst().getString("reason").contains("KernelContext.syncWarp"),
                events.getFirst().getString("reason"));
            assertTrue(Files.size(file) > 0);
        }
        KernelRuns after = Kernel.runs();
        assertEquals(4, after.strandBlocks() - compiled.strandBlocks());
        List<String> said = after.fallbacks().subList(compiled.fallbacks().size(), after.fallbacks().size());
        assertEquals(1, said.size(), said.toString());
        assertTrue(said.getFirst().startsWith("dev.jpipeline.simt.KernelRunsTest.warpSyncKernel runs on strands: "
            + "calls KernelContext.syncWarp at KernelRunsTest.java:"), said.getFirst());
    }

    private static void warpSyncKernel(KernelContext ctx) {
        ctx.syncWarp(0xffffffff);       // a masked __syncwarp is not compiled
    }

    @Test
    void theSwitchAndCheckedExecutionAreSaidOnceEach() throws Exception {
        String old = System.getProperty(ResumptionScan.SWITCH);
        System.setProperty(ResumptionScan.SWITCH, "false");
        try {
            Kernel.launch(Dim3.of(1), Dim3.of(8), 0, ctx -> ctx.syncThreads());
            Kernel.launch(Dim3.of(1), Dim3.of(8), 0, ctx -> ctx.syncThreads());
        } finally {
            if (old == null) {
                System.clearProperty(ResumptionScan.SWITCH);
            } else {
                System.setProperty(ResumptionScan.SWITCH, old);
            }
        }
        long compiledBefore = Kernel.runs().compiledBlocks();
        CheckedExecution.explore(2, 1, () -> {
            Kernel.launch(Dim3.of(1), Dim3.of(4), 0, ctx -> ctx.syncThreads());
            return null;
        });
        if (ResumptionScan.switchedOn()) {   // a kernel that compiles runs compiled under checked execution too
            assertEquals(2, Kernel.runs().compiledBlocks() - compiledBefore, "the two checked launches' blocks");
        }
        for (int i = 0; i < 2; i++) {        // one that does not (it names the Java thread) runs on strands
            CheckedExecution.explore(2, 1, () -> {
                Kernel.launch(Dim3.of(1), Dim3.of(4), 0, ctx -> {
                    Thread.currentThread();
                    ctx.syncThreads();
                });
                return null;
            });
        }
        java.util.List<String> said = Kernel.runs().fallbacks();
        assertEquals(1, said.stream().filter(l -> l.startsWith("every kernel runs on strands: compilation switched off"))
            .count(), said.toString());
        assertEquals(1, said.stream().filter(l -> l.startsWith("a kernel launched under checked execution that is "
            + "not compiled runs on strands: ")).count(), said.toString());
    }
}
