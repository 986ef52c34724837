package dev.jpipeline.simt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Kernels that try to hide a resumption point from ResumptionScan (issue 27, slice 1), and plain launches
 * (Strand.runPlainBlock) that must behave as on strands. Each false-plain kernel here uses its warp or syncs
 * through code the scan does not see; run as a plain loop it dies with a NullPointerException (no warps, no barrier)
 * where on strands it gives the right result.
 */
@Timeout(60)
class ResumptionScanEvasionTest {

    /** The context of the thread running now, stashed by the kernel (a putstatic, which the scan admits). */
    static volatile KernelContext stash;
    static volatile MemorySegment out;

    /** Code the scan never sees: records the caller's warp size at out[threadRank]. */
    static int hidden() {
        KernelContext ctx = stash;
        int size = ctx.warp().size();
        out.setAtIndex(ValueLayout.JAVA_INT, ctx.threadRank(), size);
        return size;
    }

    private static MemorySegment fresh(int ints) {
        MemorySegment m = Arena.ofAuto().allocate(4L * ints);
        m.fill((byte) -1);
        out = m;
        return m;
    }

    private static void assertEveryThreadSawItsWarp(MemorySegment m, int threads) {
        for (int r = 0; r < threads; r++) {
            assertEquals(Math.min(32, threads - r / 32 * 32), m.getAtIndex(ValueLayout.JAVA_INT, r), "thread " + r);
        }
    }

    // ---- 1. a sub-interface of KernelBody whose default run syncs: the lambda implements the other method ----

    /** Two phases with __syncthreads between them: a user's own kernel shape, the sync in the interface. */
    interface TwoPhase extends KernelBody {
        void phase(KernelContext ctx, int phase);

        @Override
        default void run(KernelContext ctx) {
            phase(ctx, 0);
            ctx.syncThreads();
            phase(ctx, 1);
        }
    }

    @Test
    void aLambdaOfASubInterfaceWhoseDefaultRunSyncsIsNotPlain() {
        int n = 64;
        MemorySegment result = Arena.ofAuto().allocate(4L * n);
        TwoPhase body = (ctx, phase) -> {
            MemorySegment s = ctx.dynamicShared();
            int r = ctx.threadRank();
            if (phase == 0) {
                ctx.storeInt(s, r, r * 10);
            } else {
                result.setAtIndex(ValueLayout.JAVA_INT, r, ctx.loadInt(s, (r + 1) % n));
            }
        };
        Kernel.launch(Dim3.of(1), Dim3.of(n), 4L * n, body);
        for (int r = 0; r < n; r++) {
            assertEquals((r + 1) % n * 10, result.getAtIndex(ValueLayout.JAVA_INT, r), "thread " + r);
        }
        assertFalse(ResumptionScan.scan(body).plain(), "TwoPhase.run syncs, but the scan read only the lambda's body");
    }

    // ---- 2. JDK constructors and methods that call user code ----

    /** A Throwable whose toString the scan never reads. */
    static final class Sneaky extends RuntimeException {
        @Override
        public String toString() {
            return "sneaky " + hidden();
        }
    }

    static final Throwable SNEAKY = new Sneaky();
    static final Object SNEAKY_OBJECT = new Object() {
        @Override
        public String toString() {
            return "sneaky " + hidden();
        }
    };

    @Test
    void aJdkThrowableConstructorThatCallsTheCausesToStringIsNotPlain() {
        MemorySegment m = fresh(40);
        KernelBody body = ctx -> {
            stash = ctx;
            new IllegalStateException(SNEAKY);  // Throwable(Throwable) calls cause.toString()
        };
        Kernel.launch(Dim3.of(1), Dim3.of(40), 0, body);
        assertEveryThreadSawItsWarp(m, 40);
        assertFalse(ResumptionScan.scan(body).plain(), "Throwable(Throwable) calls the cause's toString (user code)");
    }

    @Test
    void anAssertionErrorOfAnObjectIsNotPlain() {
        MemorySegment m = fresh(40);
        KernelBody body = ctx -> {
            stash = ctx;
            new AssertionError(SNEAKY_OBJECT);  // AssertionError(Object) calls String.valueOf(detail)
        };
        Kernel.launch(Dim3.of(1), Dim3.of(40), 0, body);
        assertEveryThreadSawItsWarp(m, 40);
        assertFalse(ResumptionScan.scan(body).plain(), "AssertionError(Object) calls its toString (user code)");
    }

    /** A user Throwable whose constructor is plain, but whose fillInStackTrace (called by Throwable's) is not. */
    static final class Tracing extends RuntimeException {
        Tracing() {
            super();
        }

        @Override
        public synchronized Throwable fillInStackTrace() {
            hidden();
            return this;
        }
    }

    @Test
    void aUserThrowableThatOverridesFillInStackTraceIsNotPlain() {
        MemorySegment m = fresh(40);
        KernelBody body = ctx -> {
            stash = ctx;
            new Tracing();
        };
        Kernel.launch(Dim3.of(1), Dim3.of(40), 0, body);
        assertEveryThreadSawItsWarp(m, 40);
        assertFalse(ResumptionScan.scan(body).plain(), "Throwable() calls the overriding fillInStackTrace");
    }

    static final CharSequence DIGITS = new CharSequence() {
        @Override
        public int length() {
            hidden();
            return 1;
        }

        @Override
        public char charAt(int index) {
            return '7';
        }

        @Override
        public CharSequence subSequence(int start, int end) {
            return this;
        }
    };

    @Test
    void integerParseIntOfAUserCharSequenceIsNotPlain() {
        MemorySegment m = fresh(40);
        KernelBody body = ctx -> {
            stash = ctx;
            Integer.parseInt(DIGITS, 0, 1, 10);     // calls DIGITS.length() and charAt (user code)
        };
        Kernel.launch(Dim3.of(1), Dim3.of(40), 0, body);
        assertEveryThreadSawItsWarp(m, 40);
        assertFalse(ResumptionScan.scan(body).plain(), "Integer.parseInt(CharSequence, ...) calls user code");
    }

    static int fromTarget(int v) {
        return v + hidden() * 0;
    }

    static int toTarget(int v) {
        return v;
    }

    static final VarHandle FILTERED;

    static {
        try {
            MethodType intToInt = MethodType.methodType(int.class, int.class);
            FILTERED = MethodHandles.filterValue(ValueLayout.JAVA_INT.varHandle(),
                MethodHandles.lookup().findStatic(ResumptionScanEvasionTest.class, "toTarget", intToInt),
                MethodHandles.lookup().findStatic(ResumptionScanEvasionTest.class, "fromTarget", intToInt));
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @Test
    void aVarHandleWithAUserFilterIsNotPlain() {
        MemorySegment m = fresh(40);
        MemorySegment data = Arena.ofAuto().allocate(4L * 40);
        KernelBody body = ctx -> {
            stash = ctx;
            int v = (int) FILTERED.get(data, 4L * ctx.threadRank());   // runs fromTarget (user code)
        };
        Kernel.launch(Dim3.of(1), Dim3.of(40), 0, body);
        assertEveryThreadSawItsWarp(m, 40);
        assertFalse(ResumptionScan.scan(body).plain(), "a VarHandle combinator runs user method handles");
    }

    /** Initialized by the first getstatic, in a kernel thread: the scan does not read static initializers. */
    static final class Lazy {
        static final int VALUE = hidden();
    }

    @Test
    void aGetstaticThatInitializesAUserClassIsNotPlain() {
        MemorySegment m = fresh(1);
        KernelBody body = ctx -> {
            stash = ctx;
            out.setAtIndex(ValueLayout.JAVA_INT, 0, Lazy.VALUE);
        };
        Kernel.launch(Dim3.of(1), Dim3.of(1), 0, body);
        assertEquals(1, m.getAtIndex(ValueLayout.JAVA_INT, 0));
        assertFalse(ResumptionScan.scan(body).plain(), "Lazy.<clinit> runs user code on the first getstatic");
    }

    // ---- 3. shapes the scan must refuse (expected to hold) ----

    static class Overridable implements KernelBody {
        @Override
        public void run(KernelContext ctx) {
            step(ctx);
        }

        void step(KernelContext ctx) {
        }
    }

    static final class SyncingStep extends Overridable {
        @Override
        void step(KernelContext ctx) {
            ctx.syncThreads();
        }
    }

    static final class Holder {
        private KernelContext kept;

        void keep(KernelContext ctx) {
            kept = ctx;
        }

        void sync() {
            kept.syncThreads();
        }
    }

    static class Instance {
        void kernel(KernelContext ctx) {
        }
    }

    static final class Syncing extends Instance {
        @Override
        void kernel(KernelContext ctx) {
            ctx.syncThreads();
        }
    }

    record RecordKernel(int k) implements KernelBody {
        @Override
        public void run(KernelContext ctx) {
            ctx.block().sync();
        }
    }

    @SuppressWarnings("ConstantConditions")
    @Test
    void shapesThatHideASyncAreNotPlain() {
        boolean never = Boolean.parseBoolean("false");
        Instance inst = new Syncing();
        Holder holder = new Holder();
        List<KernelBody> bodies = List.of(
            new SyncingStep(),                               // inherited run, overridden helper
            new Overridable(),                               // the helper is overridable
            inst::kernel,                                    // a method reference to an overridable method
            ctx -> {                                         // a sync behind a local variable
                ThreadBlock b = ctx.block();
                b.sync();
            },
            ctx -> {                                         // a sync on a branch never taken
                if (never) {
                    ctx.syncThreads();
                }
            },
            ctx -> {                                         // the context stored in a field by a helper
                holder.keep(ctx);
                holder.sync();
            },
            ctx -> {                                         // a lambda in a lambda
                Runnable r = () -> ctx.syncWarp();
                r.run();
            },
            ctx -> PipelinePrimitives.pipelineCommit(),
            new RecordKernel(1),
            new KernelBody() {
                @Override
                public void run(KernelContext ctx) {
                    ctx.warp().sync();
                }
            });
        for (KernelBody b : bodies) {
            ResumptionScan.Verdict v = ResumptionScan.scan(b);
            assertFalse(v.plain(), b.getClass().getName());
        }
    }

    // ---- 4. the plain runner (expected to hold) ----

    private static KernelBody indices(MemorySegment m) {
        return ctx -> m.setAtIndex(ValueLayout.JAVA_LONG, ctx.globalRank(), ctx.globalRank() * 7 + ctx.threadRank()
            + 1000L * ctx.threadIdx().y() + 100_000L * ctx.blockIdx().z());
    }

    private static void checkIndices(MemorySegment m, Dim3 grid, Dim3 block) {
        long threads = (long) grid.volume() * block.volume();
        for (long g = 0; g < threads; g++) {
            int r = (int) (g % block.volume());
            int b = (int) (g / block.volume());
            long expected = g * 7 + r + 1000L * block.index(r).y() + 100_000L * grid.index(b).z();
            assertEquals(expected, m.getAtIndex(ValueLayout.JAVA_LONG, g), "thread " + g);
        }
    }

    @Test
    void oddBlocksHugeGridsAndCooperativeLaunchesGiveTheRightIndices() {
        Dim3[][] shapes = {
            {Dim3.of(3, 2, 2), Dim3.of(7, 5, 3)},           // 105 threads: a partial last warp
            {Dim3.of(20_000), Dim3.of(3)},
            {Dim3.of(2), Dim3.of(1024)},
            {Dim3.of(1), Dim3.of(1)},
        };
        for (Dim3[] s : shapes) {
            MemorySegment m = Arena.ofAuto().allocate(8L * s[0].volume() * s[1].volume());
            m.fill((byte) -1);
            Kernel.launch(s[0], s[1], 0, indices(m));
            checkIndices(m, s[0], s[1]);
        }
        MemorySegment m = Arena.ofAuto().allocate(8L * 4 * 70);
        KernelBody body = indices(m);
        long before = Launch.PLAIN_BLOCKS.sum();
        Kernel.launchCooperative(Dim3.of(4), Dim3.of(70), 0, body);
        checkIndices(m, Dim3.of(4), Dim3.of(70));
        if (ResumptionScan.switchedOn()) {
            assertEquals(4, Launch.PLAIN_BLOCKS.sum() - before);
        }
    }

    @Test
    void dynamicSharedMemoryInAPlainKernel() {
        Dim3 grid = Dim3.of(9);
        Dim3 block = Dim3.of(50);
        MemorySegment m = Arena.ofAuto().allocate(4L * grid.volume() * block.volume());
        KernelBody body = ctx -> {
            MemorySegment s = ctx.dynamicShared();
            int r = ctx.threadRank();
            ctx.storeInt(s, r, (int) ctx.globalRank());
            s.setAtIndex(ValueLayout.JAVA_FLOAT, 64 + r, r);
            ctx.storeFloat(s, 128 + r, ctx.loadFloat(s, 64 + r) + 1);
            m.setAtIndex(ValueLayout.JAVA_INT, ctx.globalRank(), ctx.loadInt(s, r) + (int) ctx.loadFloat(s, 128 + r));
        };
        if (ResumptionScan.switchedOn()) {
            assertNull(ResumptionScan.scan(body).reason());
        }
        Kernel.launch(grid, block, 4L * 256, body);
        for (int g = 0; g < grid.volume() * block.volume(); g++) {
            assertEquals(g + g % 50 + 1, m.getAtIndex(ValueLayout.JAVA_INT, g), "thread " + g);
        }
    }

    @Test
    void concurrentLaunchesFromSeveralThreads() throws Exception {
        int launchers = 4;
        ExecutorService pool = Executors.newFixedThreadPool(launchers);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < launchers; t++) {
                int shape = t;
                done.add(pool.submit(() -> {
                    go.await();
                    for (int i = 0; i < 20; i++) {
                        Dim3 grid = Dim3.of(5 + shape, 2);
                        Dim3 block = Dim3.of(33 + shape * 10);
                        MemorySegment m = Arena.ofAuto().allocate(8L * grid.volume() * block.volume());
                        Kernel.launch(grid, block, 0, indices(m));
                        checkIndices(m, grid, block);
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> f : done) {
                f.get(30, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void failuresNameTheirThreadAndBlockAndTheNextLaunchWorks() {
        Dim3 grid = Dim3.of(3, 2);
        Dim3 block = Dim3.of(5, 7);
        KernelBody body = ctx -> {
            if (ctx.blockIdx().equals(new Dim3(2, 1, 0)) && ctx.threadIdx().equals(new Dim3(3, 4, 0))) {
                throw new IllegalArgumentException("no");
            }
        };
        KernelFailure f = assertThrows(KernelFailure.class, () -> Kernel.launch(grid, block, 0, body));
        assertTrue(f.getMessage().contains("thread " + new Dim3(3, 4, 0) + " of block " + new Dim3(2, 1, 0)),
            f.getMessage());
        assertInstanceOf(IllegalArgumentException.class, f.getCause());
        KernelBody deep = new KernelBody() {
            @Override
            public void run(KernelContext ctx) {
                if (ctx.globalRank() == 77) {
                    recurse(0);
                }
            }

            private int recurse(int n) {
                return recurse(n + 1) + 1;
            }
        };
        KernelFailure so = assertThrows(KernelFailure.class, () -> Kernel.launch(Dim3.of(4), Dim3.of(40), 0, deep));
        assertInstanceOf(StackOverflowError.class, so.getCause());
        assertTrue(so.getMessage().contains("thread " + new Dim3(37, 0, 0) + " of block " + new Dim3(1, 0, 0)),
            so.getMessage());
        MemorySegment m = Arena.ofAuto().allocate(8L * grid.volume() * block.volume());
        Kernel.launch(grid, block, 0, indices(m));
        checkIndices(m, grid, block);
    }

    @Test
    void aCheckedExecutionNeverRunsAPlainBlock() {
        MemorySegment m = Arena.ofAuto().allocate(8L * 2 * 40);
        KernelBody body = indices(m);
        long before = Launch.PLAIN_BLOCKS.sum();
        Outcome<Boolean> o = CheckedExecution.replay(Schedule.of(7), () -> {
            Kernel.launch(Dim3.of(2), Dim3.of(40), 0, body);
            return true;
        });
        assertNull(o.finding());
        assertEquals(0, Launch.PLAIN_BLOCKS.sum() - before);
        checkIndices(m, Dim3.of(2), Dim3.of(40));
    }
}
