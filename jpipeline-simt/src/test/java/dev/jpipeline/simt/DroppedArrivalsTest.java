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
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * DroppedArrivals, at its edges: which departures make a wait complete that a GPU never completes (HANGS_ON_GPU),
 * and which do not (partitioned owners leaving after their last arrival, re-made states, several pipelines per
 * thread, device-scope states per block), plus the same outcome in every normal launch.
 */
@Timeout(120)
class DroppedArrivalsTest {

    private static MemorySegment input(int floats) {
        return IndexFloats.of(floats, 0);
    }

    /** A unified pipeline run twice on one shared state, every thread quitting after its last batch each time. */
    static float[] remade(int rounds) {
        int threads = 4;
        int batches = 3;
        MemorySegment in = input(threads * batches);
        float[] out = new float[threads * batches * rounds];
        Kernel.launch(Dim3.of(1), Dim3.of(threads), 4L * threads * 2, ctx -> {
            PipelineSharedState st = ctx.shared("s", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
            MemorySegment sm = ctx.dynamicShared();
            int t = ctx.threadRank();
            for (int r = 0; r < rounds; r++) {
                Pipeline p = Pipeline.make(ctx.block(), st);
                for (int b = 0; b < batches; b++) {
                    p.producerAcquire();
                    memcpyAsync(sm.asSlice(4L * (threads * (b % 2) + t), 4), in.asSlice(4L * (threads * b + t), 4),
                        4, p);
                    p.producerCommit();
                    p.consumerWait();
                    out[threads * batches * r + threads * b + t] = ctx.loadFloat(sm, threads * (b % 2) + t) + 1;
                    p.consumerRelease();
                }
                p.quit();
                ctx.syncThreads();
            }
        });
        return out;
    }

    @Test
    void aPipelineRemadeOnTheSameStateAfterAllQuitIsNoFinding() {
        float[] expected = new float[4 * 3 * 2];
        for (int i = 0; i < expected.length; i++) {
            expected[i] = i % 12 + 1;
        }
        assertArrayEquals(expected, remade(2));
        Exploration<float[]> e = CheckedExecution.explore(20, 1, () -> remade(2));
        assertNull(e.finding(), () -> e.finding().report());
    }

    /** Count-partitioned: producerCount producers (ranks below it) copy a batch, the others read it. */
    static float[] countPartitioned(boolean producersQuitEarly) {
        int threads = 4;
        int batches = 4;
        MemorySegment in = input(2 * batches);
        float[] out = new float[2 * batches];
        Kernel.launch(Dim3.of(1), Dim3.of(threads), 4L * 2 * 2, ctx -> {
            PipelineSharedState st = ctx.shared("s", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
            int t = ctx.threadRank();
            Pipeline p = Pipeline.make(ctx.block(), st, 2);
            MemorySegment sm = ctx.dynamicShared();
            if (t < 2) {
                if (!producersQuitEarly) {
                    for (int b = 0; b < batches; b++) {
                        p.producerAcquire();
                        memcpyAsync(sm.asSlice(4L * (2 * (b % 2) + t), 4), in.asSlice(4L * (2 * b + t), 4), 4, p);
                        p.producerCommit();
                    }
                }
                p.quit();                       // after its last commit (or, the bug, before any)
            } else {
                for (int b = 0; b < batches; b++) {
                    p.consumerWait();
                    out[2 * b + t - 2] = ctx.loadFloat(sm, 2 * (b % 2) + t - 2) * 2;
                    p.consumerRelease();
                }
                p.quit();
            }
        });
        return out;
    }

    @Test
    void countPartitionedProducersThatQuitAfterTheirLastCommitAreNoFinding() {
        Exploration<float[]> e = CheckedExecution.explore(40, 1, () -> countPartitioned(false));
        assertNull(e.finding(), () -> e.finding().report());
        float[] expected = new float[8];
        for (int i = 0; i < 8; i++) {
            expected[i] = 2f * i;
        }
        assertArrayEquals(expected, e.firstResult());
    }

    @Test
    void countPartitionedProducersThatAllQuitBeforeCommittingFailHereAsTheGpuHangs() {
        Exploration<float[]> e = CheckedExecution.explore(40, 1, () -> countPartitioned(true));
        assertNotNull(e.finding(), "producers that never commit: the consumers' waits never end on a GPU");
        assertEquals(FindingKind.HANGS_ON_GPU, e.finding().kind(), e.finding()::report);
        assertTrue(e.finding().message().contains("fails here at once (no producer is left to arrive)")
            && e.finding().message().contains("on a GPU this wait never ends"), e.finding()::report);
    }

    /** Role-partitioned: both producers quit before committing anything. */
    static float[] producersQuitFirst() {
        float[] out = new float[4];
        Kernel.launch(Dim3.of(1), Dim3.of(4), 4L * 4, ctx -> {
            PipelineSharedState st = ctx.shared("s", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
            int t = ctx.threadRank();
            Pipeline p = Pipeline.make(ctx.block(), st, t < 2 ? PipelineRole.PRODUCER : PipelineRole.CONSUMER);
            if (t >= 2) {
                p.consumerWait();
                out[t] = 1;
                p.consumerRelease();
            }
            p.quit();
        });
        return out;
    }

    @Test
    void roleProducersThatAllQuitBeforeCommittingFailHereAsTheGpuHangs() {
        Exploration<float[]> e = CheckedExecution.explore(40, 1, DroppedArrivalsTest::producersQuitFirst);
        assertNotNull(e.finding(), "no producer ever commits: the consumers' waits never end on a GPU");
        assertEquals(FindingKind.HANGS_ON_GPU, e.finding().kind(), e.finding()::report);
        assertTrue(e.finding().message().contains("consumer_wait of thread (2, 0, 0)")
            || e.finding().message().contains("consumer_wait of thread (3, 0, 0)"), e.finding()::report);
    }

    /** Role-partitioned, 1 stage: the consumer quits before releasing the first batch, the producer goes on. */
    static float[] consumerQuitsFirst() {
        float[] out = new float[1];
        Kernel.launch(Dim3.of(1), Dim3.of(2), 4L, ctx -> {
            PipelineSharedState st = ctx.shared("s", () -> PipelineSharedState.create(ThreadScope.BLOCK, 1));
            int t = ctx.threadRank();
            Pipeline p = Pipeline.make(ctx.block(), st, t == 0 ? PipelineRole.PRODUCER : PipelineRole.CONSUMER);
            if (t == 0) {
                for (int b = 0; b < 2; b++) {
                    p.producerAcquire();
                    p.producerCommit();
                }
            } else {
                p.consumerWait();
                out[0] = 1;
            }
            p.quit();
        });
        return out;
    }

    @Test
    void aProducerWhoseOnlyConsumerQuitWithoutReleasingHangsOnTheGpu() {
        Exploration<float[]> e = CheckedExecution.explore(40, 1, DroppedArrivalsTest::consumerQuitsFirst);
        assertNotNull(e.finding(), "the stage is never released: the producer's second acquire never ends on a GPU");
        assertEquals(FindingKind.HANGS_ON_GPU, e.finding().kind(), e.finding()::report);
        assertTrue(e.finding().message().startsWith("producer_acquire of thread (0, 0, 0)")
            && e.finding().message().contains("fails here at once (no consumer is left to arrive)"), e.finding()::report);
    }

    /** A unified pipeline in which thread 1 ends holding an acquired stage (never commits it). */
    static float[] endsHoldingAcquired() {
        float[] out = new float[4];
        Kernel.launch(Dim3.of(1), Dim3.of(4), 4L * 8, ctx -> {
            PipelineSharedState st = ctx.shared("s", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
            int t = ctx.threadRank();
            Pipeline p = Pipeline.make(ctx.block(), st);
            p.producerAcquire();
            if (t == 1) {
                return;                         // BUG: ends holding the acquired stage
            }
            ctx.storeFloat(ctx.dynamicShared(), t, t);
            p.producerCommit();
            p.consumerWait();
            out[t] = 1;
            p.consumerRelease();
            p.quit();
        });
        return out;
    }

    @Test
    void aThreadThatEndsHoldingAnAcquiredStageHangsTheGpu() {
        Exploration<float[]> e = CheckedExecution.explore(40, 1, DroppedArrivalsTest::endsHoldingAcquired);
        assertNotNull(e.finding(), "a stage acquired and never committed: its waiters never end on a GPU");
        assertEquals(FindingKind.HANGS_ON_GPU, e.finding().kind(), e.finding()::report);
    }

    /** Two pipelines made by every thread, on two shared states; each quits both after its last batch. */
    static float[] twoPipelines() {
        int threads = 4;
        int batches = 3;
        MemorySegment in = input(threads * batches);
        float[] out = new float[threads * batches];
        Kernel.launch(Dim3.of(1), Dim3.of(threads), 4L * threads * 4, ctx -> {
            PipelineSharedState a = ctx.shared("a", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
            PipelineSharedState bst = ctx.shared("b", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
            int t = ctx.threadRank();
            Pipeline p = Pipeline.make(ctx.block(), a);
            Pipeline q = Pipeline.make(ctx.block(), bst);
            MemorySegment sm = ctx.dynamicShared();
            for (int b = 0; b < batches; b++) {
                p.producerAcquire();
                memcpyAsync(sm.asSlice(4L * (threads * (b % 2) + t), 4), in.asSlice(4L * (threads * b + t), 4), 4, p);
                p.producerCommit();
                p.consumerWait();
                float v = ctx.loadFloat(sm, threads * (b % 2) + t);
                p.consumerRelease();
                q.producerAcquire();
                ctx.storeFloat(sm, 2L * threads + threads * (b % 2) + t, v + 1);
                q.producerCommit();
                q.consumerWait();
                out[threads * b + t] = ctx.loadFloat(sm, 2L * threads + threads * (b % 2) + t);
                q.consumerRelease();
            }
            p.quit();
            // q is left to the thread's end
        });
        return out;
    }

    @Test
    void threadsThatMakeSeveralPipelinesAndLeaveOneToTheirEndAreNoFinding() {
        float[] expected = new float[12];
        for (int i = 0; i < 12; i++) {
            expected[i] = i + 1;
        }
        for (int run = 0; run < 5; run++) {
            assertArrayEquals(expected, twoPipelines());
        }
        Exploration<float[]> e = CheckedExecution.explore(40, 1, DroppedArrivalsTest::twoPipelines);
        assertNull(e.finding(), () -> e.finding().report());
    }

    /**
     * Count-partitioned, 2 producers of 4 threads: producer 1 quits at once, before its first operation (its role
     * not yet taken); producer 0 produces every batch alone. libcu++'s produced barriers expect 2 commits per
     * batch: the consumers' first wait never ends on a GPU.
     */
    static float[] countPartitionedOneProducerQuitsUndecided() {
        int batches = 4;
        float[] out = new float[2 * batches];
        Kernel.launch(Dim3.of(1), Dim3.of(4), 4L * 2, ctx -> {
            PipelineSharedState st = ctx.shared("s", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
            int t = ctx.threadRank();
            Pipeline p = Pipeline.make(ctx.block(), st, 2);
            MemorySegment sm = ctx.dynamicShared();
            if (t == 1) {
                p.quit();                       // BUG: a producer that never produces
                return;
            }
            for (int b = 0; b < batches; b++) {
                if (t == 0) {
                    p.producerAcquire();
                    ctx.storeFloat(sm, b % 2, b);
                    p.producerCommit();
                } else {
                    p.consumerWait();
                    out[2 * b + t - 2] = ctx.loadFloat(sm, b % 2);
                    p.consumerRelease();
                }
            }
            p.quit();
        });
        return out;
    }

    @Test
    void aCountPartitionedProducerThatQuitsBeforeItsFirstOperationHangsTheGpu() {
        Exploration<float[]> e = CheckedExecution.explore(40, 1,
            DroppedArrivalsTest::countPartitionedOneProducerQuitsUndecided);
        assertNotNull(e.finding(), "a producer that never commits: every batch is one commit short on a GPU");
        assertEquals(FindingKind.HANGS_ON_GPU, e.finding().kind(), e.finding()::report);
        assertTrue(e.finding().message().contains("left before taking a role"), e.finding()::report);
        assertEquals(e.finding().report(), CheckedExecution.replay(e.finding().schedule(),
            DroppedArrivalsTest::countPartitionedOneProducerQuitsUndecided).finding().report());
    }

    /** Device-scope pipelines in global memory, one per block, producers quitting after their last commit. */
    static float[] devicePerBlock() {
        int batches = 3;
        float[] out = new float[2 * 2 * batches];
        MemorySegment g = Arena.ofAuto().allocate(4L * 2 * 2, 16);
        Kernel.launch(Dim3.of(2), Dim3.of(2), 0, ctx -> {
            int blk = ctx.blockIdx().x();
            PipelineSharedState st = ctx.global("s" + blk, () -> PipelineSharedState.create(ThreadScope.DEVICE, 2));
            int t = ctx.threadRank();
            Pipeline p = Pipeline.make(ctx.block(), st, t == 0 ? PipelineRole.PRODUCER : PipelineRole.CONSUMER);
            MemorySegment mine = g.asSlice(4L * 2 * blk, 8);
            for (int b = 0; b < batches; b++) {
                if (t == 0) {
                    p.producerAcquire();
                    ctx.storeFloat(mine, b % 2, 10 * blk + b);
                    p.producerCommit();
                } else {
                    p.consumerWait();
                    out[batches * blk + b] = ctx.loadFloat(mine, b % 2);
                    p.consumerRelease();
                }
            }
            p.quit();
        });
        return out;
    }

    @Test
    void deviceScopePipelinesPerBlockInGlobalMemoryAreNoFinding() {
        Exploration<float[]> e = CheckedExecution.explore(40, 1, DroppedArrivalsTest::devicePerBlock);
        assertNull(e.finding(), () -> e.finding().report());
    }

    /** Normal launch: a thread that made a pipeline throws; the launch fails with its exception, at once. */
    @Test
    void aThreadThatMadeAPipelineAndThrewFailsTheLaunchWithItsException() {
        for (int run = 0; run < 5; run++) {
            long start = System.nanoTime();
            KernelFailure f = org.junit.jupiter.api.Assertions.assertThrows(KernelFailure.class, () ->
                Kernel.launch(Dim3.of(1), Dim3.of(4), 4L * 8, ctx -> {
                    PipelineSharedState st = ctx.shared("s", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
                    Pipeline p = Pipeline.make(ctx.block(), st);
                    if (ctx.threadRank() == 2) {
                        throw new ArithmeticException("boom");
                    }
                    p.producerAcquire();
                    p.producerCommit();
                    p.consumerWait();
                    p.consumerRelease();
                    p.quit();
                }));
            Throwable root = f;
            while (root.getCause() != null && !(root instanceof ArithmeticException)) {
                root = root.getCause();
            }
            org.junit.jupiter.api.Assertions.assertTrue(root instanceof ArithmeticException, f::toString);
            org.junit.jupiter.api.Assertions.assertTrue(System.nanoTime() - start < 400_000_000L,
                "took " + (System.nanoTime() - start) / 1_000_000 + " ms");
        }
    }

    /**
     * A role-partitioned pipeline made twice on one shared state: the first time the producer streams 2 batches and
     * quits after its last commit, the consumer quits after its last release; after a __syncthreads both make it
     * again and stream 6 batches. libcu++ re-initializes nothing it needs: every batch of the second pipeline has
     * its commit.
     */
    static float[] remadeLonger() {
        float[] out = new float[8];
        Kernel.launch(Dim3.of(1), Dim3.of(2), 4L * 2, ctx -> {
            PipelineSharedState st = ctx.shared("s", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
            int t = ctx.threadRank();
            MemorySegment sm = ctx.dynamicShared();
            int[] counts = {2, 6};
            int k = 0;
            for (int count : counts) {
                Pipeline p = Pipeline.make(ctx.block(), st, t == 0 ? PipelineRole.PRODUCER : PipelineRole.CONSUMER);
                for (int b = 0; b < count; b++) {
                    if (t == 0) {
                        p.producerAcquire();
                        ctx.storeFloat(sm, b % 2, k + b);
                        p.producerCommit();
                    } else {
                        p.consumerWait();
                        out[k + b] = ctx.loadFloat(sm, b % 2);
                        p.consumerRelease();
                    }
                }
                p.quit();
                k += count;
                ctx.syncThreads();
            }
        });
        return out;
    }

    @Test
    void aPartitionedPipelineRemadeForMoreBatchesThanBeforeIsNoFinding() {
        float[] expected = {0, 1, 2, 3, 4, 5, 6, 7};
        assertArrayEquals(expected, remadeLonger());
        Exploration<float[]> e = CheckedExecution.explore(30, 1, DroppedArrivalsTest::remadeLonger);
        assertNull(e.finding(), () -> e.finding().report());
    }

    /** A normal launch's outcome: its result, or its failure's message with the thread names taken out. */
    private static String outcome(java.util.function.Supplier<float[]> run) {
        try {
            return java.util.Arrays.toString(run.get());
        } catch (RuntimeException e) {
            return e.getClass().getSimpleName() + ": " + String.valueOf(e.getMessage()).lines().findFirst().orElse("");
        }
    }

    @Test
    void normalLaunchesOfTheDepartureBugsGiveOneOutcomeEveryRun() {
        java.util.List<java.util.function.Supplier<float[]>> runs = java.util.List.of(
            DroppedArrivalsTest::countPartitionedOneProducerQuitsUndecided,
            DroppedArrivalsTest::endsHoldingAcquired,
            () -> countPartitioned(true),
            DroppedArrivalsTest::producersQuitFirst,
            () -> PipelineDepartureTest.partitioned(false, true, false),
            () -> PipelineDepartureTest.partitioned(true, false, false));
        for (int k = 0; k < runs.size(); k++) {
            String first = outcome(runs.get(k));
            for (int run = 1; run < 15; run++) {
                assertEquals(first, outcome(runs.get(k)), "program " + k + ", run " + run);
            }
        }
    }

    /** One shared state made by the host, used by two launches whose threads all end without quit(). */
    static float[] hostStateTwoLaunches() {
        PipelineSharedState st = PipelineSharedState.create(ThreadScope.BLOCK, 2);
        float[] out = new float[8];
        for (int launch = 0; launch < 2; launch++) {
            int base = 4 * launch;
            Kernel.launch(Dim3.of(1), Dim3.of(2), 8, ctx -> {
                int t = ctx.threadRank();
                Pipeline p = Pipeline.make(ctx.block(), st, t == 0 ? PipelineRole.PRODUCER : PipelineRole.CONSUMER);
                MemorySegment sm = ctx.dynamicShared();
                for (int b = 0; b < 4; b++) {
                    if (t == 0) {
                        p.producerAcquire();
                        ctx.storeFloat(sm, b % 2, base + b);
                        p.producerCommit();
                    } else {
                        p.consumerWait();
                        out[base + b] = ctx.loadFloat(sm, b % 2);
                        p.consumerRelease();
                    }
                }
                // no quit(): the thread's end leaves, as the destructor of a cuda::pipeline does
            });
        }
        return out;
    }

    @Test
    void aHostStateReusedByALaunchAfterItsThreadsEndedWithoutQuitWorksAndIsNoFinding() {
        float[] expected = {0, 1, 2, 3, 4, 5, 6, 7};
        assertArrayEquals(expected, hostStateTwoLaunches());
        Exploration<float[]> e = CheckedExecution.explore(20, 1, DroppedArrivalsTest::hostStateTwoLaunches);
        assertNull(e.finding(), () -> e.finding().report());
    }

    /**
     * A consumer that waits with a timeout (consumer_wait_for) for a batch that a producer which quit will never
     * commit: on a GPU the wait does not hang, it times out (returns false), and this kernel takes its fallback
     * path. jpipeline's wait completes instead (the quitter's commit was dropped), so the program behaves
     * differently there: a finding, but it must not claim that the wait never ends.
     */
    static float[] timedWaitForAQuitter() {
        float[] out = new float[3];
        Kernel.launch(Dim3.of(1), Dim3.of(3), 8, ctx -> {
            PipelineSharedState st = ctx.shared("s", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
            int t = ctx.threadRank();
            Pipeline p = Pipeline.make(ctx.block(), st, t < 2 ? PipelineRole.PRODUCER : PipelineRole.CONSUMER);
            MemorySegment sm = ctx.dynamicShared();
            if (t < 2) {
                if (t == 0) {
                    p.producerAcquire();
                    ctx.storeFloat(sm, 0, 1);
                    p.producerCommit();
                }
                p.quit();                       // producer 1 never commits batch 0
            } else {
                if (p.consumerWaitFor(java.time.Duration.ofMillis(10))) {
                    out[2] = ctx.loadFloat(sm, 0);
                    p.consumerRelease();
                } else {
                    out[2] = -1;                // the GPU's path: the wait timed out
                }
                p.quit();
            }
        });
        return out;
    }

    @Test
    void aTimedWaitThatADroppedCommitCompletesIsNotCalledAWaitThatNeverEnds() {
        Exploration<float[]> e = CheckedExecution.explore(20, 1, DroppedArrivalsTest::timedWaitForAQuitter);
        assertNotNull(e.finding(), "jpipeline's wait completes where the GPU's times out");
        assertEquals(FindingKind.HANGS_ON_GPU, e.finding().kind(), e.finding()::report);
        assertTrue(!e.finding().message().contains("never ends"), e.finding().message());
        assertTrue(e.finding().message().startsWith("consumer_wait_for of thread"), e.finding().message());
        assertTrue(e.finding().message().contains("times out (returns false)"), e.finding().message());
    }
}
