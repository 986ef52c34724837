package dev.jpipeline.simt;

import static dev.jpipeline.simt.CompiledOrStrands.onStrands;
import static dev.jpipeline.simt.CompiledOrStrands.outcome;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.jpipeline.Group;
import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineRole;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.simt.CompiledOrStrands.Case;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.Supplier;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A hostile user's {@code Pipeline.make} in kernels compiled on their blocks' schedulers (CompiledMake): each kernel
 * runs compiled (ResumptionScan's verdict onScheduler) and on strands, and both must give the same outcome, within
 * a bound (a hang must be reported, never be silent).
 */
class CompiledMakeHostileTest {

    private static final Duration BOUND = Duration.ofSeconds(60);

    @BeforeEach
    void compilationOn() {
        assumeTrue(ResumptionScan.switchedOn(), "compilation switched off for this run");
    }

    private static void assertOnScheduler(KernelBody body) {
        assertTrue(CompiledOrStrands.assertOnScheduler(body).compiled().blockSyncs() >= 1,
            "its make is a block sync point");
    }

    /** The outcome of a fresh case compiled, then of another on strands: {compiled, strands}. */
    private static String[] both(Dim3 grid, Dim3 block, Supplier<Case> make) {
        return CompiledOrStrands.both(grid, block, make, CompiledMakeHostileTest::assertOnScheduler, BOUND);
    }

    /** Compiled equals strands; returns the outcome. */
    private static String assertSame(Dim3 grid, Dim3 block, Supplier<Case> make) {
        String[] r = both(grid, block, make);
        System.out.println("CompiledMakeHostileTest outcome: " + r[0]);
        assertEquals(r[1], r[0], "compiled (actual) against strands (expected)");
        return r[0];
    }

    private static PipelineSharedState state(KernelContext ctx, String name) {
        return ctx.shared(name, () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
    }

    /** One round through a unified pipeline, then quit: the pipeline works. */
    private static int use(Pipeline p) {
        p.producerAcquire();
        p.producerCommit();
        p.consumerWait();
        p.consumerRelease();
        p.quit();
        return 1;
    }

    private static long mix(int a, long b, double c, int used, float d) {
        return a * 1_000_000L + b * 10_000 + (long) c * 100 + used * 10 + (long) d;
    }

    // -----------------------------------------------------------------------------------------------------------
    // The operand stack below the make's arguments

    /** {@code mix(i, l, d, use(make(...)), f)}: an int, a long and a double below the make's arguments. */
    @Test
    void aMakeInsideAnExpressionKeepsWhatLiesBelowItsArguments() {
        int size = 64;
        String out = assertSame(Dim3.of(2), Dim3.of(size), () -> {
            AtomicLongArray results = new AtomicLongArray(2 * size);
            KernelBody body = ctx -> {
                int rank = ctx.threadRank();
                long wide = rank * 3L;
                double dbl = rank + 0.5;
                long r = mix(rank, wide + 1, dbl * 2, use(Pipeline.make(ctx.block(), state(ctx, "s"))), 7f);
                results.set(ctx.blockIdx().x() * size + rank, r);
            };
            return new Case(body, results::toString);
        });
        long expected = mix(5, 16, 11.0, 1, 7f);
        assertTrue(out.startsWith("ok ") && out.contains(", " + expected + ","), out);
    }

    /** A long, then the group and a state are pushed by a ternary, with a role computed between them. */
    @Test
    void aMakeWithWideValuesAndARoleComputedInline() {
        int size = 48;
        assertSame(Dim3.of(1), Dim3.of(size), () -> {
            AtomicLongArray results = new AtomicLongArray(size);
            KernelBody body = ctx -> {
                int rank = ctx.threadRank();
                double below = rank * 1.25;
                long total = (long) (below * 4) + Pipeline.make(rank % 2 == 0 ? ctx.block() : ctx.block(),
                    state(ctx, "s"), rank < 8 ? PipelineRole.PRODUCER : PipelineRole.CONSUMER).hashCode() * 0L;
                results.set(rank, total);
            };
            return new Case(body, results::toString);
        });
    }

    private static String describe(Object nothing, int[] cells, long[][] grid, boolean flag, char c, short sh, byte by,
                                   float f, Pipeline p) {
        p.quit();
        return nothing + " " + cells.length + " " + grid[0][0] + " " + flag + " " + c + sh + by + " " + f;
    }

    /** Below the arguments: a null, arrays, and the narrow kinds; a local that is null, and one of a merged type. */
    @Test
    void aMakeOverNullsArraysAndNarrowValues() {
        int size = 40;
        String out = assertSame(Dim3.of(1), Dim3.of(size), () -> {
            Map<Integer, String> seen = new ConcurrentHashMap<>();
            KernelBody body = ctx -> {
                int rank = ctx.threadRank();
                Pipeline previous = null;
                Object merged = rank % 2 == 0 ? (Object) "even" : Integer.valueOf(rank);
                int[] cells = new int[rank + 1];
                long[][] grid = {{rank}};
                for (int i = 0; i < 2; i++) {
                    if (previous != null) {
                        previous.quit();
                    }
                    String d = describe(null, cells, grid, rank > 3, (char) ('a' + i), (short) rank, (byte) -i,
                        1.5f, Pipeline.make(ctx.block(), state(ctx, "s")));
                    previous = Pipeline.make(ctx.block(), state(ctx, "s"), 1);
                    cells[0] += d.length();
                    seen.merge(rank, d + " " + merged, (x, y) -> x + "; " + y);
                }
                previous.quit();
            };
            return new Case(body, () -> new TreeMap<>(seen).toString());
        });
        assertTrue(out.startsWith("ok {0=null 1 0 false a00 1.5 even; null 1 0 false b0-1 1.5 even"), out);
    }

    /** A make as a resource, and a make in a finally block (javac copies it: two call sites, one per path). */
    @Test
    void aMakeAsAResourceAndInAFinallyBlock() {
        int size = 48;
        String out = assertSame(Dim3.of(2), Dim3.of(size), () -> {
            AtomicInteger made = new AtomicInteger();
            KernelBody body = ctx -> {
                PipelineSharedState s = state(ctx, "s");
                try (Pipeline p = Pipeline.make(ctx.block(), s)) {
                    p.producerAcquire();
                    p.producerCommit();
                    if (ctx.threadRank() % 3 == 0) {
                        throw new IllegalStateException("odd path");
                    }
                } catch (IllegalStateException e) {
                    made.addAndGet(100);
                } finally {
                    made.addAndGet(use(Pipeline.make(ctx.block(), s)));
                }
            };
            return new Case(body, made::toString);
        });
        assertEquals("ok " + 2 * (size + 100 * (size / 3)), out);
    }

    /** Every rank passes a literal null state: each gets the exception, as on strands. */
    @Test
    void everyRankPassesANullLiteral() {
        String out = assertSame(Dim3.of(1), Dim3.of(33), () -> {
            AtomicInteger failed = new AtomicInteger();
            KernelBody body = ctx -> {
                try {
                    Pipeline.make(ctx.block(), null, PipelineRole.PRODUCER);
                } catch (IllegalArgumentException e) {
                    failed.incrementAndGet();
                }
                ctx.syncThreads();
            };
            return new Case(body, failed::toString);
        });
        assertEquals("ok 33", out);
    }

    /** A hang in the make on a state shared by launches: the next launch makes on it at once, as on strands. */
    @Test
    void aStateOfAHungMakeIsMadeAgainByTheNextLaunch() {
        int size = 64;
        for (boolean compiled : new boolean[] {true, false}) {
            PipelineSharedState shared = PipelineSharedState.create(ThreadScope.BLOCK, 2);
            Supplier<String> run = () -> {
                String hung = assertTimeoutPreemptively(BOUND, () -> outcome(Dim3.of(1), Dim3.of(size), ctx -> {
                    if (ctx.threadRank() == size - 1) {
                        return;
                    }
                    Pipeline.make(ctx.block(), shared).quit();
                }, () -> ""));
                String again = assertTimeoutPreemptively(BOUND, () -> outcome(Dim3.of(1), Dim3.of(size), ctx ->
                    use(Pipeline.make(ctx.block(), shared)), () -> ""));
                return hung.replaceAll("\\d+ ms", "N ms") + " | " + again;
            };
            String r = compiled ? run.get() : onStrands(run);
            System.out.println("CompiledMakeHostileTest hung then again (compiled " + compiled + "): " + r);
            assertTrue(r.contains("hung") && r.endsWith(" | ok "), r);
        }
    }

    /** The made pipeline is dropped: nothing on the stack behind the call. */
    @Test
    void aMakeWhoseResultIsDiscarded() {
        int size = 40;
        assertSame(Dim3.of(2), Dim3.of(size), () -> {
            AtomicInteger after = new AtomicInteger();
            KernelBody body = ctx -> {
                PipelineSharedState s = state(ctx, "s");
                Pipeline.make(ctx.block(), s);
                after.incrementAndGet();
                ctx.syncThreads();
                Pipeline.make(ctx.block(), s, 1);
                after.incrementAndGet();
            };
            return new Case(body, after::toString);
        });
    }

    // -----------------------------------------------------------------------------------------------------------
    // Several makes

    @Test
    void twoMakesOnOneStateAfterQuitAndOnTwoStatesInterleaved() {
        int size = 64;
        String out = assertSame(Dim3.of(2), Dim3.of(size), () -> {
            AtomicInteger used = new AtomicInteger();
            KernelBody body = ctx -> {
                PipelineSharedState a = state(ctx, "a");
                PipelineSharedState b = state(ctx, "b");
                int n = use(Pipeline.make(ctx.block(), a));
                Pipeline first = Pipeline.make(ctx.block(), a, 2);
                Pipeline second = Pipeline.make(ctx.block(), b, ctx.threadRank() % 2 == 0 ? PipelineRole.PRODUCER
                    : PipelineRole.CONSUMER);
                first.quit();
                second.quit();
                n += use(Pipeline.make(ctx.block(), b));
                used.addAndGet(n);
            };
            return new Case(body, used::toString);
        });
        assertEquals("ok " + 2 * 2 * size, out);
    }

    @Test
    void makesInALoop() {
        int size = 96;
        String out = assertSame(Dim3.of(2), Dim3.of(size), () -> {
            AtomicInteger used = new AtomicInteger();
            KernelBody body = ctx -> {
                PipelineSharedState s = state(ctx, "s");
                long acc = 0;
                for (int i = 0; i < 5; i++) {
                    double d = i * 0.5;
                    acc += (long) d + use(Pipeline.make(ctx.block(), s));
                }
                used.addAndGet((int) acc);
            };
            return new Case(body, used::toString);
        });
        assertEquals("ok " + 2 * size * (5 + 0 + 0 + 1 + 1 + 2), out);
    }

    // -----------------------------------------------------------------------------------------------------------
    // A make in a helper of the kernel's class (SyncInliner inlines it)

    private static Pipeline makeIt(KernelContext ctx, PipelineSharedState s, long scale) {
        long below = scale * 2;
        Pipeline p = Pipeline.make(ctx.block(), s, scale > 0 ? 1 : 2);
        return below >= 0 ? p : null;
    }

    @Test
    void aMakeInAnInlinedHelper() {
        int size = 64;
        assertSame(Dim3.of(2), Dim3.of(size), () -> {
            AtomicInteger made = new AtomicInteger();
            KernelBody body = ctx -> {
                double d = 3.5;
                Pipeline p = makeIt(ctx, state(ctx, "s"), ctx.threadRank() + 1L);
                if (p != null && d > 3) {
                    made.incrementAndGet();
                }
                p.quit();
            };
            return new Case(body, made::toString);
        });
    }

    // -----------------------------------------------------------------------------------------------------------
    // Bad arguments: every rank gets the same exception, as on strands

    /** Each rank's exception message (or "made") after a make whose ranks are hostile in some way. */
    private static Supplier<Case> messages(java.util.function.BiFunction<KernelContext, PipelineSharedState[],
        Pipeline> make) {
        return () -> {
            Map<Integer, String> messages = new ConcurrentHashMap<>();
            KernelBody body = ctx -> {
                PipelineSharedState[] states = {state(ctx, "a"), state(ctx, "b")};
                String m;
                try {
                    make.apply(ctx, states).quit();
                    m = "made";
                } catch (IllegalArgumentException e) {
                    m = e.getMessage();
                }
                messages.put(ctx.blockIdx().x() * 1000 + ctx.threadRank(), m);
                ctx.syncThreads();
                m = "again " + use(Pipeline.make(ctx.block(), states[0]));  // the states are reusable
                messages.merge(ctx.blockIdx().x() * 1000 + ctx.threadRank(), m, (x, y) -> x + " / " + y);
            };
            return new Case(body, () -> new TreeMap<>(messages).toString());
        };
    }

    @Test
    void aRankWithANullState() {
        String out = assertSame(Dim3.of(2), Dim3.of(64), messages((ctx, s) -> Pipeline.make(ctx.block(),
            ctx.threadRank() == 3 ? null : s[0])));
        assertTrue(out.contains("rank 3 passed null") || out.contains("rank 3"), out);
    }

    @Test
    void aRankWithAnotherState() {
        String out = assertSame(Dim3.of(2), Dim3.of(64), messages((ctx, s) -> Pipeline.make(ctx.block(),
            ctx.threadRank() == 9 ? s[1] : s[0])));
        assertTrue(out.contains("rank 9 did not make"), out);
    }

    @Test
    void ranksDisagreeOnTheRole() {
        String out = assertSame(Dim3.of(1), Dim3.of(64), messages((ctx, s) -> Pipeline.make(ctx.block(), s[0],
            ctx.threadRank() == 4 ? null : ctx.threadRank() == 0 ? PipelineRole.PRODUCER : PipelineRole.CONSUMER)));
        assertTrue(out.contains("rank 4 passed a null role"), out);
    }

    @Test
    void ranksDisagreeOnTheKindAndCount() {
        String out = assertSame(Dim3.of(1), Dim3.of(64), messages((ctx, s) -> ctx.threadRank() == 63
            ? Pipeline.make(ctx.block(), s[0]) : Pipeline.make(ctx.block(), s[0], ctx.threadRank() % 3 + 1)));
        assertTrue(out.contains("asked for"), out);
    }

    /** Every rank asks for every thread to produce: invalid on every rank, and the retry with a good count works. */
    @Test
    void anInvalidCountThenARetryInTheSameLaunch() {
        int size = 32;
        String out = assertSame(Dim3.of(1), Dim3.of(size), () -> {
            AtomicInteger failed = new AtomicInteger();
            AtomicInteger made = new AtomicInteger();
            KernelBody body = ctx -> {
                PipelineSharedState s = state(ctx, "s");
                Pipeline p;
                try {
                    p = Pipeline.make(ctx.block(), s, size);
                } catch (IllegalArgumentException e) {
                    failed.incrementAndGet();
                    p = Pipeline.make(ctx.block(), s, size - 1);
                }
                made.incrementAndGet();
                p.quit();
            };
            return new Case(body, () -> failed + " " + made);
        });
        assertEquals("ok " + size + " " + size, out);
    }

    /** A rank that constructs with the make's result waits with its stack (UNINITIALIZED below); the rest step. */
    record Holder(Pipeline p) {
    }

    @Test
    void aRankMakingUnderAConstructorMeetsRanksMakingInSteps() {
        int size = 64;
        String out = assertSame(Dim3.of(2), Dim3.of(size), () -> {
            AtomicInteger made = new AtomicInteger();
            KernelBody body = ctx -> {
                PipelineSharedState s = state(ctx, "s");
                Pipeline p;
                if (ctx.threadRank() % 5 == 0) {
                    p = new Holder(Pipeline.make(ctx.block(), s)).p();
                } else {
                    p = Pipeline.make(ctx.block(), s);
                }
                made.addAndGet(use(p));
            };
            return new Case(body, made::toString);
        });
        assertEquals("ok " + 2 * size, out);
    }

    /** Half the block makes at one call site, half at another: one make all the same (the block's barrier). */
    @Test
    void ranksMakingAtTwoCallSites() {
        int size = 64;
        String out = assertSame(Dim3.of(1), Dim3.of(size), () -> {
            AtomicInteger made = new AtomicInteger();
            KernelBody body = ctx -> {
                PipelineSharedState s = state(ctx, "s");
                Pipeline p = ctx.threadRank() < size / 2 ? Pipeline.make(ctx.block(), s, 3)
                    : Pipeline.make(ctx.block(), s, 3);
                made.addAndGet(ctx.threadRank() < 3 ? 1 : 0);
                p.quit();
            };
            return new Case(body, made::toString);
        });
        assertEquals("ok 3", out);
    }

    /** Rank 0 skips the make but syncs twice: the others' make meets its syncs; the verdict names rank 0. */
    @Test
    void aRankThatSyncsInsteadOfMaking() {
        assertSame(Dim3.of(1), Dim3.of(40), () -> {
            Map<Integer, String> messages = new ConcurrentHashMap<>();
            KernelBody body = ctx -> {
                PipelineSharedState s = state(ctx, "s");
                if (ctx.threadRank() == 0) {
                    ctx.syncThreads();
                    ctx.syncThreads();
                    return;
                }
                try {
                    Pipeline.make(ctx.block(), s).quit();
                    messages.put(ctx.threadRank(), "made");
                } catch (IllegalArgumentException e) {
                    messages.put(ctx.threadRank(), e.getMessage());
                }
            };
            return new Case(body, () -> new TreeMap<>(messages).toString());
        });
    }

    // -----------------------------------------------------------------------------------------------------------
    // Hangs and failures

    /** Some threads return before the make: a hang, reported as on strands (naming the threads), never silent. */
    @Test
    void threadsReturningBeforeTheMakeAreAReportedHang() {
        String out = assertSame(Dim3.of(1), Dim3.of(64), () -> {
            AtomicInteger made = new AtomicInteger();
            KernelBody body = ctx -> {
                if (ctx.threadRank() >= 60) {
                    return;
                }
                Pipeline.make(ctx.block(), state(ctx, "s")).quit();
                made.incrementAndGet();
            };
            return new Case(body, made::toString);
        });
        assertTrue(!out.startsWith("ok"), out);
    }

    /** Some threads return between the make's two syncs cannot happen; they return after the first of two makes. */
    @Test
    void threadsReturningBetweenTwoMakesAreAReportedHang() {
        String out = assertSame(Dim3.of(1), Dim3.of(64), () -> {
            AtomicInteger made = new AtomicInteger();
            KernelBody body = ctx -> {
                PipelineSharedState s = state(ctx, "s");
                Pipeline.make(ctx.block(), s).quit();
                if (ctx.threadRank() == 17) {
                    return;
                }
                Pipeline.make(ctx.block(), s).quit();
                made.incrementAndGet();
            };
            return new Case(body, made::toString);
        });
        assertTrue(!out.startsWith("ok"), out);
    }

    private static String report(KernelBody body, int size) {
        return CompiledOrStrands.report(body, size, BOUND);
    }

    private static String reportBody(String report) {
        return CompiledOrStrands.reportBody(report);
    }

    /** The full hang report of threads that return before a make: the same waits as on strands, threads named. */
    @Test
    void theHangReportOfAMakeSomeThreadsSkippedListsTheSameWaitsAsOnStrands() {
        int size = 40;
        Supplier<KernelBody> make = () -> ctx -> {
            if (ctx.threadRank() % 8 == 3) {
                return;
            }
            Pipeline.make(ctx.block(), state(ctx, "s")).quit();
        };
        KernelBody compiled = make.get();
        assertOnScheduler(compiled);
        String c = report(compiled, size);
        String s = onStrands(() -> report(make.get(), size));
        System.out.println("CompiledMakeHostileTest compiled report:\n" + c + "\n--- strands:\n" + s);
        assertEquals(reportBody(s), reportBody(c), "compiled (actual) against strands (expected)\n" + c + "\n---\n" + s);
    }

    /**
     * Thread 7 throws once every other thread is in the make (ordered by observation); the state is made again by
     * a later launch, as on strands.
     */
    @Test
    void aThrowWhileOthersAreInTheMakeThenTheStateIsReused() {
        int size = 64;
        for (int round = 0; round < 2; round++) {
            PipelineSharedState shared = PipelineSharedState.create(ThreadScope.BLOCK, 2);
            String[] r = both(Dim3.of(1), Dim3.of(size), () -> {
                AtomicInteger entered = new AtomicInteger();
                AtomicInteger unwound = new AtomicInteger();
                KernelBody body = ctx -> {
                    if (ctx.threadRank() == 7) {
                        while (entered.get() < size - 1) {
                            Thread.onSpinWait();
                        }
                        throw new IllegalStateException("thread 7 fails while the others make");
                    }
                    entered.incrementAndGet();
                    try {
                        Pipeline.make(ctx.block(), shared).quit();
                    } finally {
                        unwound.incrementAndGet();
                    }
                };
                return new Case(body, () -> entered + " " + unwound);
            });
            assertEquals(r[1], r[0], "compiled (actual) against strands (expected)");
            assertTrue(r[0].contains("thread 7 fails") && r[0].endsWith((size - 1) + " " + (size - 1)), r[0]);
            // the state, made in both launches above, makes again
            String again = assertTimeoutPreemptively(BOUND, () -> outcome(Dim3.of(1), Dim3.of(size), ctx ->
                use(Pipeline.make(ctx.block(), shared)), () -> ""));
            assertEquals("ok ", again);
        }
    }

    /** A failing thread while the others are between the make's two syncs cannot be: a throw right behind it. */
    @Test
    void aThrowRightBehindTheMakeThenTheSameStateInTheNextLaunch() {
        int size = 64;
        PipelineSharedState shared = PipelineSharedState.create(ThreadScope.BLOCK, 2);
        assertSame(Dim3.of(1), Dim3.of(size), () -> {
            AtomicInteger made = new AtomicInteger();
            KernelBody body = ctx -> {
                Pipeline p = Pipeline.make(ctx.block(), shared);
                if (ctx.threadRank() == 0) {
                    throw new IllegalStateException("thread 0 fails behind the make");
                }
                p = Pipeline.make(ctx.block(), shared);
                made.incrementAndGet();
                p.quit();
            };
            return new Case(body, made::toString);
        });
        String again = assertTimeoutPreemptively(BOUND, () -> outcome(Dim3.of(1), Dim3.of(size), ctx ->
            use(Pipeline.make(ctx.block(), shared)), () -> ""));
        assertEquals("ok ", again);
    }

    // -----------------------------------------------------------------------------------------------------------
    // Interrupts

    private static void interruptMe() {
        Thread.currentThread().interrupt();
    }

    private static boolean clearInterrupt() {
        return Thread.interrupted();
    }

    /** Even threads interrupt themselves before the make: each keeps its own status through it, as on strands. */
    @Test
    void anInterruptStatusSurvivesTheMakeAndNeverLeaks() {
        int size = 70;
        String out = assertSame(Dim3.of(2), Dim3.of(size), () -> {
            AtomicIntegerArray status = new AtomicIntegerArray(size);
            KernelBody body = ctx -> {
                int rank = ctx.threadRank();
                if (rank % 2 == 0) {
                    interruptMe();
                }
                Pipeline p = Pipeline.make(ctx.block(), state(ctx, "s"), rank % 2 == 0 ? PipelineRole.PRODUCER
                    : PipelineRole.CONSUMER);
                if (clearInterrupt()) {
                    status.incrementAndGet(rank);
                }
                p.quit();
            };
            return new Case(body, status::toString);
        });
        assertTrue(out.startsWith("ok [2, 0, 2, 0"), out);
    }

    // -----------------------------------------------------------------------------------------------------------
    // Groups other than the thread's own block

    @Test
    void aMakeOnATileAndOnTheWarpAsOnStrands() {
        int size = 128;
        String out = assertSame(Dim3.of(2), Dim3.of(size), () -> {
            AtomicInteger made = new AtomicInteger();
            KernelBody body = ctx -> {
                Group tile = ctx.tiledPartition(32);
                PipelineSharedState s = state(ctx, "t" + ctx.threadRank() / 32);
                made.addAndGet(use(Pipeline.make(tile, s)));
                ctx.syncThreads();
                made.addAndGet(use(Pipeline.make(ctx.warp(), s)));
                made.addAndGet(use(Pipeline.make(ctx.block(), state(ctx, "b"))));
            };
            return new Case(body, made::toString);
        });
        assertEquals("ok " + 3 * 2 * size, out);
    }

    /** A tile of 16 made over a state that another tile makes on too: a clash, the same as on strands. */
    @Test
    void twoTilesMakingOnOneState() {
        String out = assertSame(Dim3.of(1), Dim3.of(32), () -> {
            Map<Integer, String> messages = new ConcurrentHashMap<>();
            KernelBody body = ctx -> {
                PipelineSharedState s = state(ctx, "s");
                ctx.syncThreads();
                try {
                    Pipeline.make(ctx.tiledPartition(16), s).quit();
                    messages.put(ctx.threadRank(), "made");
                } catch (IllegalArgumentException e) {
                    messages.put(ctx.threadRank(), "failed");
                }
            };
            return new Case(body, () -> String.valueOf(new TreeMap<>(messages).size()));
        });
        assertEquals("ok 32", out);
    }

    // -----------------------------------------------------------------------------------------------------------
    // Sizes

    @Test
    void aBlockOf1024ThreadsMakesWithoutAStackPerThread() {
        int size = 1024;
        Supplier<Case> make = () -> {
            AtomicInteger made = new AtomicInteger();
            KernelBody body = ctx -> {
                PipelineSharedState s = state(ctx, "s");
                Pipeline p = Pipeline.make(ctx.block(), s, ctx.threadRank() < 512 ? PipelineRole.PRODUCER
                    : PipelineRole.CONSUMER);
                p.quit();
                Pipeline q = Pipeline.make(ctx.block(), s);
                q.quit();
                made.incrementAndGet();
            };
            return new Case(body, made::toString);
        };
        Case compiled = make.get();
        assertOnScheduler(compiled.body());
        long strands = Strand.MADE.sum();
        String out = assertTimeoutPreemptively(BOUND, () -> outcome(Dim3.of(1), Dim3.of(size), compiled.body(),
            compiled.out()));
        long made = Strand.MADE.sum() - strands;
        assertEquals("ok " + size, out);
        assertTrue(made < 64, "strands made for 1024 threads that meet only at makes: " + made);
        assertEquals(out, assertSame(Dim3.of(1), Dim3.of(size), make));
    }

    @Test
    void aGridOfManyBlocks() {
        int blocks = 96;
        int size = 40;
        String out = assertSame(Dim3.of(blocks), Dim3.of(size), () -> {
            AtomicInteger made = new AtomicInteger();
            KernelBody body = ctx -> {
                PipelineSharedState s = state(ctx, "s");
                made.addAndGet(use(Pipeline.make(ctx.block(), s)));
                Pipeline p = Pipeline.make(ctx.block(), s, 1 + ctx.blockIdx().x() % (size - 1));
                p.quit();
            };
            return new Case(body, made::toString);
        });
        assertEquals("ok " + blocks * size, out);
    }

    // -----------------------------------------------------------------------------------------------------------
    // Checked execution

    private static final int N = 8;

    /** Makes in a loop with a disagreement at one round, a pipeline used between: checked, its result. */
    private static Supplier<String> checkedKernel() {
        return () -> {
            int[] out = new int[N];
            String[] failed = new String[N];
            Kernel.launch(Dim3.of(1), Dim3.of(N), 0, ctx -> {
                PipelineSharedState s = ctx.shared("s", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
                int t = ctx.threadRank();
                for (int round = 0; round < 3; round++) {
                    try {
                        Pipeline p = Pipeline.make(ctx.block(), s, round == 1 && t == 2 ? 2 : 1);
                        if (t == 0) {
                            p.producerAcquire();
                            p.producerCommit();
                        } else {
                            p.consumerWait();
                            out[t] += round + 1;
                            p.consumerRelease();
                        }
                        p.quit();
                    } catch (IllegalArgumentException e) {
                        failed[t] = "round " + round;
                    }
                }
            });
            return java.util.Arrays.toString(out) + java.util.Arrays.toString(failed);
        };
    }

    private static String checkedOutcome(long seed, Supplier<String> run) {
        Outcome<String> o = CheckedExecution.replay(Schedule.of(seed), run::get);
        return "decisions " + o.decisions() + ", result " + o.result() + ", finding "
            + (o.finding() == null ? "none" : o.finding().kind() + ": " + o.finding().message());
    }

    /** Checked: rank 0 syncs where the others make, or returns: the same finding or report as on strands. */
    @Test
    void checkedDivergentMakesAreFoundAsOnStrands() {
        for (boolean returns : new boolean[] {false, true}) {
            Supplier<String> run = () -> {
                String[] failed = new String[N];
                Kernel.launch(Dim3.of(1), Dim3.of(N), 0, ctx -> {
                    PipelineSharedState s = ctx.shared("s", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
                    int t = ctx.threadRank();
                    if (t == 0) {
                        if (returns) {
                            return;
                        }
                        ctx.syncThreads();
                        ctx.syncThreads();
                        return;
                    }
                    try {
                        Pipeline.make(ctx.block(), s).quit();
                    } catch (IllegalArgumentException e) {
                        failed[t] = "failed";
                    }
                });
                return java.util.Arrays.toString(failed);
            };
            long seed = Long.getLong("jpipeline.simt.seed", System.nanoTime());
            for (int i = 0; i < 4; i++) {
                long s = seed + i;
                String compiled = assertTimeoutPreemptively(BOUND, () -> checkedOutcomeOrFailure(s, run));
                // a site on strands names the kernel's caller too (a runtime frame): not the make's concern
                String strands = assertTimeoutPreemptively(BOUND, () -> onStrands(() -> checkedOutcomeOrFailure(s,
                    run))).replaceAll(" from Strand\\.runThread\\(Strand\\.java:\\d+\\)", "");
                System.out.println("CompiledMakeHostileTest checked: " + compiled);
                assertEquals(strands, compiled, "schedule " + s + " (returns " + returns + "): compiled against "
                    + "strands");
            }
        }
    }

    private static String checkedOutcomeOrFailure(long seed, Supplier<String> run) {
        try {
            return checkedOutcome(seed, run);
        } catch (KernelFailure f) {
            return "failure " + f.getMessage().replaceAll("\\d+ ms", "N ms");
        }
    }

    @Test
    void checkedSchedulesOfMakesDecideAsOnStrands() {
        KernelBody probe = ctx -> {
            PipelineSharedState s = ctx.shared("s", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
            Pipeline.make(ctx.block(), s).quit();
        };
        assertOnScheduler(probe);
        long seed = Long.getLong("jpipeline.simt.seed", System.nanoTime());
        System.out.println("CompiledMakeHostileTest seed " + seed);
        long compiledBlocks = Kernel.runs().compiledBlocks();
        for (int i = 0; i < 12; i++) {
            long s = seed + i;
            String compiled = assertTimeoutPreemptively(BOUND, () -> checkedOutcome(s, checkedKernel()));
            String strands = assertTimeoutPreemptively(BOUND, () -> onStrands(() -> checkedOutcome(s,
                checkedKernel())));
            assertEquals(strands, compiled, "schedule " + s + ": compiled against strands");
        }
        assertEquals(12, Kernel.runs().compiledBlocks() - compiledBlocks, "each compiled schedule's block ran compiled");
    }

    /**
     * One state of device scope made on by every block at once (a shared state belongs to one group at a time):
     * in each block every rank must get the same answer, a pipeline or the clash, and nothing may hang.
     * Before MakeRendezvous sealed its make's lead, ranks of one block split as [1, 0, 0, 32] of 32 (strands) and
     * [32, 32, 5, 0] (compiled): a rank decided by the clash count as it read it, and another block's clash could
     * be counted between two ranks' reads.
     */
    @Test
    void blocksMakingOnOneDeviceStateAtOnceAgreeWithinEachBlock() {
        int blocks = 4;
        int size = 32;
        for (boolean compiled : new boolean[] {true, false}) {
            Supplier<String> run = () -> {
                java.util.List<String> mixed = new java.util.ArrayList<>();
                for (int launch = 0; launch < 30; launch++) {
                    PipelineSharedState shared = PipelineSharedState.create(ThreadScope.DEVICE, 2);
                    AtomicIntegerArray made = new AtomicIntegerArray(blocks);
                    String o = assertTimeoutPreemptively(BOUND, () -> outcome(Dim3.of(blocks), Dim3.of(size), ctx -> {
                        try {
                            Pipeline.make(ctx.block(), shared).quit();
                            made.incrementAndGet(ctx.blockIdx().x());
                        } catch (IllegalArgumentException e) {
                            // a clash
                        }
                    }, made::toString));
                    for (int b = 0; b < blocks; b++) {
                        if (!o.startsWith("ok") || made.get(b) != 0 && made.get(b) != size) {
                            mixed.add("launch " + launch + ": " + o);
                            break;
                        }
                    }
                }
                return mixed.toString();
            };
            String r = compiled ? run.get() : onStrands(run);
            System.out.println("CompiledMakeHostileTest device state (compiled " + compiled + "): " + r);
            assertEquals("[]", r, "compiled " + compiled);
        }
    }

    /**
     * Three launches at once, of blocks of 32, 8 and 3 threads, make on one device state (a misuse): within each
     * block every thread gets the same answer, a block that got a pipeline runs a round on it (a ring shared with
     * another block would fail or hang it), and nothing hangs. Compiled and on strands.
     */
    @Test
    void launchesOfMixedBlockSizesMakingOnOneDeviceStateAtOnceAgreeWithinEachBlock() {
        int[][] shapes = {{2, 32}, {3, 8}, {4, 3}};     // {blocks, threads per block}
        for (boolean compiled : new boolean[] {true, false}) {
            Supplier<String> run = () -> {
                java.util.List<String> mixed = new java.util.ArrayList<>();
                for (int launch = 0; launch < 10; launch++) {
                    PipelineSharedState shared = PipelineSharedState.create(ThreadScope.DEVICE, 2);
                    java.util.concurrent.CyclicBarrier together = new java.util.concurrent.CyclicBarrier(shapes.length);
                    String[] outcomes = new String[shapes.length];
                    AtomicIntegerArray[] made = new AtomicIntegerArray[shapes.length];
                    Thread[] launchers = new Thread[shapes.length];
                    for (int k = 0; k < shapes.length; k++) {
                        int kk = k;
                        made[k] = new AtomicIntegerArray(shapes[k][0]);
                        launchers[k] = Thread.ofPlatform().start(() -> {
                            try {
                                together.await(10, java.util.concurrent.TimeUnit.SECONDS);
                            } catch (Exception e) {
                                outcomes[kk] = "not started: " + e;
                                return;
                            }
                            outcomes[kk] = outcome(Dim3.of(shapes[kk][0]), Dim3.of(shapes[kk][1]), ctx -> {
                                Pipeline p;
                                try {
                                    p = Pipeline.make(ctx.block(), shared);
                                } catch (IllegalArgumentException e) {
                                    return;     // a clash
                                }
                                made[kk].incrementAndGet(ctx.blockIdx().x());
                                p.producerAcquire();
                                p.producerCommit();
                                p.consumerWait();
                                p.consumerRelease();
                                p.quit();
                            }, made[kk]::toString);
                        });
                    }
                    assertTimeoutPreemptively(BOUND, () -> {
                        for (Thread t : launchers) {
                            t.join();
                        }
                    });
                    for (int k = 0; k < shapes.length; k++) {
                        boolean split = false;
                        for (int b = 0; b < shapes[k][0]; b++) {
                            split |= made[k].get(b) != 0 && made[k].get(b) != shapes[k][1];
                        }
                        if (!outcomes[k].startsWith("ok") || split) {
                            mixed.add("launch " + launch + ", blocks of " + shapes[k][1] + ": " + outcomes[k]);
                        }
                    }
                }
                return mixed.toString();
            };
            String r = compiled ? run.get() : onStrands(run);
            System.out.println("CompiledMakeHostileTest mixed block sizes (compiled " + compiled + "): " + r);
            assertEquals("[]", r, "compiled " + compiled);
        }
    }
}
