package dev.jpipeline.simt;

import static dev.jpipeline.MemcpyAsync.memcpyAsync;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Hostile review of checked execution: each test asserts what should hold; a failing one is a finding. */
@Timeout(60)
class CheckedHostileTest {

    private static MemorySegment input(int floats) {
        return IndexFloats.of(floats, 1);
    }

    /**
     * A correct CUDA kernel whose pipeline copies into global memory (a write-back / gather pipeline): after the
     * consumer releases the stage, the global destination holds the result in CUDA. Checked mode poisons it.
     */
    static float[] globalDestination() {
        int n = 8;
        MemorySegment in = input(n * 4);
        MemorySegment out = Arena.ofAuto().allocate(4L * n * 4, 16);
        Kernel.launch(Dim3.of(1), Dim3.of(n), 0, ctx -> {
            PipelineSharedState st = ctx.shared("s", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
            Pipeline p = Pipeline.make(ctx.block(), st);
            for (int b = 0; b < 4; b++) {
                p.producerAcquire();
                memcpyAsync(ctx.block(), out.asSlice(4L * n * b, 4L * n), in.asSlice(4L * n * b, 4L * n), 4L * n, p);
                p.producerCommit();
                p.consumerWait();
                p.consumerRelease();
            }
            p.quit();
        });
        return out.toArray(ValueLayout.JAVA_FLOAT);
    }

    @Test
    void globalDestinationOfAStageIsNotPoisonedAfterRelease() {
        float[] normal = globalDestination();
        Outcome<float[]> o = CheckedExecution.replay(Schedule.of(1), CheckedHostileTest::globalDestination);
        assertNull(o.finding());
        assertEquals(Arrays.toString(normal), Arrays.toString(o.result()));
    }

    /**
     * A correct CUDA kernel: every batch lands in its own region of shared memory (no stage reuse of memory);
     * after the pipeline loop and a __syncthreads, thread 0 sums all of it. Nothing overwrites the data in CUDA.
     */
    static float wholeTileReadAfterRelease() {
        int n = 8;
        int batches = 4;
        MemorySegment in = input(n * batches);
        float[] sum = new float[1];
        Kernel.launch(Dim3.of(1), Dim3.of(n), 4L * n * batches, ctx -> {
            PipelineSharedState st = ctx.shared("s", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
            Pipeline p = Pipeline.make(ctx.block(), st);
            MemorySegment sm = ctx.dynamicShared();
            for (int b = 0; b < batches; b++) {
                p.producerAcquire();
                memcpyAsync(ctx.block(), sm.asSlice(4L * n * b, 4L * n), in.asSlice(4L * n * b, 4L * n), 4L * n, p);
                p.producerCommit();
                p.consumerWait();
                ctx.loadFloat(sm, n * b + ctx.threadRank());
                p.consumerRelease();
            }
            p.quit();
            ctx.syncThreads();
            if (ctx.threadRank() == 0) {
                float s = 0;
                for (int i = 0; i < n * batches; i++) {
                    s += ctx.loadFloat(sm, i);
                }
                sum[0] = s;
            }
        });
        return sum[0];
    }

    /**
     * By design (issue 12): a stage's shared-memory destinations hold poison once every consumer released it, even
     * when no later round refills them; data needed after the release must be copied out before it.
     */
    @Test
    void sharedStageDataReadAfterTheLastReleaseIsAPoisonRead() {
        Outcome<Float> o = CheckedExecution.replay(Schedule.of(1), CheckedHostileTest::wholeTileReadAfterRelease);
        assertNotNull(o.finding());
        assertEquals(FindingKind.POISON_READ, o.finding().kind(), o.finding().report());
        assertTrue(o.finding().message().contains("released by every consumer"), o.finding().message());
    }

    /** A scheduling point inside ctx.shared's init (an accessor) while another thread asks for the same key. */
    static int accessorInSharedInit() {
        int[] out = new int[1];
        Kernel.launch(Dim3.of(1), Dim3.of(4), 0, ctx -> {
            MemorySegment m = ctx.shared("buf", () -> {
                MemorySegment a = Arena.ofAuto().allocate(16);
                ctx.storeInt(a, 0, 7);
                return a;
            });
            out[0] = ctx.loadInt(m, 0);
        });
        return out[0];
    }

    @Test
    void accessorInsideSharedInitDoesNotHangTheChecker() throws Exception {
        assertEquals(7, accessorInSharedInit());
        CompletableFuture<Exploration<Integer>> f = CompletableFuture.supplyAsync(
            () -> CheckedExecution.explore(20, 1, CheckedHostileTest::accessorInSharedInit));
        Exploration<Integer> e = f.get(20, TimeUnit.SECONDS);   // TimeoutException: the checker hangs
        assertNull(e.finding());
    }

    /** A shared __shared__ array made inside ctx.shared's init and stored into via accessor. */
    static int sharedArrayInSharedInit() {
        int[] out = new int[1];
        Kernel.launch(Dim3.of(1), Dim3.of(4), 0, ctx -> {
            MemorySegment m = ctx.shared("buf", () -> ctx.sharedArray("arr", 16));
            if (ctx.threadRank() == 0) {
                ctx.storeInt(m, 0, 9);
            }
            ctx.syncThreads();
            out[0] = ctx.loadInt(m, 0);
        });
        return out[0];
    }

    @Test
    void sharedArrayMadeInsideSharedInit() {
        assertEquals(9, sharedArrayInSharedInit());
        Exploration<Integer> e = CheckedExecution.explore(20, 1, CheckedHostileTest::sharedArrayInSharedInit);
        assertNull(e.finding(), () -> e.finding().report());
    }

    /** An out-of-range accessor index whose 4 * index wraps into range. */
    @Test
    void wrappedIndexIsAnIndexErrorNotAPoisonRead() {
        long index = (1L << 62) + 1;        // 4 * index == 4 (mod 2^64)
        Outcome<Object> o = CheckedExecution.replay(Schedule.of(1), () -> {
            Kernel.launch(Dim3.of(1), Dim3.of(1), 64, ctx -> ctx.loadFloat(ctx.dynamicShared(), index));
            return null;
        });
        assertEquals(FindingKind.FAILURE, o.finding().kind(), o.finding().report());
        assertTrue(o.finding().message().contains("IndexOutOfBounds"), o.finding().report());
    }

    /** __syncthreads from a helper, reached under a divergent branch from two places: CUDA UB (two call sites). */
    private static void barrier(KernelContext ctx) {
        ctx.syncThreads();
    }

    @Test
    void divergentBarrierThroughAHelperIsFound() {
        Exploration<Object> e = CheckedExecution.explore(20, 1, () -> {
            Kernel.launch(Dim3.of(1), Dim3.of(4), 0, ctx -> {
                if (ctx.threadRank() % 2 == 0) {
                    barrier(ctx);
                } else {
                    barrier(ctx);
                }
            });
            return null;
        });
        assertEquals(FindingKind.DIVERGENT_BARRIER, e.finding() == null ? null : e.finding().kind());
    }

    /** Same seed, same report: 20 replays in one JVM of a multi-block, multi-launch kernel with a found bug. */
    @Test
    void replayIsDeterministicAcrossManyRuns() {
        java.util.function.Supplier<Object> run = () -> {
            for (int l = 0; l < 2; l++) {
                MemorySegment in = input(64);
                Kernel.launch(Dim3.of(3), Dim3.of(8), 4L * 8 * 2, ctx -> {
                    PipelineSharedState st = ctx.shared("s", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
                    Pipeline p = Pipeline.make(ctx.block(), st);
                    MemorySegment sm = ctx.dynamicShared();
                    for (int b = 0; b < 4; b++) {
                        MemorySegment stage = sm.asSlice(32L * (b % 2), 32);
                        p.producerAcquire();
                        memcpyAsync(ctx.block(), stage, in.asSlice(32L * b, 32), 32, p);
                        p.producerCommit();
                        p.consumerWait();
                        ctx.loadFloat(stage, 7 - ctx.threadRank());
                        p.consumerRelease();
                        if (ctx.blockIdx().x() == 2 && b == 3 && ctx.threadRank() == 3) {
                            ctx.loadFloat(stage, 0);    // read after release
                        }
                    }
                    p.quit();
                });
            }
            return null;
        };
        Outcome<Object> first = CheckedExecution.replay(Schedule.of(5), run);
        for (int i = 0; i < 20; i++) {
            Outcome<Object> again = CheckedExecution.replay(Schedule.of(5), run);
            assertEquals(first.finding() == null ? null : first.finding().report(),
                again.finding() == null ? null : again.finding().report());
            assertEquals(first.decisions(), again.decisions());
        }
    }

    /**
     * Legal on sm_70+: lane 0 syncs with lane 1 (mask 0x3), then with lane 2 (mask 0x5); lane 2 may reach its
     * __syncwarp(0x5) while lane 0 still waits in 0x3. Every lane named by each mask executes that mask.
     */
    static int sequentialOverlappingMasks() {
        Kernel.launch(Dim3.of(1), Dim3.of(3), 16, ctx -> {
            MemorySegment sm = ctx.dynamicShared();
            switch (ctx.laneId()) {
                case 0 -> {
                    ctx.syncWarp(0x3);
                    ctx.syncWarp(0x5);
                }
                case 1 -> {
                    ctx.storeInt(sm, 1, 1);     // some work first
                    ctx.storeInt(sm, 2, 1);
                    ctx.syncWarp(0x3);
                }
                default -> ctx.syncWarp(0x5);
            }
        });
        return 0;
    }

    @Test
    void sequentialOverlappingWarpMasksAreNotAMaskFinding() {
        sequentialOverlappingMasks();       // a normal launch finishes
        Exploration<Integer> e = CheckedExecution.explore(100, 1, CheckedHostileTest::sequentialOverlappingMasks);
        assertNull(e.finding(), () -> e.finding().report());
    }

    /**
     * consumer_wait_until / tryWaitUntil with a deadline the run computes: the same schedule gives the same result
     * however long the runs take (the deadline is read against the run's clock: its start plus virtual time).
     */
    @Test
    void waitUntilAnInstantReplaysTheSame() throws Exception {
        java.util.function.Supplier<Boolean> run = () -> {
            java.time.Instant deadline = java.time.Instant.now().plusMillis(300);
            boolean[] got = new boolean[1];
            Kernel.launch(Dim3.of(1), Dim3.of(2), 0, ctx -> {
                dev.jpipeline.Barrier bar = ctx.shared("b", () -> new dev.jpipeline.Barrier(2));
                if (ctx.threadRank() == 0) {
                    got[0] = bar.tryWaitUntil(bar.arrive(), deadline);
                } else {
                    bar.arrive();
                }
            });
            return got[0];
        };
        Outcome<Boolean> before = CheckedExecution.replay(Schedule.of(3), run);
        Thread.sleep(400);
        Outcome<Boolean> after = CheckedExecution.replay(Schedule.of(3), run);
        assertEquals(before.result(), after.result(), "virtual time depends on the wall clock");
    }

    /** A kernel thread throws an Error (StackOverflowError): a FAILURE finding, not a hang or an escape. */
    private static int recurse(int n) {
        return recurse(n + 1) + 1;
    }

    @Test
    void errorInAKernelIsAFailureFinding() {
        Outcome<Object> o = CheckedExecution.replay(Schedule.of(1), () -> {
            Kernel.launch(Dim3.of(1), Dim3.of(4), 0, ctx -> {
                ctx.syncThreads();
                if (ctx.threadRank() == 2) {
                    recurse(0);
                }
                ctx.syncThreads();
            });
            return null;
        });
        assertEquals(FindingKind.FAILURE, o.finding().kind(), o.finding().report());
    }

    /** The launching thread is interrupted in a checked run whose kernel hangs on nothing the schedule sees. */
    @Test
    void interruptOfTheLaunchingThread() throws Exception {
        Thread me = Thread.currentThread();
        Thread t = new Thread(() -> {
            try {
                Thread.sleep(300);
            } catch (InterruptedException e) {
                return;
            }
            me.interrupt();
        });
        t.start();
        Outcome<Object> o = CheckedExecution.replay(Schedule.of(1), () -> {
            Kernel.launch(Dim3.of(1), Dim3.of(2), 0, ctx -> {
                long end = System.nanoTime() + 2_000_000_000L;
                while (System.nanoTime() < end) {
                    Thread.onSpinWait();
                }
            });
            return null;
        });
        Thread.interrupted();
        assertEquals(FindingKind.FAILURE, o.finding().kind());
    }

    /** A scheduling point (an accessor) inside a Java monitor that another kernel thread wants too. */
    static int accessorInsideSynchronized() {
        Object lock = new Object();
        int[] out = new int[1];
        Kernel.launch(Dim3.of(1), Dim3.of(2), 16, ctx -> {
            synchronized (lock) {
                ctx.storeInt(ctx.dynamicShared(), ctx.threadRank(), 1);
                out[0]++;
            }
        });
        return out[0];
    }

    @Test
    void accessorInsideAMonitorDoesNotHangTheChecker() throws Exception {
        assertEquals(2, accessorInsideSynchronized());
        CompletableFuture<Exploration<Integer>> f = CompletableFuture.supplyAsync(
            () -> CheckedExecution.explore(20, 1, CheckedHostileTest::accessorInsideSynchronized));
        Exploration<Integer> e = f.get(20, TimeUnit.SECONDS);   // TimeoutException: the checker hangs
        assertNotNull(e.finding(), "a lock held across a scheduling point deadlocks one-at-a-time execution");
        assertEquals(FindingKind.HANG, e.finding().kind(), e.finding().report());
        assertTrue(e.finding().message().contains("waited outside jpipeline"), e.finding().message());
    }
}
