package dev.jpipeline.simt;

import static dev.jpipeline.simt.CompiledOrStrands.onStrands;
import static dev.jpipeline.simt.CompiledOrStrands.outcome;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.simt.CompiledOrStrands.Case;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.function.Supplier;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A hostile user's kernels, compiled on their blocks' schedulers (ResumptionScan's verdict onScheduler), each
 * compared with what strands give ({@code -Djpipeline.simt.compile=false}).
 */
class CompiledOnSchedulerHostileTest {

    private static final Duration BOUND = Duration.ofSeconds(60);

    @BeforeEach
    void compilationOn() {
        assumeTrue(ResumptionScan.switchedOn(), "compilation switched off for this run");
    }

    private static void assertOnScheduler(KernelBody body) {
        CompiledOrStrands.assertOnScheduler(body);
    }

    /** The outcome of a fresh case compiled, then of another on strands: {compiled, strands}. */
    private static String[] both(Dim3 grid, Dim3 block, Supplier<Case> make) {
        return CompiledOrStrands.both(grid, block, make, CompiledOnSchedulerHostileTest::assertOnScheduler, BOUND);
    }

    private static void assertSame(Dim3 grid, Dim3 block, Supplier<Case> make) {
        String[] r = both(grid, block, make);
        assertEquals(r[1], r[0], "compiled (actual) against strands (expected)");
    }

    // -----------------------------------------------------------------------------------------------------------
    // Helpers: methods of the kernel's class that name the Java thread (a kernel's own method may not)

    private static void interruptMe() {
        Thread.currentThread().interrupt();
    }

    private static boolean amInterrupted() {
        return Thread.currentThread().isInterrupted();
    }

    private static boolean clearInterrupt() {
        return Thread.interrupted();
    }

    // -----------------------------------------------------------------------------------------------------------
    // Pipeline handles: a handle belongs to the CUDA thread that made it

    private static final Object[] HANDLES = new Object[1];

    /**
     * Thread 0 makes a thread-scope pipeline, publishes it and waits at a sync; thread 1 then uses thread 0's handle.
     * On strands thread 1 runs on a strand of its own and is refused (each thread makes and uses its own handle).
     * Compiled, thread 0 gave its strand up at the sync, and thread 1 starts on it: the owner check compares Java
     * threads first, so thread 1 passes as if it were thread 0.
     */
    @Test
    void aThreadThatUsesAnotherThreadsPipelineHandleIsRefusedEvenOnTheOwnersFormerStrand() {
        Supplier<Case> make = () -> {
        String[] seen = new String[1];
        KernelBody body = ctx -> {
            int rank = ctx.threadRank();
            Pipeline mine = Pipeline.make();
            Pipeline[] handles = ctx.shared("handles", () -> new Pipeline[1]);
            if (rank == 0) {
                handles[0] = mine;
            }
            if (rank == 1) {
                try {
                    handles[0].producerAcquire();
                    seen[0] = "accepted";
                } catch (IllegalStateException refused) {
                    seen[0] = "refused";
                }
            }
            ctx.syncThreads();
            mine.quit();
        };
        return new Case(body, () -> seen[0]);
        };
        String[] r = both(Dim3.of(1), Dim3.of(2), make);
        assertEquals("ok refused", r[1], "strands refuse the foreign thread");
        assertEquals(r[1], r[0], "compiled (actual) against strands (expected)");
    }

    /**
     * A kernel that names the Java thread in its own method runs on strands (a compiled thread may go on on another
     * Java thread behind a sync): a method reference {@code Thread::currentThread} names it as a call does.
     */
    @Test
    void aKernelThatNamesTheJavaThreadWithAMethodReferenceRunsOnStrands() {
        AtomicInteger moved = new AtomicInteger();
        KernelBody body = ctx -> {
            PipelineSharedState state = ctx.shared("state", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
            Pipeline pipe = Pipeline.make(ctx.block(), state, 1);
            Supplier<Thread> me = Thread::currentThread;
            Thread before = me.get();
            ctx.syncThreads();
            ctx.syncThreads();
            if (before != me.get()) {
                moved.incrementAndGet();
            }
            pipe.quit();
        };
        assertEquals(null, ResumptionScan.scan(body).compiled(), "Thread::currentThread names the Java thread");
        assertTimeoutPreemptively(BOUND, () -> Kernel.launch(Dim3.of(1), Dim3.of(64), 0, body));
        assertEquals(0, moved.get(), "CUDA threads that changed Java threads across a sync");
    }

    // -----------------------------------------------------------------------------------------------------------
    // Interrupt status across suspensions

    /**
     * Even threads interrupt themselves (through a helper), then pass a sync, a pipeline wait they suspend at and a
     * second sync: each must see its own status after each, and odd threads never see one.
     */
    @Test
    void aThreadsInterruptStatusSurvivesEverySuspensionAndNeverLeaksToAnother() {
        int size = 70;
        Supplier<Case> make = () -> {
        AtomicIntegerArray wrong = new AtomicIntegerArray(size);
        KernelBody body = ctx -> {
            int rank = ctx.threadRank();
            boolean mine = rank % 2 == 0;
            PipelineSharedState state = ctx.shared("state", () -> PipelineSharedState.create(ThreadScope.BLOCK, 1));
            Pipeline pipe = Pipeline.make(ctx.block(), state, 1);
            if (amInterrupted()) {
                wrong.incrementAndGet(rank);
            }
            if (mine) {
                interruptMe();
            }
            ctx.syncThreads();
            if (amInterrupted() != mine) {
                wrong.incrementAndGet(rank);
            }
            for (int batch = 0; batch < 3; batch++) {
                if (rank == size - 1) {
                    pipe.producerAcquire();
                    if (amInterrupted() != mine) {
                        wrong.incrementAndGet(rank);
                    }
                    pipe.producerCommit();
                } else {
                    pipe.consumerWait();
                    if (amInterrupted() != mine) {
                        wrong.incrementAndGet(rank);
                    }
                    pipe.consumerRelease();
                }
            }
            ctx.syncWarp();
            if (amInterrupted() != mine) {
                wrong.incrementAndGet(rank);
            }
            ctx.syncThreads();
            if (amInterrupted() != mine) {
                wrong.incrementAndGet(rank);
            }
            clearInterrupt();
            pipe.quit();
        };
        return new Case(body, wrong::toString);
        };
        String[] r = both(Dim3.of(3), Dim3.of(size), make);
        assertEquals("ok " + new AtomicIntegerArray(size), r[1], "strands");
        assertEquals(r[1], r[0], "compiled (actual) against strands (expected)");
    }

    // -----------------------------------------------------------------------------------------------------------
    // The context kept in a local across syncs

    @Test
    void aContextAndItsBlockKeptInLocalsAcrossSuspensionsStillNameTheirOwnThread() {
        int size = 45;                      // a partial second warp
        Supplier<Case> make = () -> {
        AtomicIntegerArray wrong = new AtomicIntegerArray(2 * size);
        KernelBody body = ctx -> {
            KernelContext me = ctx;
            dev.jpipeline.simt.ThreadBlock block = ctx.block();
            int rank = me.threadRank();
            int g = ctx.blockIdx().x() * size + rank;
            PipelineSharedState state = ctx.shared("state", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
            Pipeline pipe = Pipeline.make(block, state, 3);
            for (int batch = 0; batch < 5; batch++) {
                if (rank < 3) {
                    pipe.producerAcquire();
                    pipe.producerCommit();
                } else {
                    pipe.consumerWait();
                    pipe.consumerRelease();
                }
                if (me.threadRank() != rank || block.threadRank() != rank || me.threadIdx().x() != rank
                    || me.laneId() != rank % 32 || me.warpId() != rank / 32) {
                    wrong.incrementAndGet(g);
                }
                me.syncWarp();
                if (me.threadRank() != rank || block.threadRank() != rank) {
                    wrong.incrementAndGet(g);
                }
                block.sync();
                if (me.threadRank() != rank || block.threadRank() != rank || me.laneId() != rank % 32) {
                    wrong.incrementAndGet(g);
                }
            }
            pipe.quit();
        };
        return new Case(body, wrong::toString);
        };
        String[] r = both(Dim3.of(2), Dim3.of(size), make);
        assertEquals("ok " + new AtomicIntegerArray(2 * size), r[1], "strands");
        assertEquals(r[1], r[0], "compiled (actual) against strands (expected)");
    }

    // -----------------------------------------------------------------------------------------------------------
    // Failures: finally blocks run exactly once

    /**
     * The producer fails after two batches, with consumers suspended at consumer_wait, others at a sync; every
     * thread's finally block (which syncs again, inside a nested try) must run exactly once, as on strands.
     */
    @Test
    void aFailedLaunchRunsEachSuspendedThreadsFinallyBlocksExactlyOnce() {
        int size = 53;
        Supplier<Case> make = () -> {
        AtomicIntegerArray outer = new AtomicIntegerArray(size);
        AtomicIntegerArray inner = new AtomicIntegerArray(size);
        KernelBody body = ctx -> {
            int rank = ctx.threadRank();
            PipelineSharedState state = ctx.shared("state", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
            Pipeline pipe = Pipeline.make(ctx.block(), state, 1);
            try {
                for (int batch = 0; batch < 4; batch++) {
                    if (rank == 0) {
                        if (batch == 2) {
                            throw new IllegalStateException("producer fails at batch 2");
                        }
                        pipe.producerAcquire();
                        pipe.producerCommit();
                    } else if (rank < 40) {
                        pipe.consumerWait();
                        pipe.consumerRelease();
                    } else {
                        ctx.syncThreads();     // never completes: threads 0..39 never come
                    }
                }
            } finally {
                outer.incrementAndGet(rank);
                try {
                    if (rank != 0) {
                        ctx.syncThreads();      // unwinds: the launch has failed
                    }
                } finally {
                    inner.incrementAndGet(rank);
                }
            }
        };
        return new Case(body, () -> outer + " " + inner);
        };
        String[] r = both(Dim3.of(1), Dim3.of(size), make);
        assertTrue(r[1].contains("producer fails"), r[1]);
        assertEquals(r[1], r[0], "compiled (actual) against strands (expected)");
    }

    /** A thread that ends without quit() while its consumers wait without a stack: strands abandon it. */
    @Test
    void aProducerThatEndsWithoutQuitWhileConsumersAreSuspendedEndsAsOnStrands() {
        int size = 37;
        Supplier<Case> make = () -> {
        AtomicInteger got = new AtomicInteger();
        KernelBody body = ctx -> {
            int rank = ctx.threadRank();
            PipelineSharedState state = ctx.shared("state", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
            Pipeline pipe = Pipeline.make(ctx.block(), state, 1);
            ctx.syncThreads();
            if (rank == 0) {
                pipe.producerAcquire();
                pipe.producerCommit();
                return;                         // no quit: its consumers wait for batch 1 for ever
            }
            for (int batch = 0; batch < 3; batch++) {
                pipe.consumerWait();
                got.incrementAndGet();
                pipe.consumerRelease();
            }
            pipe.quit();
        };
        return new Case(body, got::toString);
        };
        String[] r = both(Dim3.of(1), Dim3.of(size), make);
        // which consumer finds out first is the schedule's: compared without the consumer's rank
        String anyConsumer = "thread \\(\\d+, 0, 0\\) of|rank \\d+ \\(consumer\\)";
        assertTrue(r[1].contains("can never return"), r[1]);
        assertEquals(r[1].replaceAll(anyConsumer, "C"), r[0].replaceAll(anyConsumer, "C"),
            "compiled (actual) against strands (expected)");
    }

    // -----------------------------------------------------------------------------------------------------------
    // Hang reports

    @Test
    void aHangWithEveryThreadSuspendedNamesEachWaitAsStrandsDo() {
        int size = 50;
        Supplier<Case> make = () -> new Case(ctx -> {
            int rank = ctx.threadRank();
            PipelineSharedState state = ctx.shared("state", () -> PipelineSharedState.create(ThreadScope.BLOCK, 1));
            Pipeline pipe = Pipeline.make(ctx.block(), state, 2);
            if (rank == 0) {
                pipe.producerAcquire();
                pipe.producerCommit();
                pipe.producerAcquire();         // the single stage is never released: waits for ever
            } else if (rank == 1) {
                ctx.syncThreads();              // never completes
            } else if (rank < 34) {
                ctx.syncWarp();                 // warp 1 (32..49): lanes 32, 33 never come... warp 0 neither
            } else {
                pipe.consumerWait();            // batch 0: only one producer of two committed
                pipe.consumerRelease();
                pipe.consumerWait();
            }
        }, () -> "");
        String[] r = both(Dim3.of(1), Dim3.of(size), make);
        assertEquals(r[1], r[0], "compiled (actual) against strands (expected)");
    }

    /** The full hang report, compiled against strands, past its headline. */
    @Test
    void aHangReportListsTheSameWaitsAsOnStrands() {
        int size = 40;
        Supplier<KernelBody> make = () -> ctx -> {
            int rank = ctx.threadRank();
            PipelineSharedState state = ctx.shared("state", () -> PipelineSharedState.create(ThreadScope.BLOCK, 1));
            Pipeline pipe = Pipeline.make(ctx.block(), state, 1);
            if (rank == 0) {
                ctx.syncThreads();
            } else if (rank < 20) {
                pipe.consumerWait();
            } else {
                ctx.syncWarp();
            }
        };
        KernelBody compiled = make.get();
        assertOnScheduler(compiled);
        String c = report(compiled, size);
        String s = onStrands(() -> report(make.get(), size));
        assertEquals(body(s), body(c), "compiled (actual) against strands (expected)\n" + c + "\n---\n" + s);
    }

    private static String report(KernelBody body, int size) {
        return CompiledOrStrands.report(body, size, BOUND);
    }

    private static String body(String report) {
        return CompiledOrStrands.reportBody(report);
    }

    // -----------------------------------------------------------------------------------------------------------
    // Helpers that sync where the inliner cannot inline them: they block with a stack on the same barriers

    private static int syncAndRead(KernelContext ctx, MemorySegment cells, int at) {
        ctx.syncThreads();
        return cells.getAtIndex(ValueLayout.JAVA_INT, at);
    }

    private static int recurseSync(KernelContext ctx, int depth) {
        if (depth == 0) {
            ctx.syncThreads();
            return 0;
        }
        return 1 + recurseSync(ctx, depth - 1);
    }

    private static final Object LOCK = new Object();

    private static int warpSyncAndGet(KernelContext ctx, int v) {
        ctx.syncWarp();
        return v;
    }

    private static void lockedAdd(int[] cell, int v) {
        synchronized (LOCK) {
            cell[0] += v;
        }
    }

    /**
     * Stackless syncs of the kernel's own method meet stackful ones of a helper called inside an expression, a
     * recursive helper, a synchronized helper and a lambda on the same barriers, round after round, with a pipeline
     * between: a sync completed by a thread with a stack wakes threads without one, and the other way round.
     */
    @Test
    void syncsWithAndWithoutAStackMeetOnTheSameBarriers() {
        int size = 77;
        Supplier<Case> make = () -> {
        int[] sums = new int[3];
        KernelBody body = ctx -> {
            int rank = ctx.threadRank();
            MemorySegment cells = ctx.sharedArray("cells", 4L * size);
            int[] total = ctx.shared("total", () -> new int[1]);
            PipelineSharedState state = ctx.shared("state", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
            Pipeline pipe = Pipeline.make(ctx.block(), state, 1);
            Runnable sync = () -> ctx.syncThreads();
            int acc = 0;
            for (int round = 0; round < 6; round++) {
                cells.setAtIndex(ValueLayout.JAVA_INT, rank, rank * 10 + round);
                int kind = (rank + round) % 4;
                int v;
                if (kind == 0) {
                    v = 1 + syncAndRead(ctx, cells, (rank + 1) % size);
                } else if (kind == 1) {
                    v = recurseSync(ctx, round) + cells.getAtIndex(ValueLayout.JAVA_INT, (rank + 1) % size);
                } else if (kind == 2) {
                    sync.run();
                    v = cells.getAtIndex(ValueLayout.JAVA_INT, (rank + 1) % size);
                } else {
                    ctx.syncThreads();
                    v = cells.getAtIndex(ValueLayout.JAVA_INT, (rank + 1) % size);
                }
                acc += v;
                if (rank == 0) {
                    pipe.producerAcquire();
                    pipe.producerCommit();
                } else {
                    pipe.consumerWait();
                    pipe.consumerRelease();
                }
                if (round % 2 == 0) {
                    acc += warpSyncAndGet(ctx, round) - round;     // a helper inside an expression
                } else {
                    ctx.syncWarp();
                }
                ctx.syncThreads();              // nobody writes cells before every thread has read
            }
            lockedAdd(total, acc);
            ctx.syncThreads();
            if (rank == 0) {
                sums[ctx.blockIdx().x()] = total[0];
            }
            pipe.quit();
        };
        return new Case(body, () -> Arrays.toString(sums));
        };
        assertSame(Dim3.of(3), Dim3.of(size), make);
    }

    // -----------------------------------------------------------------------------------------------------------
    // Forward progress: a helper that spins keeps the turn until the block is released

    private static void spinUntil(AtomicInteger flag, int value) {
        while (flag.get() < value) {
            Thread.onSpinWait();
        }
    }

    /**
     * Consumers suspend without a stack at consumer_wait; the producer commits and then spins, in a helper (which
     * does not yield), until every consumer has taken the batch: only the forward-progress release lets them run.
     * After the release the block meets at syncs again, some threads suspended before it and some after.
     */
    @Test
    void threadsSuspendedBeforeTheForwardProgressReleaseRunAfterIt() {
        int size = 45;
        Supplier<Case> make = () -> {
        int[] out = new int[1];
        KernelBody body = ctx -> {
            int rank = ctx.threadRank();
            AtomicInteger taken = ctx.shared("taken", AtomicInteger::new);
            PipelineSharedState state = ctx.shared("state", () -> PipelineSharedState.create(ThreadScope.BLOCK, 1));
            Pipeline pipe = Pipeline.make(ctx.block(), state, 1);
            ctx.syncThreads();
            for (int batch = 0; batch < 2; batch++) {
                if (rank == 0) {
                    ctx.syncThreads();          // every consumer waits at consumer_wait by now, without a stack
                    pipe.producerAcquire();
                    pipe.producerCommit();
                    spinUntil(taken, (size - 1) * (batch + 1));
                } else {
                    if (batch == 0) {
                        ctx.syncThreads();
                    } else {
                        ctx.syncThreads();
                    }
                    pipe.consumerWait();
                    taken.incrementAndGet();
                    pipe.consumerRelease();
                }
                ctx.syncWarp();
                ctx.syncThreads();
            }
            if (rank == 0) {
                out[ctx.blockIdx().x()] = taken.get();
            }
            pipe.quit();
        };
        return new Case(body, () -> Arrays.toString(out));
        };
        assertSame(Dim3.of(1), Dim3.of(size), make);    // one block: a spinning holder keeps a carrier
    }

    // -----------------------------------------------------------------------------------------------------------
    // Timed waits mixed with stackless ones; many blocks, odd sizes; seeded

    private static KernelBody mixed(int stages, int producers, int batches, long[] totals) {
        return ctx -> {
            int size = ctx.block().size();
            int rank = ctx.threadRank();
            MemorySegment buffer = ctx.sharedArray("buffer", 8L * stages * producers);
            AtomicLongSum sum = ctx.shared("sum", AtomicLongSum::new);
            PipelineSharedState state = ctx.shared("state", () -> PipelineSharedState.create(ThreadScope.BLOCK,
                stages));
            Pipeline pipe = Pipeline.make(ctx.block(), state, producers);
            long mine = 0;
            for (int batch = 0; batch < batches; batch++) {
                int stage = batch % stages;
                if (rank < producers) {
                    pipe.producerAcquire();
                    buffer.setAtIndex(ValueLayout.JAVA_LONG, (long) stage * producers + rank,
                        batch * 1000L + rank + 7L * ctx.blockIdx().x());
                    pipe.producerCommit();
                } else {
                    if (rank % 3 == 0) {
                        while (!pipe.consumerWaitFor(Duration.ofNanos(rank * 1000L))) {
                            mine += 0;          // polls with short timeouts
                        }
                    } else {
                        pipe.consumerWait();
                    }
                    for (int p = 0; p < producers; p++) {
                        mine += buffer.getAtIndex(ValueLayout.JAVA_LONG, (long) stage * producers + p);
                    }
                    pipe.consumerRelease();
                }
                if (batch % 3 == 1) {
                    ctx.syncWarp();
                }
                if (batch % 4 == 2) {
                    ctx.syncThreads();
                }
            }
            sum.add(mine);
            ctx.syncThreads();
            if (rank == 0) {
                totals[ctx.blockIdx().x()] = sum.get();
            }
            pipe.quit();
        };
    }

    /** A sum for the block (an atomic in a final class the kernel may call). */
    static final class AtomicLongSum {
        private final java.util.concurrent.atomic.AtomicLong value = new java.util.concurrent.atomic.AtomicLong();

        void add(long v) {
            value.addAndGet(v);
        }

        long get() {
            return value.get();
        }
    }

    @Test
    void randomTimedAndStacklessPipelineWaitsGiveWhatStrandsGive() {
        long seed = Long.getLong("jpipeline.simt.seed", System.nanoTime());
        System.out.println("CompiledOnSchedulerHostileTest.randomTimedAndStackless seed " + seed
            + " (-Djpipeline.simt.seed=" + seed + ")");
        Random random = new Random(seed);
        for (int round = 0; round < 8; round++) {
            int size = 2 + random.nextInt(120);
            int producers = 1 + random.nextInt(Math.min(size - 1, 5));
            int stages = 1 + random.nextInt(3);
            int batches = 1 + random.nextInt(10);
            int blocks = 1 + random.nextInt(9);
            String shape = "seed " + seed + ", round " + round + ": " + blocks + " x " + size + ", " + producers
                + " producers, " + stages + " stages, " + batches + " batches";
            String[] r = both(Dim3.of(blocks), Dim3.of(size), () -> {
                long[] totals = new long[blocks];
                return new Case(mixed(stages, producers, batches, totals), () -> Arrays.toString(totals));
            });
            assertTrue(r[1].startsWith("ok "), shape + ": " + r[1]);
            assertEquals(r[1], r[0], shape);
        }
    }
}
