package dev.jpipeline.simt;

import static dev.jpipeline.MemcpyAsync.memcpyAsync;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.Barrier;
import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineRole;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Checked execution's DATA_RACE finding, rule by rule: a race is found on shared memory, on global memory and
 * between blocks; accesses ordered by __syncthreads, a __syncwarp of both lanes, a pipeline's commit and wait or
 * release and acquire, a barrier phase or a landed copy are not reported; atomics race with plain accesses only;
 * the message names both threads and both sites with their lines; a replay gives the same finding.
 */
@Timeout(120)
class CheckedRaceTest {

    private static final int N = 8;

    /**
     * The line of the caller (a compiled kernel's step too: its frame is hidden): a test notes the line of an access
     * written on the same line.
     */
    private static int line() {
        return StackWalker.getInstance(StackWalker.Option.SHOW_HIDDEN_FRAMES).walk(f -> f.skip(1).findFirst().orElseThrow()).getLineNumber();
    }

    private static MemorySegment ints(int n) {
        return Arena.ofAuto().allocate(4L * n, 16);
    }

    private static Finding found(Supplier<?> run, int schedules) {
        Exploration<?> e = CheckedExecution.explore(schedules, 1, run::get);
        assertNotNull(e.finding(), "no finding in " + schedules + " schedules");
        assertEquals(FindingKind.DATA_RACE, e.finding().kind(), e.finding().report());
        Finding again = CheckedExecution.replay(e.finding().schedule(), run::get).finding();
        assertNotNull(again, "the schedule " + e.finding().schedule() + " did not replay the finding");
        assertEquals(e.finding().report(), again.report());
        return e.finding();
    }

    private static void clean(Supplier<?> run, int schedules) {
        Exploration<?> e = CheckedExecution.explore(schedules, 1, run::get);
        assertNull(e.finding(), () -> e.finding().report());
        assertEquals(schedules, e.schedulesRun());
    }

    // ---------------------------------------------------------------------------------------------------------
    // Shared memory, __syncthreads

    private static final int[] SHARED_LINES = new int[2];

    /** Thread 0 fills the words first, so that no read finds poison; then each thread writes its word and reads the
     * next one's, with or without a __syncthreads between. */
    private static int[] neighbours(boolean sync) {
        int[] out = new int[N];
        Kernel.launch(Dim3.of(1), Dim3.of(N), 4L * N, ctx -> {
            MemorySegment s = ctx.dynamicShared();
            int t = ctx.threadRank();
            if (t == 0) {
                for (int i = 0; i < N; i++) {
                    ctx.storeInt(s, i, -1);
                }
            }
            ctx.syncThreads();
            ctx.storeInt(s, t, t); SHARED_LINES[0] = line();
            if (sync) {
                ctx.syncThreads();
            }
            out[t] = ctx.loadInt(s, (t + 1) % N); SHARED_LINES[1] = line();
        });
        return out;
    }

    @Test
    void aReadOfAnotherThreadsSharedWordWithoutSyncThreadsIsARaceNamingBothThreadsAndBothLines() {
        Finding f = found(() -> Arrays.toString(neighbours(false)), 20);
        String m = f.message();
        assertTrue(m.matches("thread \\(\\d, 0, 0\\) of block \\(0, 0, 0\\) (reads|writes) word \\d \\(byte offset "
            + "\\d+\\) of dynamic shared memory at CheckedRaceTest\\.lambda\\$[\\w$]+\\(CheckedRaceTest\\.java:\\d+\\)"
            + ", and thread \\(\\d, 0, 0\\) of block \\(0, 0, 0\\) (read|wrote) it at .*: nothing orders the two "
            + "accesses.*"), m);
        assertTrue(m.contains("(CheckedRaceTest.java:" + SHARED_LINES[0] + ")"), "the store's line: " + m);
        assertTrue(m.contains("(CheckedRaceTest.java:" + SHARED_LINES[1] + ")"), "the load's line: " + m);
    }

    @Test
    void withTheSyncThreadsNoRaceIsReported() {
        clean(() -> Arrays.toString(neighbours(true)), 100);
    }

    // ---------------------------------------------------------------------------------------------------------
    // Global memory, blocks

    @Test
    void writesOfOneGlobalWordByTwoThreadsOfABlockRace() {
        MemorySegment g = ints(1);
        Finding f = found(() -> {
            Kernel.launch(Dim3.of(1), Dim3.of(2), 0, ctx -> ctx.storeInt(g, 0, ctx.threadRank()));
            return 0;
        }, 5);
        assertTrue(f.message().contains("writes word 0 (byte offset 0) of global memory (element 0 of the 4-byte "
            + "segment accessed)"), f.message());
        assertTrue(f.message().contains(" wrote it at "), f.message());
        assertEquals("1/0", f.schedule().toString(), "round-robin alone shows it");
    }

    @Test
    void threadsOfDifferentBlocksRaceOnGlobalMemoryThoughTheirBlocksRunOneAfterAnother() {
        Finding f = found(() -> {
            MemorySegment g = ints(1);
            Kernel.launch(Dim3.of(2), Dim3.of(1), 0, ctx -> ctx.storeInt(g, 0, ctx.loadInt(g, 0) + 1));
            return g.get(ValueLayout.JAVA_INT, 0);
        }, 5);
        assertTrue(f.message().startsWith("thread (0, 0, 0) of block (1, 0, 0) reads word 0"), f.message());
        assertTrue(f.message().contains("thread (0, 0, 0) of block (0, 0, 0) wrote it at"), f.message());
        assertTrue(f.message().contains("threads of different blocks are ordered by nothing"), f.message());
    }

    @Test
    void blocksThatReadTheSameGlobalWordsAndWriteTheirOwnDoNotRace() {
        clean(() -> {
            MemorySegment in = ints(N);
            MemorySegment out = ints(4 * N);
            Kernel.launch(Dim3.of(4), Dim3.of(N), 0, ctx -> {
                int t = ctx.threadRank();
                ctx.storeInt(out, ctx.globalRank(), ctx.loadInt(in, t) + ctx.loadInt(in, (t + 1) % N));
            });
            return Arrays.toString(out.toArray(ValueLayout.JAVA_INT));
        }, 30);
    }

    // ---------------------------------------------------------------------------------------------------------
    // __syncwarp

    /** Lane 0 writes a global word; lanes 0 and 1 sync with mask 0x3; then lane {@code reader} reads it. */
    private static void warpHandOff(int reader) {
        MemorySegment g = ints(1);
        Kernel.launch(Dim3.of(1), Dim3.of(32), 0, ctx -> {
            int lane = ctx.laneId();
            if (lane == 0) {
                ctx.storeInt(g, 0, 42);
            }
            if (lane < 2) {
                ctx.syncWarp(0x3);
            }
            if (lane == reader) {
                ctx.loadInt(g, 0);
            }
        });
    }

    @Test
    void aSyncWarpOrdersTheLanesThatTookPart() {
        clean(() -> {
            warpHandOff(1);
            return 0;
        }, 100);
    }

    @Test
    void aLaneOutsideTheSyncWarpMaskIsNotOrdered() {
        Finding f = found(() -> {
            warpHandOff(2);
            return 0;
        }, 20);
        assertTrue(f.message().contains("thread (2, 0, 0) of block (0, 0, 0)"), f.message());
        assertTrue(f.message().contains("thread (0, 0, 0) of block (0, 0, 0)"), f.message());
    }

    @Test
    void aFullSyncWarpOrdersEveryLane() {
        clean(() -> {
            MemorySegment g = ints(32);
            Kernel.launch(Dim3.of(1), Dim3.of(32), 0, ctx -> {
                ctx.storeInt(g, ctx.laneId(), ctx.laneId());
                ctx.syncWarp();
                ctx.loadInt(g, 31 - ctx.laneId());
            });
            return 0;
        }, 60);
    }

    // ---------------------------------------------------------------------------------------------------------
    // Pipelines

    /**
     * Thread 0 produces 6 batches into a two-stage pipeline with plain stores, thread 1 consumes them into global
     * memory; with {@code waits} false the consumer reads its stage before consumer_wait.
     */
    private static int[] producerConsumer(boolean waits) {
        int batches = 6;
        MemorySegment out = ints(batches);
        Kernel.launch(Dim3.of(1), Dim3.of(2), 4L * 2, ctx -> {
            MemorySegment stages = ctx.dynamicShared();
            int t = ctx.threadRank();
            if (t == 0) {
                ctx.storeInt(stages, 0, -1);        // data, not poison, in both stages from the start
                ctx.storeInt(stages, 1, -1);
            }
            ctx.syncThreads();
            PipelineSharedState state = ctx.shared("s", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
            Pipeline p = Pipeline.make(ctx.block(), state, t == 0 ? PipelineRole.PRODUCER : PipelineRole.CONSUMER);
            for (int b = 0; b < batches; b++) {
                if (t == 0) {
                    p.producerAcquire();
                    ctx.storeInt(stages, b % 2, 10 * b);
                    p.producerCommit();
                } else {
                    int v;
                    if (waits) {
                        p.consumerWait();
                        v = ctx.loadInt(stages, b % 2);
                    } else {
                        v = ctx.loadInt(stages, b % 2);
                        p.consumerWait();
                    }
                    ctx.storeInt(out, b, v);
                    p.consumerRelease();
                }
            }
            p.quit();
        });
        return out.toArray(ValueLayout.JAVA_INT);
    }

    @Test
    void commitThenWaitAndReleaseThenAcquireOrderAPipelinesStages() {
        clean(() -> Arrays.toString(producerConsumer(true)), 150);
    }

    @Test
    void aStageReadBeforeConsumerWaitRacesWithTheProducersStore() {
        Finding f = found(() -> Arrays.toString(producerConsumer(false)), 50);
        assertTrue(f.message().contains("of dynamic shared memory"), f.message());
    }

    @Test
    void aCopyThatLandedIsOrderedBeforeTheWaitThatCompletesIt() {
        clean(() -> {
            MemorySegment in = ints(4 * N);
            for (int i = 0; i < 4 * N; i++) {
                in.setAtIndex(ValueLayout.JAVA_INT, i, i);
            }
            MemorySegment out = ints(4 * N);
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
                    p.consumerWait();
                    ctx.storeInt(out, b * N + t, ctx.loadInt(stage, N - 1 - t));
                    p.consumerRelease();
                }
                p.quit();
            });
            return Arrays.toString(out.toArray(ValueLayout.JAVA_INT));
        }, 100);
    }

    @Test
    void aStoreIntoAnotherThreadsCopyDestinationRacesWithTheCopyWhicheverComesFirst() {
        MemorySegment in = ints(1);
        Finding f = found(() -> {
            Kernel.launch(Dim3.of(1), Dim3.of(2), 4, ctx -> {
                MemorySegment s = ctx.dynamicShared();
                if (ctx.threadRank() == 0) {
                    Pipeline p = Pipeline.make();
                    p.producerAcquire();
                    memcpyAsync(s, in, 4, p); COPY_LINE[0] = line();
                    p.producerCommit();
                    p.consumerWait();
                    p.consumerRelease();
                } else {
                    ctx.storeInt(s, 0, 5); COPY_LINE[1] = line();
                }
            });
            return 0;
        }, 30);
        String m = f.message();
        assertTrue(m.contains("a copy issued by thread (0, 0, 0) of block (0, 0, 0)"), m);
        assertTrue(m.contains("thread (1, 0, 0) of block (0, 0, 0)"), m);
        assertTrue(m.contains("(CheckedRaceTest.java:" + COPY_LINE[0] + ")"), "the copy's line: " + m);
        assertTrue(m.contains("(CheckedRaceTest.java:" + COPY_LINE[1] + ")"), "the store's line: " + m);
    }

    private static final int[] COPY_LINE = new int[2];

    // ---------------------------------------------------------------------------------------------------------
    // cuda::barrier

    /** Thread 0 writes a word and arrives; thread 1 arrives and, if {@code waits}, waits for the phase; then reads. */
    private static void barrierHandOff(boolean waits) {
        MemorySegment g = ints(1);
        Kernel.launch(Dim3.of(1), Dim3.of(2), 0, ctx -> {
            Barrier bar = ctx.shared("bar", () -> new Barrier(2));
            if (ctx.threadRank() == 0) {
                ctx.storeInt(g, 0, 7);
                bar.arrive();
            } else {
                long token = bar.arrive();
                if (waits) {
                    bar.await(token);
                }
                ctx.loadInt(g, 0);
            }
        });
    }

    @Test
    void aBarrierPhaseOrdersTheArrivalsBeforeTheWaits() {
        clean(() -> {
            barrierHandOff(true);
            return 0;
        }, 100);
    }

    @Test
    void aReadWithoutWaitingForThePhaseRaces() {
        found(() -> {
            barrierHandOff(false);
            return 0;
        }, 50);
    }

    // ---------------------------------------------------------------------------------------------------------
    // Atomics

    @Test
    void atomicsOfManyThreadsOnOneWordDoNotRace() {
        clean(() -> {
            MemorySegment g = ints(1);
            Kernel.launch(Dim3.of(2), Dim3.of(N), 0, ctx -> {
                ctx.atomicAddInt(g, 0, 1);
                ctx.atomicCasInt(g, 0, -5, 0);
            });
            return g.get(ValueLayout.JAVA_INT, 0);
        }, 60);
    }

    @Test
    void aPlainReadOfAWordThatOtherThreadsUpdateAtomicallyRaces() {
        Finding f = found(() -> {
            MemorySegment g = ints(1);
            Kernel.launch(Dim3.of(1), Dim3.of(N), 0, ctx -> {
                if (ctx.threadRank() == 3) {
                    ctx.loadInt(g, 0);
                } else {
                    ctx.atomicAddInt(g, 0, 1);
                }
            });
            return 0;
        }, 20);
        assertTrue(f.message().contains("atomic"), f.message());
    }

    // ---------------------------------------------------------------------------------------------------------
    // Compiled kernels, and seeded exploration

    private static MemorySegment compiledOut;

    /** A kernel that compiles (its only wait is __syncthreads in its own body): thread t reads t + 1's word. */
    private static void compiledNeighbours(KernelContext ctx) {
        int t = ctx.threadRank();
        ctx.storeInt(compiledOut, t, t);
        ctx.loadInt(compiledOut, (t + 1) % N);
        ctx.syncThreads();
    }

    @Test
    void aCompiledKernelsRaceNamesTheKernelsMethodAndLine() {
        Finding f = found(() -> {
            compiledOut = ints(N);
            Kernel.launch(Dim3.of(1), Dim3.of(N), 0, CheckedRaceTest::compiledNeighbours);
            return 0;
        }, 20);
        assertTrue(f.message().matches(".* at CheckedRaceTest\\.compiledNeighbours\\(CheckedRaceTest\\.java:\\d+\\),"
            + " and .* at CheckedRaceTest\\.compiledNeighbours\\(CheckedRaceTest\\.java:\\d+\\): .*"), f.message());
    }

    /** A correct kernel mixing the rules: over many seeds, no race is reported. */
    @Test
    void manySeedsOfACorrectKernelFindNothing() {
        clean(() -> {
            MemorySegment g = ints(2 * N + 1);
            Kernel.launch(Dim3.of(2), Dim3.of(N), 4L * N, ctx -> {
                MemorySegment s = ctx.dynamicShared();
                int t = ctx.threadRank();
                ctx.storeInt(s, t, t);
                ctx.syncThreads();
                int sum = ctx.loadInt(s, (t + 1) % N) + ctx.loadInt(s, (t + 2) % N);
                ctx.syncThreads();
                ctx.storeInt(s, t, sum);
                ctx.syncWarp();
                ctx.storeInt(g, ctx.globalRank(), ctx.loadInt(s, N - 1 - t));
                ctx.atomicAddInt(g, 2 * N, 1);
            });
            return Arrays.toString(g.toArray(ValueLayout.JAVA_INT));
        }, 300);
    }

    @Test
    void aRacyKernelIsFoundWithinTheFirstFewSeeds() {
        for (int first = 1; first <= 41; first += 10) {
            int from = first;
            Exploration<?> e = CheckedExecution.explore(5, from, () -> Arrays.toString(neighbours(false)));
            assertNotNull(e.finding(), "seeds " + from + ".." + (from + 4) + " found nothing");
            assertEquals(FindingKind.DATA_RACE, e.finding().kind(), e.finding().report());
        }
    }
}
