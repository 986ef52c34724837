package dev.jpipeline.simt;

import static dev.jpipeline.MemcpyAsync.memcpyAsync;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineRole;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A kernel thread's pipeline departures: a thread that ends without {@code quit()} is left for at its end, in every
 * run (as a C++ destructor quits), and checked execution reports every wait that completes only because a departed
 * owner's arrivals were dropped, which libcu++ never does ({@link FindingKind#HANGS_ON_GPU}): a quit while a stage
 * lacks the quitter's commit, an early exit, a thread that ends without quit, a release that never comes.
 */
@Timeout(120)
class PipelineDepartureTest {

    private static final int THREADS = 8;
    private static final int BATCHES = 6;

    private static MemorySegment input(int floats) {
        return IndexFloats.of(floats, 0);
    }

    /**
     * A unified two-stage pipeline in which the last two threads leave after two batches, by {@code quit()} or by
     * returning without it; its hang detection is off, so only the leavers' departures can release the others.
     * Each thread adds 1 to its element of each batch it takes part in.
     */
    static float[] earlyLeavers(boolean quit) {
        MemorySegment in = input(THREADS * BATCHES);
        float[] out = new float[THREADS * BATCHES];
        Kernel.launch(Dim3.of(1), Dim3.of(THREADS), 4L * THREADS * 2, ctx -> {
            PipelineSharedState st = ctx.shared("s", () -> PipelineSharedState.builder(ThreadScope.BLOCK, 2)
                .detectDeadlocks(Duration.ZERO).build());
            Pipeline p = Pipeline.make(ctx.block(), st);
            MemorySegment sm = ctx.dynamicShared();
            int t = ctx.threadRank();
            int mine = t >= THREADS - 2 ? 2 : BATCHES;
            for (int b = 0; b < mine; b++) {
                p.producerAcquire();
                memcpyAsync(sm.asSlice(4L * (THREADS * (b % 2) + t), 4), in.asSlice(4L * (THREADS * b + t), 4), 4, p);
                p.producerCommit();
                p.consumerWait();
                out[THREADS * b + t] = ctx.loadFloat(sm, THREADS * (b % 2) + t) + 1;
                p.consumerRelease();
            }
            if (quit || mine == BATCHES) {
                p.quit();
            }
        });
        return out;
    }

    private static float[] expectedEarlyLeavers() {
        float[] expected = new float[THREADS * BATCHES];
        for (int b = 0; b < BATCHES; b++) {
            for (int t = 0; t < THREADS; t++) {
                expected[THREADS * b + t] = b < 2 || t < THREADS - 2 ? THREADS * b + t + 1 : 0;
            }
        }
        return expected;
    }

    @Test
    void aThreadThatEndsWithoutQuitReleasesItsPeersAtItsEndInEveryRun() {
        for (int run = 0; run < 40; run++) {
            assertArrayEquals(expectedEarlyLeavers(), earlyLeavers(false), "run " + run);
        }
    }

    @Test
    void checkedExecutionReportsAThreadThatEndsWithoutQuitAsAHangOnTheGpu() {
        Finding finding = CheckedExecution.explore(100, 1, () -> earlyLeavers(false)).finding();
        assertNotNull(finding, "a leaver's dropped commits went unreported");
        assertEquals(FindingKind.HANGS_ON_GPU, finding.kind(), finding::report);
        assertTrue(finding.message().contains("ended without quit()"), finding.message());
        assertTrue(finding.message().contains("consumer_wait of thread"), finding.message());
        assertTrue(finding.message().contains("commit of batch 2"), finding.message());
        assertEquals(finding.report(),
            CheckedExecution.replay(finding.schedule(), () -> earlyLeavers(false)).finding().report());
    }

    @Test
    void checkedExecutionReportsTheGuidesEarlyExitWithQuit() {
        Finding finding = CheckedExecution.explore(100, 1, () -> earlyLeavers(true)).finding();
        assertNotNull(finding);
        assertEquals(FindingKind.HANGS_ON_GPU, finding.kind(), finding::report);
        assertTrue(finding.message().contains("called quit() before its commit of batch 2"), finding.message());
    }

    /**
     * A role-partitioned pipeline: 2 producers copy half a batch each, 2 consumers read it. {@code skipsTurn}: the
     * second producer quits instead of producing the last batch. {@code stopsReleasing}: the second consumer stops
     * after the first batch and ends without releasing the others. {@code quitAfterLastCommit}: the producers quit
     * right after their last commit, which libcu++ allows.
     */
    static float[] partitioned(boolean skipsTurn, boolean stopsReleasing, boolean quitAfterLastCommit) {
        int batches = 4;
        int half = 2;
        MemorySegment in = input(2 * half * batches);
        float[] out = new float[2 * half * batches];
        Kernel.launch(Dim3.of(1), Dim3.of(4), 4L * 2 * half * 2, ctx -> {
            PipelineSharedState st = ctx.shared("s", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
            int t = ctx.threadRank();
            Pipeline p = Pipeline.make(ctx.block(), st, t < 2 ? PipelineRole.PRODUCER : PipelineRole.CONSUMER);
            MemorySegment sm = ctx.dynamicShared();
            for (int b = 0; b < batches; b++) {
                long stage = (long) 2 * half * (b % 2);
                if (t < 2) {
                    if (skipsTurn && t == 1 && b == batches - 1) {
                        break;                          // BUG: quits below, the last batch one commit short
                    }
                    p.producerAcquire();
                    memcpyAsync(sm.asSlice(4L * (stage + half * t), 4L * half),
                        in.asSlice(4L * (2 * half * b + half * t), 4L * half), 4L * half, p);
                    p.producerCommit();
                } else {
                    if (stopsReleasing && t == 3 && b > 0) {
                        return;                         // BUG: its releases of batches 1.. never come
                    }
                    p.consumerWait();
                    for (int i = t - 2; i < 2 * half; i += 2) {
                        out[2 * half * b + i] = ctx.loadFloat(sm, stage + i) * 2;
                    }
                    p.consumerRelease();
                }
            }
            if (t >= 2 || quitAfterLastCommit || skipsTurn) {
                p.quit();
            }
        });
        return out;
    }

    @Test
    void aQuitWhileAStageLacksTheQuittersCommitIsReported() {
        Finding finding = CheckedExecution.explore(100, 1, () -> partitioned(true, false, false)).finding();
        assertNotNull(finding);
        assertEquals(FindingKind.HANGS_ON_GPU, finding.kind(), finding::report);
        assertTrue(finding.message().contains("commit of batch 3 (stage 1)"), finding.message());
        assertTrue(finding.message().contains("called quit() before its commit of batch 3"), finding.message());
    }

    @Test
    void aReleaseThatNeverComesIsReportedAtTheAcquireThatNeedsIt() {
        Finding finding = CheckedExecution.explore(100, 1, () -> partitioned(false, true, false)).finding();
        assertNotNull(finding);
        assertEquals(FindingKind.HANGS_ON_GPU, finding.kind(), finding::report);
        assertTrue(finding.message().startsWith("producer_acquire of thread"), finding.message());
        assertTrue(finding.message().contains("ended without quit() before its release of batch 1"),
            finding.message());
    }

    @Test
    void aProducerThatQuitsAfterItsLastCommitIsNoFinding() {
        Exploration<float[]> e = CheckedExecution.explore(60, 1, () -> partitioned(false, false, true));
        assertNull(e.finding(), () -> e.finding().report());
        float[] expected = new float[16];
        for (int i = 0; i < 16; i++) {
            expected[i] = 2f * i;
        }
        assertArrayEquals(expected, e.firstResult());
    }

    @Test
    void aThreadThatMakesAndQuitsPipelinesInALoopHoldsOnlyItsLiveHandlesForItsEnd() {
        int[] held = new int[2];
        Kernel.launch(Dim3.of(1), Dim3.of(1), 0, ctx -> {
            PipelineSharedState st = ctx.shared("s", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
            Pipeline kept = Pipeline.make(ctx.block(), PipelineSharedState.create(ThreadScope.BLOCK, 2));
            for (int i = 0; i < 1000; i++) {
                Pipeline p = Pipeline.make(ctx.block(), st);
                p.producerAcquire();
                p.producerCommit();
                p.consumerWait();
                p.consumerRelease();
                p.quit();
            }
            held[0] = ctx.thread().heldForEnd();
            held[1] = kept.isActive() ? 1 : 0;
        });
        assertTrue(held[0] <= 16, "handles held for the thread's end: " + held[0]);
        assertEquals(1, held[1]);
    }
}
