package dev.jpipeline.simt;

import static dev.jpipeline.MemcpyAsync.memcpyAsync;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.Barrier;
import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineRole;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The race detector at its edges: correct synchronisation stays clean (block and warp group syncs, tiles, barriers
 * with updates, drops and parity waits, timed waits, primitives, partitions, cooperative copies), races through a
 * copy's source are found, and the atomics refuse misuse clearly.
 */
@Timeout(120)
class RaceDetectorTest {

    private static final int N = 8;

    private static MemorySegment ints(int n) {
        return Arena.ofAuto().allocate(4L * n, 16);
    }

    private static void clean(Supplier<?> run, int schedules) {
        Exploration<?> e = CheckedExecution.explore(schedules, 1, run::get);
        assertNull(e.finding(), () -> e.finding().report());
    }

    private static Finding found(Supplier<?> run, int schedules) {
        Exploration<?> e = CheckedExecution.explore(schedules, 1, run::get);
        assertNotNull(e.finding(), "no finding in " + schedules + " schedules");
        Finding again = CheckedExecution.replay(e.finding().schedule(), run::get).finding();
        assertNotNull(again, "the schedule " + e.finding().schedule() + " did not replay the finding");
        assertEquals(e.finding().report(), again.report());
        return e.finding();
    }

    /** Each thread writes its word, the whole block syncs through a group sync, each reads its neighbour's. */
    @Test
    void aBlockGroupSyncOrdersLikeSyncThreads() {
        clean(() -> {
            MemorySegment g = ints(N);
            int[] out = new int[N];
            Kernel.launch(Dim3.of(1), Dim3.of(N), 0, ctx -> {
                int t = ctx.threadRank();
                ctx.storeInt(g, t, t);
                ctx.block().sync();
                out[t] = ctx.loadInt(g, (t + 1) % N);
            });
            return out;
        }, 40);
    }

    /** A block-sized cuda::barrier used as __syncthreads, many phases. */
    @Test
    void aBlockSizedBarrierOrdersEveryPhase() {
        clean(() -> {
            MemorySegment g = ints(N);
            int[] out = new int[N];
            Kernel.launch(Dim3.of(1), Dim3.of(N), 0, ctx -> {
                Barrier bar = ctx.shared("bar", () -> new Barrier(N));
                int t = ctx.threadRank();
                for (int r = 0; r < 4; r++) {
                    ctx.storeInt(g, t, t + r);
                    bar.arriveAndWait();
                    out[t] += ctx.loadInt(g, (t + 1) % N);
                    bar.arriveAndWait();
                }
            });
            return out;
        }, 40);
    }

    /** The primitives: each thread copies its word, commits, waits, then __syncthreads, then reads another's. */
    @Test
    void primitivesCopyWaitThenSyncThreadsIsClean() {
        clean(() -> {
            MemorySegment in = ints(N);
            for (int i = 0; i < N; i++) {
                in.setAtIndex(java.lang.foreign.ValueLayout.JAVA_INT, i, i);
            }
            int[] out = new int[N];
            Kernel.launch(Dim3.of(1), Dim3.of(N), 4L * N, ctx -> {
                MemorySegment s = ctx.dynamicShared();
                int t = ctx.threadRank();
                PipelinePrimitives.pipelineMemcpyAsync(s.asSlice(4L * t, 4), in.asSlice(4L * t, 4), 4);
                PipelinePrimitives.pipelineCommit();
                PipelinePrimitives.pipelineWaitPrior(0);
                ctx.syncThreads();
                out[t] = ctx.loadInt(s, (t + 1) % N);
                ctx.syncThreads();
                ctx.storeInt(s, t, -t);         // the word is reused after everyone read
            });
            return out;
        }, 60);
    }

    /** A role-partitioned pipeline: 1 producer stores each batch, 2 consumers read it, the stage is reused. */
    @Test
    void partitionedStoresAndReadsOverReusedStagesAreClean() {
        clean(() -> {
            int[] out = new int[2 * 6];
            Kernel.launch(Dim3.of(1), Dim3.of(3), 4L * 2, ctx -> {
                PipelineSharedState st = ctx.shared("s", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
                int t = ctx.threadRank();
                Pipeline p = Pipeline.make(ctx.block(), st, t == 0 ? PipelineRole.PRODUCER : PipelineRole.CONSUMER);
                MemorySegment s = ctx.dynamicShared();
                for (int b = 0; b < 6; b++) {
                    if (t == 0) {
                        p.producerAcquire();
                        ctx.storeInt(s, b % 2, b * 10);
                        p.producerCommit();
                    } else {
                        p.consumerWait();
                        out[2 * b + t - 1] = ctx.loadInt(s, b % 2);
                        p.consumerRelease();
                    }
                }
                p.quit();
            });
            return out;
        }, 60);
    }

    /** A count-partitioned pipeline, the same protocol. */
    @Test
    void countPartitionedStoresAndReadsOverReusedStagesAreClean() {
        clean(() -> {
            int[] out = new int[2 * 6];
            Kernel.launch(Dim3.of(1), Dim3.of(3), 4L * 2, ctx -> {
                PipelineSharedState st = ctx.shared("s", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
                int t = ctx.threadRank();
                Pipeline p = Pipeline.make(ctx.block(), st, 1);
                MemorySegment s = ctx.dynamicShared();
                for (int b = 0; b < 6; b++) {
                    if (t == 0) {
                        p.producerAcquire();
                        ctx.storeInt(s, b % 2, b * 10);
                        p.producerCommit();
                    } else {
                        p.consumerWait();
                        out[2 * b + t - 1] = ctx.loadInt(s, b % 2);
                        p.consumerRelease();
                    }
                }
                p.quit();
            });
            return out;
        }, 60);
    }

    /** Atomics from every thread, a __syncthreads, then a plain read by one: ordered, no race. */
    @Test
    void atomicsThenSyncThreadsThenAPlainReadAreClean() {
        clean(() -> {
            MemorySegment g = ints(1);
            int[] out = new int[1];
            Kernel.launch(Dim3.of(1), Dim3.of(N), 0, ctx -> {
                ctx.atomicAddInt(g, 0, 1);
                ctx.syncThreads();
                if (ctx.threadRank() == 3) {
                    out[0] = ctx.loadInt(g, 0);
                    ctx.storeInt(g, 0, 0);
                }
            });
            return out[0];
        }, 40);
    }

    /** A masked __syncwarp of lanes 0..3 orders lane 0's write before lane 3's read. */
    @Test
    void aMaskedSyncWarpOrdersItsLanes() {
        clean(() -> {
            MemorySegment g = ints(1);
            int[] out = new int[1];
            Kernel.launch(Dim3.of(1), Dim3.of(32), 0, ctx -> {
                int t = ctx.threadRank();
                if (t < 4) {
                    if (t == 0) {
                        ctx.storeInt(g, 0, 5);
                    }
                    ctx.syncWarp(0xF);
                    if (t == 3) {
                        out[0] = ctx.loadInt(g, 0);
                    }
                }
            });
            return out[0];
        }, 40);
    }

    /** A cooperative copy into a unified pipeline's stage, read by all after the wait, released, refilled. */
    @Test
    void aCooperativeCopyIntoAUnifiedPipelineReusedIsClean() {
        clean(() -> {
            MemorySegment in = ints(N * 4);
            for (int i = 0; i < N * 4; i++) {
                in.setAtIndex(java.lang.foreign.ValueLayout.JAVA_INT, i, i);
            }
            int[] out = new int[N * 4];
            Kernel.launch(Dim3.of(1), Dim3.of(N), 4L * N * 2, ctx -> {
                PipelineSharedState st = ctx.shared("s", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
                Pipeline p = Pipeline.make(ctx.block(), st);
                MemorySegment s = ctx.dynamicShared();
                int t = ctx.threadRank();
                for (int b = 0; b < 4; b++) {
                    MemorySegment stage = s.asSlice(4L * N * (b % 2), 4L * N);
                    p.producerAcquire();
                    memcpyAsync(ctx.block(), stage, in.asSlice(4L * N * b, 4L * N), 4L * N, p);
                    p.producerCommit();
                    p.consumerWait();
                    out[N * b + t] = ctx.loadInt(stage, (t + 3) % N);
                    p.consumerRelease();
                }
                p.quit();
            });
            return out;
        }, 60);
    }

    // ---------------------------------------------------------------------------------------------------------
    // Atomics misuse

    @Test
    void anAtomicOnAReadOnlySegmentFailsClearly() {
        MemorySegment g = ints(1).asReadOnly();
        KernelFailure f = assertThrows(KernelFailure.class, () ->
            Kernel.launch(Dim3.of(1), Dim3.of(1), 0, ctx -> ctx.atomicAddInt(g, 0, 1)));
        Throwable cause = f.getCause();
        assertNotNull(cause, f::toString);
        assertTrue(String.valueOf(cause.getMessage()).toLowerCase().contains("read-only"), cause::toString);
    }

    @Test
    void anAtomicOnAClosedArenaFailsClearly() {
        Arena arena = Arena.ofShared();
        MemorySegment g = arena.allocate(4, 4);
        arena.close();
        KernelFailure f = assertThrows(KernelFailure.class, () ->
            Kernel.launch(Dim3.of(1), Dim3.of(1), 0, ctx -> ctx.atomicAddInt(g, 0, 1)));
        assertNotNull(f.getCause(), f::toString);
        assertTrue(f.getCause() instanceof IllegalStateException, f.getCause()::toString);
    }

    @Test
    void anAtomicOnAReadOnlySegmentUnderCheckedExecutionIsAFailureNotARace() {
        MemorySegment g = ints(1).asReadOnly();
        Exploration<?> e = CheckedExecution.explore(5, 1, () -> {
            Kernel.launch(Dim3.of(1), Dim3.of(2), 0, ctx -> ctx.atomicAddInt(g, 0, 1));
            return 0;
        });
        assertNotNull(e.finding());
        assertEquals(FindingKind.FAILURE, e.finding().kind(), e.finding()::report);
        assertTrue(e.finding().message().toLowerCase().contains("read-only"), e.finding()::report);
    }

    @Test
    void anUnalignedAtomicFailsClearly() {
        MemorySegment g = ints(3).asSlice(2, 8);
        KernelFailure f = assertThrows(KernelFailure.class, () ->
            Kernel.launch(Dim3.of(1), Dim3.of(1), 0, ctx -> ctx.atomicCasInt(g, 0, 0, 1)));
        assertTrue(f.getCause() instanceof IllegalArgumentException, f.getCause()::toString);
        assertTrue(f.getCause().getMessage().contains("aligned"), f.getCause()::toString);
    }

    @Test
    void anAtomicOnAHeapIntArrayWorks() {
        int[] counter = new int[1];
        MemorySegment g = MemorySegment.ofArray(counter);
        Kernel.launch(Dim3.of(2), Dim3.of(N), 0, ctx -> ctx.atomicAddInt(g, 0, 1));
        assertEquals(2 * N, counter[0]);
    }

    // ---------------------------------------------------------------------------------------------------------
    // More synchronisation that must stay clean

    @Test
    void anArriveAndDropOrdersTheDroppersWritesBeforeTheWaitersReads() {
        clean(() -> {
            MemorySegment g = ints(1);
            int[] out = new int[1];
            Kernel.launch(Dim3.of(1), Dim3.of(2), 0, ctx -> {
                Barrier bar = ctx.shared("bar", () -> new Barrier(2));
                if (ctx.threadRank() == 0) {
                    ctx.storeInt(g, 0, 7);
                    bar.arriveAndDrop();
                } else {
                    bar.arriveAndWait();
                    out[0] = ctx.loadInt(g, 0);
                }
            });
            return out[0];
        }, 60);
    }

    @Test
    void aSyncWarpOfTheSecondWarpOrdersItsLanes() {
        clean(() -> {
            MemorySegment g = ints(64);
            int[] out = new int[64];
            Kernel.launch(Dim3.of(1), Dim3.of(64), 0, ctx -> {
                int t = ctx.threadRank();
                ctx.storeInt(g, t, t);
                ctx.syncWarp();
                out[t] = ctx.loadInt(g, (t & ~31) | ((t + 1) & 31));
            });
            return out;
        }, 30);
    }

    @Test
    void aCooperativeCopyCompletedThroughABarrierIsClean() {
        clean(() -> {
            MemorySegment in = ints(N);
            for (int i = 0; i < N; i++) {
                in.setAtIndex(java.lang.foreign.ValueLayout.JAVA_INT, i, i);
            }
            int[] out = new int[N];
            Kernel.launch(Dim3.of(1), Dim3.of(N), 4L * N, ctx -> {
                Barrier bar = ctx.shared("bar", () -> new Barrier(N));
                MemorySegment s = ctx.dynamicShared();
                memcpyAsync(ctx.block(), s, in, 4L * N, bar);
                bar.arriveAndWait();
                int t = ctx.threadRank();
                out[t] = ctx.loadInt(s, (t + 5) % N);
            });
            return out;
        }, 60);
    }

    @Test
    void aCopyIntoGlobalMemoryThroughAPartitionedPipelineIsClean() {
        clean(() -> {
            MemorySegment in = ints(8);
            for (int i = 0; i < 8; i++) {
                in.setAtIndex(java.lang.foreign.ValueLayout.JAVA_INT, i, i);
            }
            MemorySegment g = ints(2);
            int[] out = new int[8];
            Kernel.launch(Dim3.of(1), Dim3.of(2), 0, ctx -> {
                PipelineSharedState st = ctx.shared("s", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
                int t = ctx.threadRank();
                Pipeline p = Pipeline.make(ctx.block(), st, t == 0 ? PipelineRole.PRODUCER : PipelineRole.CONSUMER);
                for (int b = 0; b < 8; b++) {
                    if (t == 0) {
                        p.producerAcquire();
                        memcpyAsync(g.asSlice(4L * (b % 2), 4), in.asSlice(4L * b, 4), 4, p);
                        p.producerCommit();
                    } else {
                        p.consumerWait();
                        out[b] = ctx.loadInt(g, b % 2);
                        p.consumerRelease();
                    }
                }
                p.quit();
            });
            return out;
        }, 60);
    }

    @Test
    void twoLaunchesInOneRunAreOrderedByTheHost() {
        clean(() -> {
            MemorySegment g = ints(N);
            int[] out = new int[N];
            Kernel.launch(Dim3.of(1), Dim3.of(N), 0, ctx -> ctx.storeInt(g, ctx.threadRank(), ctx.threadRank()));
            Kernel.launch(Dim3.of(2), Dim3.of(N), 0, ctx -> {
                if (ctx.blockIdx().x() == 1) {
                    int t = ctx.threadRank();
                    out[t] = ctx.loadInt(g, (t + 1) % N);
                    ctx.storeInt(g, (t + 1) % N, 0);
                }
            });
            return out;
        }, 20);
    }

    @Test
    void aTileOfTheSecondWarpOrdersItsLanes() {
        clean(() -> {
            MemorySegment g = ints(64);
            int[] out = new int[64];
            Kernel.launch(Dim3.of(1), Dim3.of(64), 0, ctx -> {
                var tile = ctx.tiledPartition(8);
                int t = ctx.threadRank();
                ctx.storeInt(g, t, t);
                tile.sync();
                out[t] = ctx.loadInt(g, (t & ~7) | ((t + 3) & 7));
            });
            return out;
        }, 30);
    }

    // ---------------------------------------------------------------------------------------------------------
    // A copy reads its source: a write of the source that nothing orders with the copy races

    /** Thread 1 writes global word 0 while thread 0 copies it into shared memory, with nothing between. */
    private static int[] copyFromAWordAnotherThreadWrites(boolean sync) {
        MemorySegment g = ints(1);
        int[] out = new int[1];
        Kernel.launch(Dim3.of(1), Dim3.of(2), 4, ctx -> {
            MemorySegment s = ctx.dynamicShared();
            if (ctx.threadRank() == 1) {
                ctx.storeInt(g, 0, 5);
            }
            if (sync) {
                ctx.syncThreads();
            }
            if (ctx.threadRank() == 0) {
                PipelinePrimitives.pipelineMemcpyAsync(s, g, 4);
                PipelinePrimitives.pipelineCommit();
                PipelinePrimitives.pipelineWaitPrior(0);
                out[0] = ctx.loadInt(s, 0);
            }
        });
        return out;
    }

    @Test
    void aCopyFromAGlobalWordThatAnotherThreadWritesRaces() {
        clean(() -> copyFromAWordAnotherThreadWrites(true), 40);
        Finding f = found(() -> copyFromAWordAnotherThreadWrites(false), 40);
        assertEquals(FindingKind.DATA_RACE, f.kind(), f::report);
        assertTrue(f.message().contains("thread (1, 0, 0)"), f::report);
        assertTrue(f.message().contains("memcpy_async"), f::report);
        int first = f.message().indexOf("RaceDetectorTest.java:");
        assertTrue(first >= 0 && f.message().indexOf("RaceDetectorTest.java:", first + 1) > 0,
            "both sites with their lines: " + f.message());
    }

    /** Block 0 writes the global words that block 1 copies in: blocks are ordered by nothing. */
    @Test
    void aCopyFromGlobalWordsThatAnotherBlockWritesRaces() {
        Finding f = found(() -> {
            MemorySegment g = ints(N);
            Kernel.launch(Dim3.of(2), Dim3.of(1), 4L * N, ctx -> {
                MemorySegment s = ctx.dynamicShared();
                if (ctx.blockIdx().x() == 0) {
                    for (int i = 0; i < N; i++) {
                        ctx.storeInt(g, i, i);
                    }
                } else {
                    PipelinePrimitives.pipelineMemcpyAsync(s.asSlice(0, 16), g.asSlice(0, 16), 16);
                    PipelinePrimitives.pipelineCommit();
                    PipelinePrimitives.pipelineWaitPrior(0);
                    ctx.loadInt(s, 0);
                }
            });
            return 0;
        }, 10);
        assertEquals(FindingKind.DATA_RACE, f.kind(), f::report);
    }

    // ---------------------------------------------------------------------------------------------------------
    // Waits that succeed by polling or with a timeout order as the plain waits do

    @Test
    void aBarrierTryWaitLoopOrdersThePhase() {
        clean(() -> {
            MemorySegment g = ints(1);
            int[] out = new int[1];
            Kernel.launch(Dim3.of(1), Dim3.of(2), 0, ctx -> {
                Barrier bar = ctx.shared("bar", () -> new Barrier(2));
                if (ctx.threadRank() == 0) {
                    ctx.storeInt(g, 0, 7);
                    bar.arrive();
                } else {
                    long token = bar.arrive();
                    while (!bar.tryWait(token)) {
                        ctx.syncWarp(0x2);          // a scheduling point of its own
                    }
                    out[0] = ctx.loadInt(g, 0);
                }
            });
            return out[0];
        }, 60);
    }

    @Test
    void aBarrierTimedWaitThatSucceedsOrdersThePhase() {
        clean(() -> {
            MemorySegment g = ints(1);
            int[] out = new int[1];
            Kernel.launch(Dim3.of(1), Dim3.of(2), 0, ctx -> {
                Barrier bar = ctx.shared("bar", () -> new Barrier(2));
                if (ctx.threadRank() == 0) {
                    ctx.storeInt(g, 0, 7);
                    bar.arrive();
                } else {
                    long token = bar.arrive();
                    if (bar.tryWaitFor(token, java.time.Duration.ofHours(1))) {
                        out[0] = ctx.loadInt(g, 0);
                    }
                }
            });
            return out[0];
        }, 60);
    }

    @Test
    void aConsumerWaitForThatSucceedsOrdersTheBatch() {
        clean(() -> {
            int[] out = new int[4];
            Kernel.launch(Dim3.of(1), Dim3.of(2), 8, ctx -> {
                PipelineSharedState st = ctx.shared("s", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
                int t = ctx.threadRank();
                Pipeline p = Pipeline.make(ctx.block(), st, t == 0 ? PipelineRole.PRODUCER : PipelineRole.CONSUMER);
                MemorySegment s = ctx.dynamicShared();
                for (int b = 0; b < 4; b++) {
                    if (t == 0) {
                        p.producerAcquire();
                        ctx.storeInt(s, b % 2, b + 1);
                        p.producerCommit();
                    } else {
                        while (!p.consumerWaitFor(java.time.Duration.ofMillis(1))) {
                            Thread.onSpinWait();
                        }
                        out[b] = ctx.loadInt(s, b % 2);
                        p.consumerRelease();
                    }
                }
                p.quit();
            });
            return out;
        }, 60);
    }

    /**
     * On sm_70 and later, lanes may reach different __syncwarp() call sites and still synchronize with each other
     * (CUDA Programming Guide, __syncwarp): the half that writes syncs in one branch, the half that reads in the other.
     */
    @Test
    void syncWarpFromTwoCallSitesInDivergentBranchesOrdersTheLanes() {
        clean(() -> {
            MemorySegment g = ints(32);
            int[] out = new int[32];
            Kernel.launch(Dim3.of(1), Dim3.of(32), 0, ctx -> {
                int lane = ctx.laneId();
                if (lane < 16) {
                    ctx.storeInt(g, lane, lane + 1);
                    ctx.syncWarp();
                } else {
                    ctx.syncWarp();
                    out[lane] = ctx.loadInt(g, lane - 16);
                }
            });
            return out;
        }, 40);
    }

    /**
     * A read-only view of a Java array is a legitimate kernel input (const float* in CUDA): the accessors read it,
     * checked or not. MemorySegment.heapBase() is empty for a read-only segment.
     */
    @Test
    void aReadOnlyHeapInputIsReadThroughTheAccessorsUnderCheckedExecution() {
        Supplier<int[]> run = () -> {
            MemorySegment in = MemorySegment.ofArray(new int[] {3, 4, 5, 6}).asReadOnly();
            int[] out = new int[4];
            Kernel.launch(Dim3.of(1), Dim3.of(4), 0, ctx -> out[ctx.threadRank()] = ctx.loadInt(in, ctx.threadRank()));
            return out;
        };
        org.junit.jupiter.api.Assertions.assertArrayEquals(new int[] {3, 4, 5, 6}, run.get());
        Exploration<int[]> e = CheckedExecution.explore(10, 1, run::get);
        assertNull(e.finding(), () -> e.finding().report());
        org.junit.jupiter.api.Assertions.assertArrayEquals(new int[] {3, 4, 5, 6}, e.firstResult());
    }

    /** A barrier of count 1: thread 0 writes and arrives (completing the phase); thread 1 only waits on its parity. */
    @Test
    void aParityWaitOfAThreadThatDoesNotArriveOrdersThePhase() {
        clean(() -> {
            MemorySegment g = ints(1);
            int[] out = new int[1];
            Kernel.launch(Dim3.of(1), Dim3.of(2), 0, ctx -> {
                Barrier bar = ctx.shared("bar", () -> new Barrier(1));
                if (ctx.threadRank() == 0) {
                    ctx.storeInt(g, 0, 7);
                    bar.arrive();
                } else {
                    bar.waitParity(false);
                    out[0] = ctx.loadInt(g, 0);
                }
            });
            return out[0];
        }, 60);
    }

    /** arrive(2) by one thread completes a barrier of count 2; the other waits on the token-less parity. */
    @Test
    void anArrivalWithAnUpdateOrdersThePhase() {
        clean(() -> {
            MemorySegment g = ints(1);
            int[] out = new int[1];
            Kernel.launch(Dim3.of(1), Dim3.of(2), 0, ctx -> {
                Barrier bar = ctx.shared("bar", () -> new Barrier(2));
                if (ctx.threadRank() == 0) {
                    ctx.storeInt(g, 0, 7);
                    bar.arrive(2);
                } else {
                    bar.waitParity(false);
                    out[0] = ctx.loadInt(g, 0);
                }
            });
            return out[0];
        }, 60);
    }

    /**
     * __pipeline_arrive_on(&bar): each thread copies its word with the primitives and ties its copies to the
     * barrier; after bar.arrive_and_wait() every thread reads another's word (cuda::barrier completes the copies).
     */
    @Test
    void primitivesArriveOnABarrierOrderTheCopiesForEveryThread() {
        clean(() -> arriveOn(true), 60);
        Exploration<?> e = CheckedExecution.explore(20, 1, () -> arriveOn(false));
        assertNotNull(e.finding(), "without the tie the barrier does not cover the copies");
        assertEquals(FindingKind.POISON_READ, e.finding().kind(), e.finding()::report);
    }

    private static int[] arriveOn(boolean tie) {
        {
            MemorySegment in = ints(N);
            for (int i = 0; i < N; i++) {
                in.setAtIndex(java.lang.foreign.ValueLayout.JAVA_INT, i, i);
            }
            int[] out = new int[N];
            Kernel.launch(Dim3.of(1), Dim3.of(N), 4L * N, ctx -> {
                Barrier bar = ctx.shared("bar", () -> new Barrier(N));
                MemorySegment s = ctx.dynamicShared();
                int t = ctx.threadRank();
                PipelinePrimitives.pipelineMemcpyAsync(s.asSlice(4L * t, 4), in.asSlice(4L * t, 4), 4);
                if (tie) {
                    PipelinePrimitives.pipelineArriveOn(bar);
                }
                bar.arriveAndWait();
                out[t] = ctx.loadInt(s, (t + 1) % N);
            });
            return out;
        }
    }

    /** A 2D block of 8 x 8: a warp group sync (ctx.warp().sync()) orders the lanes of the second warp. */
    @Test
    void aWarpGroupSyncInATwoDimensionalBlockOrdersItsLanes() {
        clean(() -> {
            MemorySegment g = ints(64);
            int[] out = new int[64];
            Kernel.launch(Dim3.of(1), Dim3.of(8, 8), 0, ctx -> {
                int t = ctx.threadRank();
                ctx.storeInt(g, t, t);
                ctx.warp().sync();
                out[t] = ctx.loadInt(g, (t & ~31) | ((t + 7) & 31));
                ctx.syncThreads();
                ctx.storeInt(g, 63 - t, 0);
            });
            return out;
        }, 30);
    }

    /** The same kernel without the warp sync races, naming two lanes of one warp. */
    @Test
    void withoutTheWarpSyncTheTwoDimensionalBlockRaces() {
        Finding f = found(() -> {
            MemorySegment g = ints(64);
            int[] out = new int[64];
            Kernel.launch(Dim3.of(1), Dim3.of(8, 8), 0, ctx -> {
                int t = ctx.threadRank();
                ctx.storeInt(g, t, t);
                out[t] = ctx.loadInt(g, (t & ~31) | ((t + 7) & 31));
            });
            return out;
        }, 30);
        assertEquals(FindingKind.DATA_RACE, f.kind(), f::report);
    }

    /**
     * A barrier's completion function (cuda::barrier's CompletionFunction) runs once per phase, on the thread that
     * arrives last, before any waiter goes on: its writes through the accessors are ordered before every thread's
     * reads after the wait. Here it sums the block's words into word N.
     */
    @Test
    void aBarrierCompletionsWritesAreOrderedBeforeTheWaitersReads() {
        clean(() -> {
            MemorySegment g = ints(N + 1);
            int[] out = new int[N];
            Kernel.launch(Dim3.of(1), Dim3.of(N), 0, ctx -> {
                Barrier bar = ctx.shared("bar", () -> new Barrier(N, () -> {
                    KernelContext last = KernelContext.current("completion");
                    int sum = 0;
                    for (int i = 0; i < N; i++) {
                        sum += last.loadInt(g, i);
                    }
                    last.storeInt(g, N, sum);
                }));
                int t = ctx.threadRank();
                ctx.storeInt(g, t, t);
                bar.arriveAndWait();
                out[t] = ctx.loadInt(g, N);
            });
            return out;
        }, 60);
    }
}
