package dev.jpipeline.simt;

import static dev.jpipeline.simt.CompiledOrStrands.assertCompiled;
import static dev.jpipeline.simt.CompiledOrStrands.onStrands;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.Arrays;
import java.util.function.Function;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A hostile review of SyncInliner: kernels whose helpers that sync are inlined, run compiled and on strands
 * ({@code jpipeline.simt.compile=false}), must give the same observable result.
 */
class SyncInlinerTest {

    @BeforeEach
    void compilationOn() {
        assumeTrue(ResumptionScan.switchedOn(), "compilation switched off for this run");
    }

    static String launch(Dim3 grid, Dim3 block, KernelBody body, long[] out) {
        return CompiledOrStrands.outcome(grid, block, body, () -> Arrays.toString(out));
    }

    static void assertSameBothWays(Dim3 grid, Dim3 block, int outSize, Function<long[], KernelBody> kernel) {
        long[] first = new long[outSize];
        KernelBody body = kernel.apply(first);
        assertCompiled(body);
        String compiled = launch(grid, block, body, first);
        long[] second = new long[outSize];
        String strands = onStrands(() -> launch(grid, block, kernel.apply(second), second));
        assertEquals(strands, compiled, "compiled (actual) against strands (expected)");
    }

    // ---------------------------------------------------------------------------------------------------------------

    static final class Receiver {
        long bias = 7;

        private void store(KernelContext ctx, long[] out) {
            ctx.syncThreads();
            out[ctx.threadRank()] += 1;
        }

        private long biased(KernelContext ctx, long v) {
            ctx.syncThreads();
            return v + bias;
        }

        static KernelBody nullReceiver(long[] out) {
            return ctx -> {
                Receiver r = null;
                r.store(ctx, out);
            };
        }

        KernelBody withFields(long[] out) {
            return ctx -> {
                long v = biased(ctx, ctx.threadRank());
                out[ctx.threadRank()] = v;
                ctx.syncThreads();
                if (ctx.threadRank() == 0) {
                    bias++;
                }
                long w = biased(ctx, 0);
                out[ctx.threadRank()] += w * 100;
            };
        }
    }

    /**
     * FINDING. A call of a private instance helper on null throws NullPointerException before the helper runs (strands:
     * thread 0 fails, nothing written). Inlined, the null receiver was only stored into a local, and a helper that
     * never reads {@code this} ran to its end: the launch succeeded. (The message differs: the JVM computes no helpful
     * NullPointerException message for a hidden frame, as simt.md says.)
     */
    @Test
    void anInlinedHelperCalledOnNullThrows() {
        long[] out = new long[4];
        KernelBody body = Receiver.nullReceiver(out);
        assertCompiled(body);
        String compiled = launchCause(body, out);
        long[] second = new long[4];
        String strands = onStrands(() -> launchCause(Receiver.nullReceiver(second), second));
        assertEquals(strands, compiled, "compiled (actual) against strands (expected)");
    }

    private static String launchCause(KernelBody body, long[] out) {
        try {
            Kernel.launch(Dim3.of(1), Dim3.of(4), 0, body);
            return "ok " + Arrays.toString(out);
        } catch (KernelFailure f) {
            return f.getCause().getClass().getName() + " " + Arrays.toString(out);
        }
    }

    // helpers of every shape ---------------------------------------------------------------------------------------

    private static long twice(KernelContext ctx, long v) {
        ctx.syncThreads();
        return v * 2;
    }

    private static double half(KernelContext ctx, double v) {
        ctx.syncThreads();
        return v / 2;
    }

    private static String named(KernelContext ctx, int t) {
        ctx.syncThreads();
        if (t % 3 == 0) {
            return "fizz";
        }
        if (t % 3 == 1) {
            return null;
        }
        return "x" + t;
    }

    private static int flags(KernelContext ctx, boolean b, byte y, char c, short s) {
        ctx.syncThreads();
        return (b ? 1 : 0) + y + c + s;
    }

    private static int severalReturns(KernelContext ctx, int t, long[] out) {
        for (int i = 0; i < 3; i++) {
            ctx.syncThreads();
            if (i == t % 4) {
                return i;
            }
            out[0] += 100;
        }
        ctx.syncThreads();
        return -1;
    }

    private static long chain1(KernelContext ctx, long v) {
        long a = chain2(ctx, v + 1);
        ctx.syncThreads();
        return a * 3;
    }

    private static long chain2(KernelContext ctx, long v) {
        long b = chain3(ctx, v * 2);
        return b - 1;
    }

    private static long chain3(KernelContext ctx, long v) {
        ctx.syncThreads();
        return v + 5;
    }

    private static int guarded(KernelContext ctx, int t) {
        try {
            ctx.syncThreads();
            if (t == 2) {
                throw new IllegalArgumentException("two");
            }
            return t;
        } finally {
            ctx.syncThreads();
        }
    }

    @Test
    void helpersOfEveryShape() {
        assertSameBothWays(Dim3.of(2), Dim3.of(9), 18 * 8, out -> ctx -> {
            int t = ctx.threadRank();
            int g = t + 9 * ctx.blockIdx().x();
            long a = twice(ctx, t + 1L);
            double d = half(ctx, t);
            String s = named(ctx, t);
            twice(ctx, 3);                              // result dropped (pop2)
            named(ctx, t);                              // result dropped (pop)
            int f = flags(ctx, t % 2 == 0, (byte) t, 'c', (short) -t);
            long[] acc = new long[1];
            int r = severalReturns(ctx, 3, acc);        // the same for every thread: no divergent sync
            r += (int) acc[0];
            long c = 0;
            for (int i = 0; i < 3; i++) {
                long x = chain1(ctx, i + t);
                c += x;
            }
            int caught;
            try {
                caught = guarded(ctx, t);
            } catch (IllegalArgumentException e) {
                caught = -100;
            }
            out[g * 8] = a;
            out[g * 8 + 1] = Double.doubleToLongBits(d);
            out[g * 8 + 2] = s == null ? -1 : s.length();
            out[g * 8 + 3] = f;
            out[g * 8 + 4] = r;
            out[g * 8 + 5] = c;
            out[g * 8 + 6] = caught;
            long second = twice(ctx, g);                // a second call site of twice
            out[g * 8 + 7] = second;
        });
    }

    @Test
    void anInstanceHelperThatReadsAFieldTheThreadsShare() {
        assertSameBothWays(Dim3.of(1), Dim3.of(5), 5, out -> new Receiver().withFields(out));
    }

    /** A helper that throws through the kernel's try/catch around its call, past a sync of its own. */
    @Test
    void aHelperThrowingIntoTheKernelsCatch() {
        assertSameBothWays(Dim3.of(1), Dim3.of(6), 6, out -> ctx -> {
            int t = ctx.threadRank();
            try {
                int v = guarded(ctx, t);
                out[t] = v;
            } catch (IllegalArgumentException e) {
                out[t] = 42;
            } finally {
                out[t] += 1000;
            }
            ctx.syncThreads();
        });
    }

    private static int waitFor(KernelContext ctx, int[] flag, int t) {
        ctx.syncThreads();
        if (t == 3) {
            flag[0] = 1;
        }
        int n = 0;
        while (t == 0 && flag[0] == 0) {
            n++;
            Thread.onSpinWait();
        }
        ctx.syncThreads();
        return n > 0 ? 1 : 0;
    }

    /** A helper that spins on a flag a later thread sets (inlined: its loop yields). */
    @Test
    void aHelperThatSpins() {
        assertSameBothWays(Dim3.of(1), Dim3.of(4), 4, out -> {
            int[] flag = new int[1];
            return ctx -> {
                int t = ctx.threadRank();
                int w = waitFor(ctx, flag, t);
                out[t] = t;
            };
        });
    }

    /** Private helpers of an interface (an instance one is called with invokeinterface). */
    @Test
    void privateHelpersOfAnInterface() {
        assertSameBothWays(Dim3.of(1), Dim3.of(4), 8, InterfaceKernels::staticHelper);
        InterfaceKernels k = new InterfaceKernels() { };
        assertSameBothWays(Dim3.of(1), Dim3.of(4), 8, k::instanceHelper);
    }

    /** A helper whose exception passes through a finally block that syncs, in the kernel and in the helper. */
    private static void throwsAfterSync(KernelContext ctx, long[] out) {
        try {
            ctx.syncThreads();
            if (ctx.threadRank() == 1) {
                throw new ArithmeticException("one");
            }
        } finally {
            out[ctx.threadRank()] += 1;
        }
        ctx.syncThreads();
        out[ctx.threadRank()] += 10;
    }

    @Test
    void aHelperThatFailsTheLaunchUnwindsTheOthers() {
        assertSameBothWays(Dim3.of(1), Dim3.of(5), 5, out -> ctx -> {
            try {
                throwsAfterSync(ctx, out);
            } finally {
                out[ctx.threadRank()] += 100;
            }
        });
    }

    private static void syncInFinally(KernelContext ctx, long[] out) {
        try {
            ctx.syncThreads();
        } finally {
            out[ctx.threadRank()] += 1;
            ctx.syncThreads();
            out[ctx.threadRank()] += 10;
        }
    }

    /** Unwinding a failed launch through a helper's finally block that syncs again. */
    @Test
    void unwindingThroughAHelpersFinallyThatSyncs() {
        assertSameBothWays(Dim3.of(1), Dim3.of(5), 5, out -> ctx -> {
            if (ctx.threadRank() == 4) {
                ctx.syncThreads();
                throw new IllegalStateException("four");
            }
            syncInFinally(ctx, out);
        });
    }
}
