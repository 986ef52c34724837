package dev.jpipeline.simt;

import static dev.jpipeline.MemcpyAsync.memcpyAsync;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Arrays;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Checked execution of kernels: each bug class is found under some schedule of the first 100, its schedule replays
 * the same finding, correct kernels run clean with identical results, and normal launches are unaffected.
 */
@Timeout(120)
class CheckedExecutionTest {

    private static final int N = 8;

    private static MemorySegment input(int floats) {
        return IndexFloats.of(floats, 0);
    }

    /** Each thread copies its own float of each batch into a two-stage pipeline and reads its mirror's float. */
    static float[] mirror(boolean waits, boolean readAfterRelease) {
        MemorySegment in = input(N * 4);
        float[] out = new float[N * 4];
        Kernel.launch(Dim3.of(1), Dim3.of(N), 4L * N * 2, ctx -> {
            PipelineSharedState st = ctx.shared("s", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
            Pipeline p = Pipeline.make(ctx.block(), st);
            MemorySegment sm = ctx.dynamicShared();
            int t = ctx.threadRank();
            for (int b = 0; b < 4; b++) {
                MemorySegment stage = sm.asSlice(4L * N * (b % 2), 4L * N);
                p.producerAcquire();
                memcpyAsync(ctx.block(), stage, in.asSlice(4L * N * b, 4L * N), 4L * N, p);
                p.producerCommit();
                if (waits) {
                    p.consumerWait();
                }
                if (readAfterRelease) {
                    p.consumerRelease();
                }
                out[b * N + t] = ctx.loadFloat(stage, N - 1 - t);
                if (!waits) {
                    p.consumerWait();
                }
                if (!readAfterRelease) {
                    p.consumerRelease();
                }
            }
            p.quit();
        });
        return out;
    }

    private static Supplier<String> result(Supplier<float[]> run) {
        return () -> Arrays.toString(run.get());
    }

    private static Finding found(Supplier<?> run, FindingKind kind) {
        Exploration<?> e = CheckedExecution.explore(100, 1, run::get);
        assertNotNull(e.finding(), "no finding in 100 schedules");
        assertEquals(kind, e.finding().kind(), e.finding().report());
        Finding again = CheckedExecution.replay(e.finding().schedule(), run::get).finding();
        Finding third = CheckedExecution.replay(e.finding().schedule(), run::get).finding();
        assertNotNull(again, "the schedule " + e.finding().schedule() + " did not replay the finding");
        assertEquals(e.finding().report(), again.report());
        assertEquals(again.report(), third.report());
        return e.finding();
    }

    @Test
    void aCorrectPipelineRunsCleanWithIdenticalResults() {
        Exploration<String> e = CheckedExecution.explore(100, 1, result(() -> mirror(true, false)));
        assertNull(e.finding(), () -> e.finding().report());
        assertEquals(100, e.schedulesRun());
        assertTrue(e.identical());
        assertTrue(e.decisions() > 100, "schedules make decisions: " + e.decisions());
    }

    @Test
    void aMissingConsumerWaitReadsACopyThatHasNotLanded() {
        Exploration<String> e = CheckedExecution.explore(100, 1, result(() -> mirror(false, false)));
        assertNotNull(e.finding());
        // where the copy has landed before the early read, the read races with it (DATA_RACE, CheckedRaceTest);
        // round-robin with copies landing only when nothing else can run reads it before it lands
        Finding f = CheckedExecution.replay(Schedule.parse(e.finding().schedule().seed() + "/0"),
            result(() -> mirror(false, false))).finding();
        assertNotNull(f);
        assertEquals(FindingKind.POISON_READ, f.kind(), f.report());
        assertTrue(f.message().contains("has not landed"), f.message());
        assertTrue(f.message().matches("(?s)thread \\(\\d+, 0, 0\\) of block \\(0, 0, 0\\) read 4 bytes of dynamic "
            + "shared memory at offset \\d+.*"), f.message());
        assertEquals(f.report(), CheckedExecution.replay(f.schedule(), result(() -> mirror(false, false)))
            .finding().report());
        assertFalse(f.trace().isEmpty());
    }

    @Test
    void aReadAfterTheLastReleaseReadsPoison() {
        Finding f = found(result(() -> mirror(true, true)), FindingKind.POISON_READ);
        assertTrue(f.message().contains("released by every consumer") || f.message().contains("has not landed"),
            f.message());
    }

    @Test
    void aMissingSyncThreadsReadsWhatNobodyWroteYet() {
        Supplier<Float> run = () -> {
            float[] out = new float[N];
            Kernel.launch(Dim3.of(1), Dim3.of(N), 4L * N, ctx -> {
                int t = ctx.threadRank();
                ctx.storeFloat(ctx.dynamicShared(), t, t);
                // __syncthreads() missing
                out[t] = ctx.loadFloat(ctx.dynamicShared(), (t + 1) % N);
            });
            return out[0];
        };
        Finding f = found(run, FindingKind.POISON_READ);
        assertTrue(f.message().contains("never written"), f.message());
    }

    @Test
    void withTheSyncThreadsTheSameKernelRunsClean() {
        Exploration<String> e = CheckedExecution.explore(60, 1, result(() -> {
            float[] out = new float[N];
            Kernel.launch(Dim3.of(1), Dim3.of(N), 4L * N, ctx -> {
                int t = ctx.threadRank();
                ctx.storeFloat(ctx.dynamicShared(), t, t);
                ctx.syncThreads();
                out[t] = ctx.loadFloat(ctx.dynamicShared(), (t + 1) % N);
            });
            return out;
        }));
        assertNull(e.finding(), () -> e.finding().report());
    }

    @Test
    void syncThreadsFromTwoCallSitesIsADivergentBarrier() {
        Finding f = found(() -> {
            Kernel.launch(Dim3.of(1), Dim3.of(N), 0, ctx -> {
                if (ctx.threadRank() % 2 == 0) {
                    ctx.syncThreads();
                } else {
                    ctx.syncThreads();
                }
            });
            return 0;
        }, FindingKind.DIVERGENT_BARRIER);
        assertTrue(f.message().contains("CheckedExecutionTest"), f.message());
    }

    @Test
    void aThreadThatLeavesBeforeTheBarrierIsAPartialBarrier() {
        Finding f = found(() -> {
            Kernel.launch(Dim3.of(1), Dim3.of(N), 0, ctx -> {
                if (ctx.threadRank() == 3) {
                    return;
                }
                ctx.syncThreads();
            });
            return 0;
        }, FindingKind.PARTIAL_BARRIER);
        assertTrue(f.message().contains("(3, 0, 0)"), f.message());
    }

    @Test
    void lanesThatDisagreeOnTheSyncWarpMaskAreReported() {
        Finding f = found(() -> {
            Kernel.launch(Dim3.of(1), Dim3.of(32), 0, ctx -> {
                int lane = ctx.laneId();
                if (lane == 0) {
                    ctx.syncWarp(0b11);             // lane 0 waits for lane 1 only
                } else if (lane < 4) {
                    ctx.syncWarp(0b1111);           // lane 1 waits for lanes 0-3
                }
            });
            return 0;
        }, FindingKind.WARP_MASK);
        assertTrue(f.message().contains("__syncwarp(0x0000000"), f.message());
    }

    @Test
    void aLaneThatLeavesAfterAnotherMaskIsAMaskDisagreement() {
        Finding f = found(() -> {
            Kernel.launch(Dim3.of(1), Dim3.of(32), 0, ctx -> {
                // the low half syncs among itself and leaves; the high half waits for every lane
                ctx.syncWarp(ctx.laneId() < 16 ? 0x0000ffff : 0xffffffff);
            });
            return 0;
        }, FindingKind.WARP_MASK);
        assertTrue(f.message().contains("0x0000ffff") && f.message().contains("left after"), f.message());
    }

    @Test
    void aDeadlockIsReportedAtOnceAsAHang() {
        long start = System.nanoTime();
        Finding f = found(() -> {
            Kernel.launch(Dim3.of(1), Dim3.of(2), 0, ctx -> {
                PipelineSharedState st = ctx.shared("s", () -> PipelineSharedState.create(ThreadScope.BLOCK, 1));
                Pipeline p = Pipeline.make(ctx.block(), st, 1);
                if (ctx.threadRank() == 0) {
                    ctx.syncThreads();              // waits for the consumer, which waits for this producer
                    p.producerAcquire();
                    p.producerCommit();
                } else {
                    p.consumerWait();
                    ctx.syncThreads();
                }
            });
            return 0;
        }, FindingKind.HANG);
        assertTrue(f.message().contains("hung"), f.message());
        assertTrue(f.message().contains("__syncthreads"), f.message());
        assertTrue(System.nanoTime() - start < Duration.ofSeconds(30).toNanos());
    }

    @Test
    void primitivesWaitPriorTooLargeReadsAPendingCopy() {
        Finding f = found(() -> {
            MemorySegment in = input(2 * N);
            float[] out = new float[N];
            Kernel.launch(Dim3.of(1), Dim3.of(N), 4L * 2 * N, ctx -> {
                int t = ctx.threadRank();
                MemorySegment sm = ctx.dynamicShared();
                for (int b = 0; b < 2; b++) {
                    PipelinePrimitives.pipelineMemcpyAsync(sm.asSlice(4L * (b * N + t), 4),
                        in.asSlice(4L * (b * N + t), 4), 4);
                    PipelinePrimitives.pipelineCommit();
                }
                PipelinePrimitives.pipelineWaitPrior(2);    // should be 1 to cover batch 0
                out[t] = ctx.loadFloat(sm, t);
            });
            return Arrays.toString(out);
        }, FindingKind.POISON_READ);
        assertTrue(f.message().contains("has not landed"), f.message());
    }

    @Test
    void aPrimitiveCopyThatFailsWhenItLandsFailsTheLaunch() {
        Outcome<Object> o = CheckedExecution.replay(Schedule.of(1), () -> {
            Kernel.launch(Dim3.of(1), Dim3.of(1), 16, ctx -> {
                Arena arena = Arena.ofShared();
                MemorySegment src = arena.allocate(4, 4);
                PipelinePrimitives.pipelineMemcpyAsync(ctx.dynamicShared().asSlice(0, 4), src, 4);
                PipelinePrimitives.pipelineCommit();
                arena.close();                      // the copy has not landed yet: its source is gone
                PipelinePrimitives.pipelineWaitPrior(0);
            });
            return null;
        });
        assertNotNull(o.finding());
        assertEquals(FindingKind.FAILURE, o.finding().kind());
        assertTrue(o.finding().message().contains("failed when it landed"), o.finding().message());
    }

    @Test
    void timedWaitsUseTheVirtualClock() {
        // the consumer polls while the producer is slow: each poll times out only when nothing else can run
        Supplier<Integer> run = () -> {
            int[] timeouts = new int[1];
            Kernel.launch(Dim3.of(1), Dim3.of(2), 4, ctx -> {
                PipelineSharedState st = ctx.shared("s", () -> PipelineSharedState.create(ThreadScope.BLOCK, 1));
                Pipeline p = Pipeline.make(ctx.block(), st, 1);
                if (ctx.threadRank() == 0) {
                    p.producerAcquire();
                    p.producerCommit();
                } else {
                    while (!p.consumerWaitFor(Duration.ofHours(1))) {
                        timeouts[0]++;
                    }
                    p.consumerRelease();
                }
                p.quit();
            });
            return timeouts[0];
        };
        long start = System.nanoTime();
        Exploration<Integer> e = CheckedExecution.explore(50, 7, run);
        assertNull(e.finding(), () -> e.finding().report());
        assertEquals(0, e.firstResult(), "a wait times out only when nothing else can run");
        assertTrue(System.nanoTime() - start < Duration.ofSeconds(60).toNanos());
    }

    @Test
    void aLongVirtualTimeoutPassesAtOnceWhenNothingElseCanRun() {
        long start = System.nanoTime();
        Outcome<Boolean> o = CheckedExecution.replay(Schedule.of(3), () -> {
            boolean[] got = new boolean[1];
            Kernel.launch(Dim3.of(1), Dim3.of(2), 0, ctx -> {
                PipelineSharedState st = ctx.shared("s", () -> PipelineSharedState.create(ThreadScope.BLOCK, 1));
                Pipeline p = Pipeline.make(ctx.block(), st, 1);
                if (ctx.threadRank() == 1) {
                    got[0] = p.consumerWaitFor(Duration.ofDays(365));
                }
                ctx.syncThreads();                  // the producer commits only after the consumer's wait gave up
                if (ctx.threadRank() == 0) {
                    p.producerAcquire();
                    p.producerCommit();
                } else {
                    p.consumerWait();
                    p.consumerRelease();
                }
                p.quit();
            });
            return got[0];
        });
        assertNull(o.finding(), () -> o.finding().report());
        assertEquals(Boolean.FALSE, o.result());
        assertTrue(System.nanoTime() - start < Duration.ofSeconds(30).toNanos());
    }

    @Test
    void differentResultsAcrossSchedulesAreAFinding() {
        Exploration<Integer> e = CheckedExecution.explore(100, 1, () -> {
            int[] first = {-1};
            Kernel.launch(Dim3.of(1), Dim3.of(4), 0, ctx -> {
                ctx.syncThreads();                  // a scheduling point: who gets here first varies
                synchronized (first) {
                    if (first[0] < 0) {
                        first[0] = ctx.threadRank();
                    }
                }
            });
            return first[0];
        });
        assertNotNull(e.finding());
        assertEquals(FindingKind.RESULT_DIFFERS, e.finding().kind());
        assertFalse(e.identical());
    }

    @Test
    void cooperativeLaunchesAreRefusedUnderCheckedExecution() {
        Outcome<Object> o = CheckedExecution.replay(Schedule.of(1), () -> {
            Kernel.launchCooperative(Dim3.of(2), Dim3.of(2), 0, ctx -> { });
            return null;
        });
        assertEquals(FindingKind.FAILURE, o.finding().kind());
        assertTrue(o.finding().message().contains("cooperative"), o.finding().message());
    }

    @Test
    void runsDoNotNestAndSchedulesParse() {
        Outcome<Object> nested = CheckedExecution.replay(Schedule.of(1),
            () -> CheckedExecution.replay(Schedule.of(2), () -> 0));
        assertTrue(nested.finding().message().contains("do not nest"), nested.finding().message());
        assertEquals(new Schedule(12, 5), Schedule.parse("12/5"));
        assertEquals(Schedule.of(-3), Schedule.parse("-3"));
        assertEquals("12/5", new Schedule(12, 5).toString());
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class, () -> Schedule.parse("x/1"));
        assertTrue(bad.getMessage().contains("'x/1'"), bad.getMessage());
        assertThrows(IllegalArgumentException.class, () -> CheckedExecution.explore(0, 1, () -> 0));
    }

    @Test
    void arrayResultsCompareByContent() {
        Exploration<float[]> e = CheckedExecution.explore(20, 1, () -> mirror(true, false));
        assertNull(e.finding(), () -> e.finding().report());
    }

    @Test
    void onlyTheRunsOwnThreadLaunchesChecked() throws Exception {
        // a fork that inherits the run's binding (StructuredTaskScope) must not launch under the same schedule
        CheckedSession session = new CheckedSession(Schedule.of(1));
        Throwable[] thrown = new Throwable[1];
        Thread fork = Thread.ofPlatform().start(() -> {
            try {
                ScopedValue.where(CheckedExecution.SESSION, session)
                    .run(() -> Kernel.launch(Dim3.of(1), Dim3.of(1), 0, ctx -> { }));
            } catch (Throwable t) {
                thrown[0] = t;
            }
        });
        fork.join(10_000);
        assertInstanceOf(IllegalStateException.class, thrown[0]);
        assertTrue(thrown[0].getMessage().contains("must be made by the thread that runs it"), thrown[0].getMessage());
    }

    @Test
    void aNormalLaunchIsNotChecked() {
        float[] out = new float[N];
        Kernel.launch(Dim3.of(1), Dim3.of(N), 4L * N, ctx -> {
            out[ctx.threadRank()] = ctx.loadFloat(ctx.dynamicShared(), ctx.threadRank());   // no poison, no check
        });
        assertFalse(CheckedExecution.isChecking());
        assertFalse(Float.isNaN(out[0]) && Float.floatToRawIntBits(out[0]) == 0xFFA5A5A5);
    }

    /** A helper that syncs, for the call-site tests below. */
    private static void barrierHelper(KernelContext ctx) {
        ctx.syncThreads();
    }

    private static final java.lang.invoke.MethodHandle BARRIER_HELPER;

    static {
        try {
            BARRIER_HELPER = java.lang.invoke.MethodHandles.lookup().findStatic(CheckedExecutionTest.class,
                "barrierHelper", java.lang.invoke.MethodType.methodType(void.class, KernelContext.class));
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * The helper reached through a MethodHandle from two places under a divergent branch: two call sites, as
     * through a plain call (divergentBarrierThroughAHelperIsFound). Found before 337e679; since callSite shows
     * hidden frames, the MethodHandle's LambdaForm frames (java.lang.invoke, "runtime") end the walk at the helper,
     * so both branches look like one site and the run is clean.
     */
    @Test
    void syncThreadsThroughAMethodHandleFromTwoCallSitesIsADivergentBarrier() {
        Finding f = found(() -> {
            Kernel.launch(Dim3.of(1), Dim3.of(N), 0, ctx -> {
                try {
                    if (ctx.threadRank() % 2 == 0) {
                        BARRIER_HELPER.invokeExact(ctx);
                    } else {
                        BARRIER_HELPER.invokeExact(ctx);
                    }
                } catch (Throwable t) {
                    throw new IllegalStateException(t);
                }
            });
            return 0;
        }, FindingKind.DIVERGENT_BARRIER);
        assertTrue(f.message().contains("CheckedExecutionTest"), f.message());
    }

    /**
     * One syncing lambda run by a JDK method (Optional.ifPresent) from two places under a divergent branch: two call
     * sites. The walk stops at the first java.* frame above the kernel's, so both look like the lambda alone.
     */
    @Test
    void syncThreadsInALambdaRunByAJdkMethodFromTwoCallSitesIsADivergentBarrier() {
        found(() -> {
            Kernel.launch(Dim3.of(1), Dim3.of(N), 0, ctx -> {
                java.util.function.Consumer<KernelContext> sync = c -> c.syncThreads();
                if (ctx.threadRank() % 2 == 0) {
                    java.util.Optional.of(ctx).ifPresent(sync);
                } else {
                    java.util.Optional.of(ctx).ifPresent(sync);
                }
            });
            return 0;
        }, FindingKind.DIVERGENT_BARRIER);
    }

    /**
     * One __syncthreads in a finally block, which every thread reaches (half of them by an early return): one
     * site in the source, reached by all threads, as a GPU's single barrier instruction would be. javac copies a
     * finally block into each exit, so the two exits' copies have different bytecode indexes, and the check calls
     * them two call sites (its message names the same line twice).
     */
    @Test
    @org.junit.jupiter.api.Disabled("known limitation (docs/checking.md, \"Limits\"): a site is a "
        + "bytecode index, and javac copies a finally block into each exit")
    void aSyncThreadsInAFinallyBlockThatEveryThreadReachesIsNoFinding() {
        float[] out = new float[N];
        Exploration<Object> e = CheckedExecution.explore(30, 1, () -> {
            Kernel.launch(Dim3.of(1), Dim3.of(N), 0, ctx -> {
                int t = ctx.threadRank();
                try {
                    if (t % 2 == 0) {
                        return;
                    }
                    out[t] = t;
                } finally {
                    ctx.syncThreads();
                }
            });
            return 0;
        });
        assertNull(e.finding(), () -> e.finding().report());
    }

    /**
     * Two __syncthreads on one line under a divergent branch: two sites, found; but the finding must tell them
     * apart, and today it names "X.java:N" for both (the key has the bytecode index, the text only the line).
     */
    @Test
    void twoSyncThreadsOnOneLineAreNamedApartInTheFinding() {
        Finding f = found(() -> {
            Kernel.launch(Dim3.of(1), Dim3.of(N), 0, ctx -> {
                if (ctx.threadRank() % 2 == 0) ctx.syncThreads(); else ctx.syncThreads();    // one line
            });
            return 0;
        }, FindingKind.DIVERGENT_BARRIER);
        java.util.regex.Matcher m = java.util.regex.Pattern.compile(
            "reached __syncthreads at (.*), but .* waits in __syncthreads at (.*): a barrier").matcher(f.message());
        assertTrue(m.find(), f.message());
        assertFalse(m.group(1).equals(m.group(2)), "both sites read the same: " + f.message());
    }
}
