package dev.jpipeline.simt;

import static dev.jpipeline.simt.CompiledOrStrands.assertCompiled;
import static dev.jpipeline.simt.CompiledOrStrands.onStrands;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A hostile review of compiled kernels (issue 27): kernels whose compiled run could differ from the same kernel run
 * on strands ({@code -Djpipeline.simt.compile=false}). Each test runs the kernel both ways, or states what strands
 * do, and asks for the same observable result.
 */
class RegionCompilerFidelityTest {

    @BeforeEach
    void compilationOn() {
        assumeTrue(ResumptionScan.switchedOn(), "compilation switched off for this run");
    }

    private static String launch(Dim3 grid, Dim3 block, KernelBody body, int[] out) {
        return CompiledOrStrands.outcome(grid, block, body, () -> Arrays.toString(out));
    }

    /** Runs a fresh kernel compiled, then a fresh one on strands; returns both outcomes. */
    private static String[] bothWays(Dim3 grid, Dim3 block, int outSize,
                                     java.util.function.Function<int[], KernelBody> kernel) {
        int[] first = new int[outSize];
        KernelBody body = kernel.apply(first);
        assertCompiled(body);
        String compiled = launch(grid, block, body, first);
        int[] second = new int[outSize];
        String strands = onStrands(() -> launch(grid, block, kernel.apply(second), second));
        return new String[] {compiled, strands};
    }

    private static void assertSame(String[] outcomes) {
        assertEquals(outcomes[1], outcomes[0], "compiled (actual) against strands (expected)");
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Finding 1: a static method reference to another class's method does not initialize that class when compiled.

    /** Records which of the kernel classes below had their static initializer run. */
    static final class Initialized {
        static final java.util.Set<String> CLASSES = java.util.concurrent.ConcurrentHashMap.newKeySet();
    }

    static final class LazyKernelsCompiled {
        static {
            Initialized.CLASSES.add("compiled");
        }

        static void kernel(KernelContext ctx) {
            ctx.syncThreads();
        }
    }

    static final class LazyKernelsOnStrands {
        static {
            Initialized.CLASSES.add("strands");
        }

        static void kernel(KernelContext ctx) {
            ctx.syncThreads();
        }
    }

    /**
     * FINDING (fixed). {@code Kernels::kernel} names a static method of a class the launch has not used yet: strands call
     * it (invokestatic), which initializes its class first (JLS 12.4.1); the compiled step is a copy of its code in
     * another class and never initializes it. The static initializer's effects are lost.
     */
    @Test
    void aStaticMethodReferenceInitializesItsClassAsACallDoes() {
        KernelBody strands = LazyKernelsOnStrands::kernel;
        onStrands(() -> {
            Kernel.launch(Dim3.of(2), Dim3.of(8), 0, strands);
            return null;
        });
        assertEquals(true, Initialized.CLASSES.contains("strands"), "strands: the call initialized its class");
        KernelBody compiled = LazyKernelsCompiled::kernel;
        assertCompiled(compiled);
        Kernel.launch(Dim3.of(2), Dim3.of(8), 0, compiled);
        assertEquals(true, Initialized.CLASSES.contains("compiled"), "compiled: its class was not initialized");
    }

    static final class FailingInitCompiled {
        static final int LIMIT = Integer.getInteger("hostile.limit", 0);

        static {
            if (LIMIT == 0) {
                throw new IllegalStateException("no limit configured");
            }
        }

        static void kernel(KernelContext ctx) {
            ctx.syncThreads();
        }
    }

    static final class FailingInitOnStrands {
        static final int LIMIT = Integer.getInteger("hostile.limit", 0);

        static {
            if (LIMIT == 0) {
                throw new IllegalStateException("no limit configured");
            }
        }

        static void kernel(KernelContext ctx) {
            ctx.syncThreads();
        }
    }

    /**
     * FINDING (fixed). The same with a static initializer that fails: on strands the launch fails (thread (0, 0, 0) gets the
     * ExceptionInInitializerError); compiled, the launch succeeds and the error is silently dropped.
     */
    @Test
    void aKernelWhoseClassFailsToInitializeFailsTheLaunch() {
        KernelBody strands = FailingInitOnStrands::kernel;
        KernelFailure onStrands = assertThrows(KernelFailure.class, () -> onStrands(() -> {
            Kernel.launch(Dim3.of(1), Dim3.of(4), 0, strands);
            return null;
        }));
        assertEquals(ExceptionInInitializerError.class, onStrands.getCause().getClass());
        KernelBody compiled = FailingInitCompiled::kernel;
        assertCompiled(compiled);
        KernelFailure failure = assertThrows(KernelFailure.class, () -> Kernel.launch(Dim3.of(1), Dim3.of(4), 0,
            compiled), "compiled: the class's failing initializer never ran");
        assertEquals(onStrands.getMessage().lines().findFirst(), failure.getMessage().lines().findFirst());
        assertEquals(ExceptionInInitializerError.class, failure.getCause().getClass());
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Held (regression tests that pass).

    /** HELD. A sync in a finally block (javac copies it to the normal and the exceptional path). */
    @Test
    void aSyncInAFinallyBlockOnBothPaths() {
        assertSame(bothWays(Dim3.of(2), Dim3.of(6), 12, out -> ctx -> {
            int t = ctx.threadRank();
            long wide = 1L << 40 | t;
            double d = t * 0.5;
            try {
                if (t % 2 == 0) {
                    throw new IllegalArgumentException("even");
                }
                out[t + 6 * ctx.blockIdx().x()] = 1;
            } catch (IllegalArgumentException e) {
                out[t + 6 * ctx.blockIdx().x()] = 2;
            } finally {
                ctx.syncThreads();
                out[t + 6 * ctx.blockIdx().x()] += (int) (wide >>> 40) * 10 + (int) (d * 100);
            }
        }));
    }

    /** HELD. Locals of every type, wide ones in odd slots, across syncs in nested loops, a switch and a break. */
    @Test
    void everyKindOfLocalAcrossSyncsInLoopsAndSwitches() {
        assertSame(bothWays(Dim3.of(2), Dim3.of(33), 66, out -> ctx -> {
            byte b = (byte) ctx.threadRank();
            long l = -7L * ctx.threadRank();
            char c = (char) ('a' + ctx.threadRank());
            double d = Math.sqrt(ctx.threadRank());
            short s = (short) (-ctx.threadRank());
            float f = ctx.threadRank() / 3f;
            boolean z = ctx.threadRank() % 3 == 0;
            String str = null;
            var arr = new long[] {l};
            Object o = null;
            outer:
            for (int i = 0; i < 3; i++) {
                for (long j = 0; j < 2; j++) {
                    switch ((int) (i + j) % 3) {
                        case 0 -> {
                            ctx.syncThreads();
                            l += j;
                        }
                        case 1 -> {
                            d += f;
                            ctx.block().sync();
                            str = "s" + i;
                        }
                        default -> {
                            ctx.syncThreads();
                            if (i == 2 && j == 1) {
                                break outer;
                            }
                            o = arr;
                        }
                    }
                    arr[0] += l;
                }
            }
            int t = ctx.threadRank() + 33 * ctx.blockIdx().x();
            out[t] = (int) (b + l + c + (long) (d * 1000) + s + (int) (f * 100) + (z ? 1 : 0)
                + (str == null ? 0 : str.length()) + arr[0] + (o == null ? 0 : 5));
        }));
    }

    /** HELD. A kernel that reassigns its context parameter to another thread's value of it. */
    @Test
    void aKernelThatStoresIntoItsContextParameter() {
        assertSame(bothWays(Dim3.of(2), Dim3.of(3), 6, out -> ctx -> {
            int t = ctx.threadRank() + 3 * ctx.blockIdx().x();
            KernelContext original = ctx;
            ctx.syncThreads();
            ctx = original;
            out[t] = 1;
            ctx.syncThreads();
            out[t] += ctx.threadRank();
        }));
    }

    /** A kernel of many syncs and many live locals (a method near the size limit). */
    @Test
    void aLargeKernel() {
        String[] outcomes = bothWays(Dim3.of(1), Dim3.of(4), 4, out -> ctx -> {
            int t = ctx.threadRank();
            int a0 = t, a1 = t + 1, a2 = t + 2, a3 = t + 3, a4 = t + 4, a5 = t + 5, a6 = t + 6, a7 = t + 7;
            long b0 = t, b1 = t + 1, b2 = t + 2, b3 = t + 3, b4 = t + 4, b5 = t + 5, b6 = t + 6, b7 = t + 7;
            double c0 = t, c1 = t + 1, c2 = t + 2, c3 = t + 3, c4 = t + 4, c5 = t + 5, c6 = t + 6, c7 = t + 7;
            for (int i = 0; i < 4; i++) {
                a0 += a1; ctx.syncThreads(); a1 += a2; ctx.syncThreads(); a2 += a3; ctx.syncThreads();
                a3 += a4; ctx.syncThreads(); a4 += a5; ctx.syncThreads(); a5 += a6; ctx.syncThreads();
                a6 += a7; ctx.syncThreads(); b0 += b1; ctx.syncThreads(); b1 += b2; ctx.syncThreads();
                b2 += b3; ctx.syncThreads(); b3 += b4; ctx.syncThreads(); b4 += b5; ctx.syncThreads();
                b5 += b6; ctx.syncThreads(); b6 += b7; ctx.syncThreads(); c0 += c1; ctx.syncThreads();
                c1 += c2; ctx.syncThreads(); c2 += c3; ctx.syncThreads(); c3 += c4; ctx.syncThreads();
                c4 += c5; ctx.syncThreads(); c5 += c6; ctx.syncThreads(); c6 += c7; ctx.syncThreads();
            }
            out[t] = (int) (a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + b0 + b1 + b2 + b3 + b4 + b5 + b6 + b7
                + c0 + c1 + c2 + c3 + c4 + c5 + c6 + c7);
        });
        assertSame(outcomes);
    }

    /** HELD. A record kernel, an enum kernel, an anonymous and a local class, and a generic superclass's run. */
    record RecordKernel(int[] out) implements KernelBody {
        @Override
        public void run(KernelContext ctx) {
            int t = ctx.threadRank();
            out[t] = t;
            ctx.syncThreads();
            int next = out()[(t + 1) % ctx.blockDim().x()];
            ctx.syncThreads();
            out[t] += next * 10;
        }
    }

    abstract static class GenericBase<T> implements KernelBody {
        final int[] out;

        GenericBase(int[] out) {
            this.out = out;
        }

        @Override
        public void run(KernelContext ctx) {
            int t = ctx.threadRank();
            out[t] = t + 1;
            ctx.syncThreads();
            int next = out[(t + 1) % ctx.blockDim().x()];
            ctx.syncThreads();
            out[t] += next * 100;
        }
    }

    static final class Derived extends GenericBase<String> {
        Derived(int[] out) {
            super(out);
        }
    }

    @Test
    void classKernelsOfEveryShape() {
        assertSame(bothWays(Dim3.of(1), Dim3.of(5), 5, RecordKernel::new));
        assertSame(bothWays(Dim3.of(1), Dim3.of(5), 5, Derived::new));
        assertSame(bothWays(Dim3.of(1), Dim3.of(5), 5, out -> new KernelBody() {
            @Override
            public void run(KernelContext ctx) {
                int t = ctx.threadRank();
                out[t] = t + 2;
                ctx.syncThreads();
                int next = out[(t + 1) % ctx.blockDim().x()];
                ctx.syncThreads();
                out[t] += next * 7;
            }
        }));
    }

    /** HELD. The same compiled kernel class launched from several threads at once. */
    @Test
    void concurrentLaunchesOfOneKernelClass() throws Exception {
        int launches = 4;
        int[][] outs = new int[launches][64];
        Thread[] threads = new Thread[launches];
        AtomicInteger failures = new AtomicInteger();
        for (int i = 0; i < launches; i++) {
            int[] out = outs[i];
            int salt = i;
            threads[i] = Thread.ofPlatform().start(() -> {
                try {
                    for (int round = 0; round < 20; round++) {
                        Kernel.launch(Dim3.of(2), Dim3.of(32), 0, concurrentKernel(out, salt));
                    }
                } catch (Throwable t) {
                    failures.incrementAndGet();
                }
            });
        }
        for (Thread t : threads) {
            t.join();
        }
        assertEquals(0, failures.get());
        for (int i = 0; i < launches; i++) {
            for (int r = 0; r < 64; r++) {
                int t = r % 32;
                assertEquals(((t + 1) % 32) * 3 + i * 1000 + t, outs[i][r]);
            }
        }
    }

    private static KernelBody concurrentKernel(int[] out, int salt) {
        return ctx -> {
            int t = ctx.threadRank();
            int base = 32 * ctx.blockIdx().x();
            out[base + t] = t * 3;
            ctx.syncThreads();
            int next = out[base + (t + 1) % 32];
            ctx.syncThreads();
            out[base + t] = next + salt * 1000 + t;
        };
    }

    /**
     * The last thread throws while the others wait at a sync inside try/finally. On strands the failed launch unwinds
     * every waiting thread (KernelAbortedException out of its sync), so their finally blocks run: [1, 1, 1, 0].
     * Compiled, a thread stopped at a sync resumes by unwinding (RegionCompiler.UNWIND), with the same result.
     */
    @Test
    void aFailedLaunchRunsTheFinallyBlocksOfThreadsWaitingAtASync() {
        assertSame(bothWays(Dim3.of(1), Dim3.of(4), 4, out -> ctx -> {
            int t = ctx.threadRank();
            if (t == 3) {
                throw new IllegalStateException("thread three");
            }
            try {
                ctx.syncThreads();
            } finally {
                out[t] = 1;
            }
        }));
    }

    /** A stranded sync (a thread returned) unwinds the waiting threads too, whose finally blocks count them. */
    @Test
    void aStrandedSyncRunsTheFinallyBlocksOfTheWaitingThreads() {
        assertSame(bothWays(Dim3.of(1), Dim3.of(8), 8, out -> ctx -> {
            int t = ctx.threadRank();
            int k = t * 2;
            if (t == 5) {
                return;
            }
            try {
                ctx.syncThreads();
            } finally {
                out[t] = k + 1;
            }
        }));
    }

    /**
     * The kernel's step is a hidden class's method, whose frames the JVM leaves out of stack traces: KernelFrames puts
     * the kernel's own frame back, so a compiled kernel's exception names the same lines of this file as on strands.
     */
    @Test
    void aCompiledKernelsStackTraceShowsTheKernelsLine() {
        KernelBody body = ctx -> {
            ctx.syncThreads();
            throw new IllegalStateException("where?");
        };
        assertCompiled(body);
        KernelFailure onStrands = assertThrows(KernelFailure.class, () -> onStrands(() -> {
            Kernel.launch(Dim3.of(1), Dim3.of(2), 0, body);
            return null;
        }));
        KernelFailure compiled = assertThrows(KernelFailure.class, () -> Kernel.launch(Dim3.of(1), Dim3.of(2), 0,
            body));
        assertEquals(kernelFrames(onStrands.getCause()), kernelFrames(compiled.getCause()),
            "frames of this file in the kernel's exception: strands (expected) against compiled (actual)");
        assertEquals(1, kernelFrames(compiled.getCause()).size(), compiled.getCause().getStackTrace()[0].toString());
    }

    /** A helper of the kernel's class that throws keeps its own frame, with the kernel's below it. */
    @Test
    void aHelperThatThrowsKeepsItsFrameAboveTheKernels() {
        KernelBody body = ctx -> {
            ctx.syncThreads();
            failingHelper(ctx.threadRank());
        };
        assertCompiled(body);
        KernelFailure onStrands = assertThrows(KernelFailure.class, () -> onStrands(() -> {
            Kernel.launch(Dim3.of(1), Dim3.of(2), 0, body);
            return null;
        }));
        KernelFailure compiled = assertThrows(KernelFailure.class, () -> Kernel.launch(Dim3.of(1), Dim3.of(2), 0,
            body));
        assertEquals(kernelFrames(onStrands.getCause()), kernelFrames(compiled.getCause()));
        assertEquals(2, kernelFrames(compiled.getCause()).size());
    }

    private static void failingHelper(int rank) {
        throw new ArithmeticException("rank " + rank);
    }

    /**
     * FINDING (fixed). Thread 0 throws right behind a sync that every thread of the block has passed. On strands the others have passed
     * it too (each left its wait) and run on, so each of their finally blocks runs. Compiled, they wait in the sweep
     * behind the sync, and the unwinding must resume them too.
     */
    @Test
    void aFailureBehindASyncRunsTheFinallyBlocksOfTheThreadsThatPassedIt() {
        assertSame(bothWays(Dim3.of(1), Dim3.of(4), 4, out -> ctx -> {
            int t = ctx.threadRank();
            try {
                ctx.syncThreads();
                if (t == 0) {
                    throw new IllegalStateException("zero");
                }
            } finally {
                out[t] = 1;
            }
        }));
    }

    /** FINDING (fixed). The same for a thread that throws behind a __syncwarp its warp has passed. */
    @Test
    void aFailureBehindASyncWarpRunsTheFinallyBlocksOfItsWarp() {
        assertSame(bothWays(Dim3.of(1), Dim3.of(40), 40, out -> ctx -> {
            int t = ctx.threadRank();
            try {
                ctx.syncWarp();
                if (t == 0) {
                    throw new IllegalStateException("zero");
                }
            } finally {
                out[t] = 1;
            }
        }));
    }

    /** HELD. Lanes of one warp at different __syncwarp call sites (Volta+): they meet, in warps of 32, 1 and 1 lanes. */
    @Test
    void syncWarpAtDifferentCallSites() {
        for (int threads : new int[] {1, 31, 33, 65}) {
            assertSame(bothWays(Dim3.of(2), Dim3.of(threads), 2 * threads, out -> ctx -> {
                int t = ctx.threadRank();
                int g = t + ctx.blockIdx().x() * ctx.blockDim().x();
                out[g] = 1;
                if ((t & 1) == 0) {
                    ctx.syncWarp();
                    out[g] += 10;
                } else {
                    ctx.syncWarp();
                    out[g] += 20;
                }
                ctx.syncWarp();
            }));
        }
    }

    /** HELD. A lane at __syncthreads while its warp-mates wait at a __syncwarp: both hang the same way. */
    @Test
    void aLaneAtSyncThreadsWhileItsWarpWaitsAtSyncWarp() {
        assertSame(bothWays(Dim3.of(1), Dim3.of(8), 8, out -> ctx -> {
            int t = ctx.threadRank();
            try {
                if (t == 3) {
                    ctx.syncThreads();
                } else {
                    ctx.syncWarp();
                }
            } finally {
                out[t] = 1;
            }
        }));
    }

    /**
     * FINDING (fixed). An exception made once and thrown by every launch: strands leave its stack trace as it is;
     * compiled, KernelFrames inserted the kernel's frame again at each throw (at the trace's end when it held no
     * frame of the runtime), so the trace grew by one frame per launch.
     */
    static final IllegalStateException PREALLOCATED = new IllegalStateException("preallocated");

    @Test
    void aPreallocatedExceptionsStackTraceDoesNotGrowWithEachLaunch() {
        KernelBody body = ctx -> {
            ctx.syncThreads();
            if (ctx.threadRank() == 1) {
                throw PREALLOCATED;
            }
        };
        assertCompiled(body);
        int before = PREALLOCATED.getStackTrace().length;
        for (int i = 0; i < 3; i++) {
            assertThrows(KernelFailure.class, () -> Kernel.launch(Dim3.of(1), Dim3.of(2), 0, body));
        }
        int compiled = PREALLOCATED.getStackTrace().length;
        for (int i = 0; i < 3; i++) {
            assertThrows(KernelFailure.class, () -> onStrands(() -> {
                Kernel.launch(Dim3.of(1), Dim3.of(2), 0, body);
                return null;
            }));
        }
        assertEquals(PREALLOCATED.getStackTrace().length, compiled, "strands (expected) against compiled (actual)");
        assertEquals(before, compiled, java.util.Arrays.toString(PREALLOCATED.getStackTrace()));
    }

    private static java.util.List<Integer> kernelFrames(Throwable t) {
        return Arrays.stream(t.getStackTrace())
            .filter(e -> "RegionCompilerFidelityTest.java".equals(e.getFileName()))
            .map(StackTraceElement::getLineNumber).toList();
    }
}
