package dev.jpipeline.simt;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Random;
import java.util.function.Supplier;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Kernels with {@code __syncthreads} compiled into regions (RegionCompiler, issue 27 slice 2): what lives across a
 * sync, what a kernel captures, the kernel shapes (lambda, method reference, instance lambda, class), syncs
 * reached from different sites, failures, and what falls back to strands. Each result is checked against the same
 * kernel run on strands (compilation switched off) or against a sequential reference.
 */
class RegionCompilerTest {

    @BeforeEach
    void compilationOn() {
        assumeTrue(ResumptionScan.switchedOn(), "compilation switched off for this run");
    }

    private static ResumptionScan.Verdict compiled(KernelBody body) {
        ResumptionScan.Verdict verdict = ResumptionScan.scan(body);
        assertNotNull(verdict.compiled(), () -> "not compiled: " + verdict.reason() + " / " + verdict.refusal());
        return verdict;
    }

    /** Launches {@code body} compiled, then on strands, each into fresh memory, and returns both outputs. */
    private static byte[][] compiledAndOnStrands(Dim3 grid, Dim3 block, long bytes,
                                                 java.util.function.Function<MemorySegment, KernelBody> kernel) {
        MemorySegment first = Arena.ofAuto().allocate(bytes);
        KernelBody body = kernel.apply(first);
        compiled(body);
        long before = Launch.COMPILED_BLOCKS.sum();
        Kernel.launch(grid, block, 0, body);
        assertEquals(grid.volume(), Launch.COMPILED_BLOCKS.sum() - before, "every block ran compiled");
        MemorySegment second = Arena.ofAuto().allocate(bytes);
        String old = System.getProperty(ResumptionScan.SWITCH);
        System.setProperty(ResumptionScan.SWITCH, "false");
        try {
            long compiledBefore = Launch.COMPILED_BLOCKS.sum();
            Kernel.launch(grid, block, 0, kernel.apply(second));
            assertEquals(0, Launch.COMPILED_BLOCKS.sum() - compiledBefore, "switched off: strands");
        } finally {
            if (old == null) {
                System.clearProperty(ResumptionScan.SWITCH);
            } else {
                System.setProperty(ResumptionScan.SWITCH, old);
            }
        }
        return new byte[][] {first.toArray(ValueLayout.JAVA_BYTE), second.toArray(ValueLayout.JAVA_BYTE)};
    }

    @Test
    void aBlockReductionGivesTheSameSumAsASequentialOne() {
        int threads = 256;
        int blocks = 64;
        MemorySegment in = Arena.ofAuto().allocate(4L * threads * blocks);
        MemorySegment out = Arena.ofAuto().allocate(4L * blocks);
        for (int i = 0; i < threads * blocks; i++) {
            in.setAtIndex(ValueLayout.JAVA_FLOAT, i, (i % 97) * 0.5f);
        }
        KernelBody body = ctx -> {
            MemorySegment partial = ctx.sharedArray("partial", 4L * ctx.blockDim().x());
            int t = ctx.threadRank();
            partial.setAtIndex(ValueLayout.JAVA_FLOAT, t, in.getAtIndex(ValueLayout.JAVA_FLOAT, ctx.globalRank()));
            ctx.syncThreads();
            for (int stride = ctx.blockDim().x() / 2; stride > 0; stride >>= 1) {
                if (t < stride) {
                    float a = partial.getAtIndex(ValueLayout.JAVA_FLOAT, t);
                    float b = partial.getAtIndex(ValueLayout.JAVA_FLOAT, t + stride);
                    partial.setAtIndex(ValueLayout.JAVA_FLOAT, t, a + b);
                }
                ctx.syncThreads();
            }
            if (t == 0) {
                out.setAtIndex(ValueLayout.JAVA_FLOAT, ctx.blockIdx().x(), partial.getAtIndex(ValueLayout.JAVA_FLOAT, 0));
            }
        };
        assertEquals(2, compiled(body).compiled().syncs());
        long before = Launch.COMPILED_BLOCKS.sum();
        Kernel.launch(Dim3.of(blocks), Dim3.of(threads), 0, body);
        assertEquals(blocks, Launch.COMPILED_BLOCKS.sum() - before);
        for (int b = 0; b < blocks; b++) {
            float[] partial = new float[threads];
            for (int t = 0; t < threads; t++) {
                partial[t] = in.getAtIndex(ValueLayout.JAVA_FLOAT, (long) b * threads + t);
            }
            for (int stride = threads / 2; stride > 0; stride >>= 1) {
                for (int t = 0; t < stride; t++) {
                    partial[t] += partial[t + stride];
                }
            }
            assertEquals(partial[0], out.getAtIndex(ValueLayout.JAVA_FLOAT, b), "block " + b);
        }
    }

    @Test
    void localsOfEveryTypeLiveAcrossSyncsInALoop() {
        byte[][] runs = compiledAndOnStrands(Dim3.of(3), Dim3.of(70), 8L * 12 * 210, out -> ctx -> {
            int t = ctx.threadRank();
            long base = 12L * ctx.globalRank();
            int i = t * 3;
            long l = t * 10_000_000_000L;
            float f = t * 0.25f;
            double d = t * 1e-3;
            boolean odd = (t & 1) != 0;
            char c = (char) ('a' + t % 26);
            byte b = (byte) t;
            short s = (short) (t * 300);
            String text = "t" + t;
            int[] array = {t, t + 1};
            Object nothing = null;
            MemorySegment exchange = ctx.sharedArray("exchange", 8L * ctx.blockDim().x());
            for (int round = 0; round < 3; round++) {
                exchange.setAtIndex(ValueLayout.JAVA_LONG, t, l + i);
                ctx.syncThreads();
                long neighbour = exchange.getAtIndex(ValueLayout.JAVA_LONG, (t + 1) % ctx.blockDim().x());
                i += (int) (neighbour % 7);
                l ^= neighbour;
                f *= 1.5f;
                d += neighbour * 0.5;
                odd = !odd;
                c++;
                b += 3;
                s -= 7;
                text = text + round;
                array[round % 2] += round;
                ctx.syncThreads();
            }
            out.setAtIndex(ValueLayout.JAVA_LONG, base, i);
            out.setAtIndex(ValueLayout.JAVA_LONG, base + 1, l);
            out.setAtIndex(ValueLayout.JAVA_LONG, base + 2, Float.floatToRawIntBits(f));
            out.setAtIndex(ValueLayout.JAVA_LONG, base + 3, Double.doubleToRawLongBits(d));
            out.setAtIndex(ValueLayout.JAVA_LONG, base + 4, odd ? 1 : 0);
            out.setAtIndex(ValueLayout.JAVA_LONG, base + 5, c);
            out.setAtIndex(ValueLayout.JAVA_LONG, base + 6, b);
            out.setAtIndex(ValueLayout.JAVA_LONG, base + 7, s);
            out.setAtIndex(ValueLayout.JAVA_LONG, base + 8, text.hashCode());
            out.setAtIndex(ValueLayout.JAVA_LONG, base + 9, array[0] * 31L + array[1]);
            out.setAtIndex(ValueLayout.JAVA_LONG, base + 10, nothing == null ? 7 : 8);
            out.setAtIndex(ValueLayout.JAVA_LONG, base + 11, ctx.threadIdx().x());
        });
        assertArrayEquals(runs[1], runs[0], "compiled and strands agree");
    }

    @Test
    void capturedValuesOfEveryTypeReachTheCompiledCode() {
        int i = -5;
        long l = 1L << 40;
        float f = 2.5f;
        double d = -0.125;
        boolean flag = true;
        char c = 'z';
        byte b = -3;
        short s = 1234;
        String text = "captured";
        long[] array = {11, 13};
        byte[][] runs = compiledAndOnStrands(Dim3.of(2), Dim3.of(33), 8L * 66, out -> ctx -> {
            long value = i + l + (long) f + (long) (d * 8) + (flag ? 100 : 0) + c + b + s + text.length();
            ctx.syncThreads();
            out.setAtIndex(ValueLayout.JAVA_LONG, ctx.globalRank(), value * array[ctx.threadRank() % 2]);
        });
        assertArrayEquals(runs[1], runs[0]);
        long expected = -5 + (1L << 40) + 2 - 1 + 100 + 'z' - 3 + 1234 + 8;
        assertEquals(expected * 11, MemorySegment.ofArray(runs[0]).getAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, 0));
    }

    private final long instanceFactor = 3;

    @Test
    void anInstanceLambdaReadsItsPrivateFieldAfterASync() {
        byte[][] runs = compiledAndOnStrands(Dim3.of(2), Dim3.of(40), 8L * 80, out -> ctx -> {
            int t = ctx.threadRank();
            ctx.syncThreads();
            out.setAtIndex(ValueLayout.JAVA_LONG, ctx.globalRank(), t * instanceFactor + privateHelper(t));
        });
        assertArrayEquals(runs[1], runs[0]);
        assertEquals(39 * 3 + 39 * 39, MemorySegment.ofArray(runs[0]).getAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, 39));
    }

    private long privateHelper(int t) {
        return (long) t * t;
    }

    /** A kernel given as a class: its run is compiled with the kernel object as its receiver. */
    private static final class Rotate implements KernelBody {
        private final MemorySegment out;
        private final int by;

        Rotate(MemorySegment out, int by) {
            this.out = out;
            this.by = by;
        }

        @Override
        public void run(KernelContext ctx) {
            MemorySegment ring = ctx.sharedArray("ring", 4L * ctx.blockDim().x());
            int t = ctx.threadRank();
            ring.setAtIndex(ValueLayout.JAVA_INT, t, t * t);
            ctx.syncThreads();
            out.setAtIndex(ValueLayout.JAVA_INT, ctx.globalRank(),
                ring.getAtIndex(ValueLayout.JAVA_INT, (t + by) % ctx.blockDim().x()));
        }
    }

    @Test
    void aKernelClassAndAStaticMethodReferenceAreCompiled() {
        byte[][] runs = compiledAndOnStrands(Dim3.of(3), Dim3.of(50), 4L * 150, out -> new Rotate(out, 7));
        assertArrayEquals(runs[1], runs[0]);
        assertEquals(7 * 7, MemorySegment.ofArray(runs[0]).getAtIndex(ValueLayout.JAVA_INT_UNALIGNED, 0));
        compiled(RegionCompilerTest::reverseKernel);
        Kernel.launch(Dim3.of(2), Dim3.of(64), 0, RegionCompilerTest::reverseKernel);
    }

    private static void reverseKernel(KernelContext ctx) {
        MemorySegment values = ctx.sharedArray("values", 4L * ctx.blockDim().x());
        int t = ctx.threadRank();
        values.setAtIndex(ValueLayout.JAVA_INT, t, t);
        ctx.syncThreads();
        int mirrored = values.getAtIndex(ValueLayout.JAVA_INT, ctx.blockDim().x() - 1 - t);
        if (mirrored != ctx.blockDim().x() - 1 - t) {
            throw new IllegalStateException("thread " + t + " read " + mirrored);
        }
    }

    @Test
    void threadsAtDifferentSyncCallsPassTheSameBarrier() {
        byte[][] runs = compiledAndOnStrands(Dim3.of(2), Dim3.of(48), 4L * 96, out -> ctx -> {
            MemorySegment cells = ctx.sharedArray("cells", 4L * ctx.blockDim().x());
            int t = ctx.threadRank();
            if ((t & 1) == 0) {
                cells.setAtIndex(ValueLayout.JAVA_INT, t, t + 1000);
                ctx.syncThreads();
            } else {
                cells.setAtIndex(ValueLayout.JAVA_INT, t, t + 2000);
                ctx.syncThreads();
            }
            out.setAtIndex(ValueLayout.JAVA_INT, ctx.globalRank(), cells.getAtIndex(ValueLayout.JAVA_INT, t ^ 1));
        });
        assertArrayEquals(runs[1], runs[0]);
        assertEquals(2001, MemorySegment.ofArray(runs[0]).getAtIndex(ValueLayout.JAVA_INT_UNALIGNED, 0));
    }

    @Test
    void thisThreadBlockSyncIsCompiledAsSyncThreads() {
        byte[][] runs = compiledAndOnStrands(Dim3.of(2), Dim3.of(40), 4L * 80, out -> ctx -> {
            MemorySegment cells = ctx.sharedArray("cells", 4L * ctx.block().size());
            int t = ctx.block().threadRank();
            cells.setAtIndex(ValueLayout.JAVA_INT, t, t * 5);
            ctx.block().sync();
            out.setAtIndex(ValueLayout.JAVA_INT, ctx.globalRank(), cells.getAtIndex(ValueLayout.JAVA_INT, 39 - t));
        });
        assertArrayEquals(runs[1], runs[0]);
        assertEquals(39 * 5, MemorySegment.ofArray(runs[0]).getAtIndex(ValueLayout.JAVA_INT_UNALIGNED, 0));
    }

    @Test
    void aWarpSyncLetsEachWarpOnAsItsLanesArriveAndAgreesWithStrands() {
        byte[][] runs = compiledAndOnStrands(Dim3.of(2), Dim3.of(48), 4L * 96, out -> ctx -> {
            MemorySegment lanes = ctx.sharedArray("lanes", 4L * ctx.blockDim().x());
            int t = ctx.threadRank();
            int value = t * 3;
            for (int step = 0; step < 3; step++) {
                lanes.setAtIndex(ValueLayout.JAVA_INT, t, value);
                ctx.syncWarp();                 // the short last warp has 16 lanes
                int warpFirst = t / 32 * 32;
                int warpLanes = Math.min(32, ctx.blockDim().x() - warpFirst);
                value += lanes.getAtIndex(ValueLayout.JAVA_INT, warpFirst + (t - warpFirst + 1) % warpLanes);
                ctx.syncWarp();
            }
            out.setAtIndex(ValueLayout.JAVA_INT, ctx.globalRank(), value);
        });
        assertArrayEquals(runs[1], runs[0]);
        assertEquals(2, compiled(ctx -> {
            ctx.syncWarp();
            ctx.syncWarp();
        }).compiled().syncs());
    }

    @Test
    void aLaneThatReturnsBeforeAWarpSyncFailsTheLaunchWithTheWarpsReport() {
        KernelBody body = ctx -> {
            if (ctx.threadRank() == 33) {
                return;
            }
            ctx.syncWarp();
        };
        compiled(body);
        KernelFailure failure = assertThrows(KernelFailure.class, () -> Kernel.launch(Dim3.of(1), Dim3.of(64), 0, body));
        String report = failure.getMessage();
        assertTrue(report.contains("thread (32, 0, 0): waits in __syncwarp of warp 1 of block (0, 0, 0): 31 of 32 "
            + "threads arrived"), report);
        assertTrue(report.contains("(33 have left)"), report);     // warp 0 passed its sync and returned
        assertTrue(!report.contains("warp 0 of block"), "warp 0 passed its sync: " + report);
    }

    /** An enum a kernel reads: its static initializer constructs its constants, which is plain. */
    private enum Op {
        ADD, MULTIPLY;

        long apply(long a, long b) {
            return this == ADD ? a + b : a * b;
        }
    }

    @Test
    void anEnumConstantDoesNotMakeAKernelFallBack() {
        byte[][] runs = compiledAndOnStrands(Dim3.of(1), Dim3.of(32), 8L * 32, out -> ctx -> {
            Op op = ctx.threadRank() % 2 == 0 ? Op.ADD : Op.MULTIPLY;
            ctx.syncThreads();
            out.setAtIndex(ValueLayout.JAVA_LONG, ctx.threadRank(), op == Op.ADD ? 1 : 2);
        });
        assertArrayEquals(runs[1], runs[0]);
    }

    @Test
    void staticMethodsAndRecordsOfOtherClassesAreFollowedAndCompiled() {
        byte[][] runs = compiledAndOnStrands(Dim3.of(2), Dim3.of(16), 8L * 32, out -> ctx -> {
            long[] mine = {ctx.threadRank(), 2, 3};
            dev.jpipeline.simt.scanfixtures.Vectors.Pair pair =
                new dev.jpipeline.simt.scanfixtures.Vectors.Pair(ctx.threadRank(), 10);
            ctx.syncThreads();
            out.setAtIndex(ValueLayout.JAVA_LONG, ctx.globalRank(),
                dev.jpipeline.simt.scanfixtures.Vectors.dot(mine, mine) + pair.scaled(2).sum());
        });
        assertArrayEquals(runs[1], runs[0]);
        String sleepy = ResumptionScan.scan(ctx -> {
            try {
                dev.jpipeline.simt.scanfixtures.Vectors.sleepy();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e.getMessage());
            }
        }).reason();
        assertTrue(sleepy.contains("java.lang.Thread.sleep") && sleepy.contains("Vectors.sleepy"), sleepy);
        dev.jpipeline.simt.scanfixtures.Vectors.Open open = new dev.jpipeline.simt.scanfixtures.Vectors.Open();
        String overridable = ResumptionScan.scan(ctx -> open.value()).reason();
        assertTrue(overridable.contains("overridable method"), overridable);
    }

    @Test
    void atomicsOfPrimitivesCompileAndAFunctionOfTheirsDoesNot() {
        java.util.concurrent.atomic.AtomicLong total = new java.util.concurrent.atomic.AtomicLong();
        java.util.concurrent.atomic.AtomicIntegerArray perBlock = new java.util.concurrent.atomic.AtomicIntegerArray(3);
        KernelBody body = ctx -> {
            total.addAndGet(ctx.threadRank());          // atomicAdd
            ctx.syncThreads();
            perBlock.compareAndSet(ctx.blockIdx().x(), 0, 1);
        };
        compiled(body);
        Kernel.launch(Dim3.of(3), Dim3.of(32), 0, body);
        assertEquals(3 * (31 * 32 / 2), total.get());
        assertEquals("[1, 1, 1]", perBlock.toString());
        String reason = ResumptionScan.scan(ctx -> total.updateAndGet(v -> v + 1)).reason();
        assertTrue(reason.contains("AtomicLong.updateAndGet"), reason);
    }

    @Test
    void aSyncInsideATryResumesInsideIt() {
        byte[][] runs = compiledAndOnStrands(Dim3.of(1), Dim3.of(32), 4L * 32, out -> ctx -> {
            int t = ctx.threadRank();
            int caught = 0;
            try {
                ctx.syncThreads();
                if (t % 3 == 0) {
                    throw new IllegalStateException("thread " + t);
                }
            } catch (IllegalStateException expected) {
                caught = 1;
            }
            ctx.syncThreads();
            out.setAtIndex(ValueLayout.JAVA_INT, t, caught);
        });
        assertArrayEquals(runs[1], runs[0]);
        assertEquals(1, MemorySegment.ofArray(runs[0]).getAtIndex(ValueLayout.JAVA_INT_UNALIGNED, 3));
    }

    @Test
    void sharedAndGlobalWithALambdaInitAreCompiled() {
        byte[][] runs = compiledAndOnStrands(Dim3.of(4), Dim3.of(32), 8L * 128, out -> ctx -> {
            long[] partial = ctx.shared("partial", () -> new long[ctx.blockDim().x()]);
            long[] total = ctx.global("total", () -> new long[1]);
            int t = ctx.threadRank();
            partial[t] = t + 1;
            ctx.syncThreads();
            long sum = 0;
            for (long p : partial) {
                sum += p;
            }
            if (t == 0) {
                total[0] = Math.max(total[0], ctx.blockIdx().x());
            }
            out.setAtIndex(ValueLayout.JAVA_LONG, ctx.globalRank(), sum + total.length);
        });
        assertArrayEquals(runs[1], runs[0]);
    }

    @Test
    void aThreadThatThrowsAfterASyncFailsTheLaunchNamingIt() {
        KernelBody body = ctx -> {
            ctx.syncThreads();
            if (ctx.blockIdx().x() == 1 && ctx.threadRank() == 37) {
                throw new ArithmeticException("boom");
            }
            ctx.syncThreads();
        };
        compiled(body);
        KernelFailure failure = assertThrows(KernelFailure.class, () -> Kernel.launch(Dim3.of(3), Dim3.of(64), 0, body));
        assertTrue(failure.getMessage().contains("thread (37, 0, 0) of block (1, 0, 0) failed"), failure.getMessage());
        assertInstanceOf(ArithmeticException.class, failure.getCause());
    }

    @Test
    void aThreadThatReturnsWhileOthersSyncFailsTheLaunchAtOnce() {
        KernelBody body = ctx -> {
            if (ctx.threadRank() == 5) {
                return;
            }
            ctx.syncThreads();
        };
        compiled(body);
        KernelFailure failure = assertThrows(KernelFailure.class, () -> Kernel.launch(Dim3.of(1), Dim3.of(8), 0, body));
        String report = failure.getMessage();
        assertTrue(report.contains("hung"), report);
        assertTrue(report.contains("threads (0, 0, 0) to (4, 0, 0), 5 threads: waits in __syncthreads of block "
            + "(0, 0, 0): 7 of 8 threads arrived"), report);
        assertTrue(report.contains("threads (6, 0, 0) to (7, 0, 0), 2 threads: waits in __syncthreads of block "
            + "(0, 0, 0): 7 of 8 threads arrived"), report);
        assertTrue(report.contains("(1 has left)"), report);
        assertNull(failure.getCause());
    }

    @Test
    void aSpinWaitOnAFlagThatALaterThreadOfTheBlockSetsCompletes() {
        MemorySegment out = Arena.ofAuto().allocate(4L * 2 * 64);
        KernelBody body = ctx -> {
            MemorySegment flag = ctx.sharedArray("flag", 4);
            int t = ctx.threadRank();
            if (t == 0) {
                while (flag.get(ValueLayout.JAVA_INT, 0) == 0) {    // thread 63 sets it: it runs after thread 0
                    Thread.onSpinWait();
                }
            } else if (t == ctx.blockDim().x() - 1) {
                flag.set(ValueLayout.JAVA_INT, 0, 42);
            }
            ctx.syncThreads();
            out.setAtIndex(ValueLayout.JAVA_INT, ctx.globalRank(), flag.get(ValueLayout.JAVA_INT, 0));
        };
        ResumptionScan.Verdict verdict = compiled(body);
        assertTrue(verdict.compiled().yields() > 0, "the spin loop's head is a yield point");
        assertTimeoutPreemptively(java.time.Duration.ofSeconds(30),
            () -> Kernel.launch(Dim3.of(2), Dim3.of(64), 0, body));
        for (int i = 0; i < 128; i++) {
            assertEquals(42, out.getAtIndex(ValueLayout.JAVA_INT, i), "thread " + i);
        }
    }

    @Test
    void aLongLoopBetweenSyncsYieldsAndResumesWithItsLocals() {
        byte[][] runs = compiledAndOnStrands(Dim3.of(2), Dim3.of(16), 8L * 32, out -> ctx -> {
            int t = ctx.threadRank();
            long sum = t;
            double scale = 1.0 + t;
            for (int i = 0; i < 100_000; i++) {             // passes its head more often than YIELD_EVERY
                sum += (i ^ t) * (long) scale;
            }
            ctx.syncThreads();
            for (int i = 0; i < 50_000; i++) {
                sum -= i & t;
            }
            out.setAtIndex(ValueLayout.JAVA_LONG, ctx.globalRank(), sum);
        });
        assertArrayEquals(runs[1], runs[0]);
    }

    private static int syncingValue(KernelContext ctx) {
        ctx.syncThreads();
        return 7;
    }

    /** A __device__ function that syncs: a block sum through shared memory, returned to every thread. */
    private static long blockSum(KernelContext ctx, MemorySegment cells, long mine) {
        int t = ctx.threadRank();
        int n = ctx.blockDim().x();
        cells.setAtIndex(ValueLayout.JAVA_LONG, t, mine);
        ctx.syncThreads();
        for (int stride = Integer.highestOneBit(Math.max(1, n - 1)); stride > 0; stride >>= 1) {
            if (t < stride && t + stride < n) {
                cells.setAtIndex(ValueLayout.JAVA_LONG, t,
                    cells.getAtIndex(ValueLayout.JAVA_LONG, t) + cells.getAtIndex(ValueLayout.JAVA_LONG, t + stride));
            }
            ctx.syncThreads();
        }
        long total = cells.getAtIndex(ValueLayout.JAVA_LONG, 0);
        ctx.syncThreads();                      // every thread has read the total before the cells are reused
        return total;
    }

    /** A helper that calls a helper that syncs, with a try/catch of its own around it. */
    private static long twiceThenGuarded(KernelContext ctx, MemorySegment cells, long mine) {
        long first = blockSum(ctx, cells, mine);
        long second = blockSum(ctx, cells, first + mine);
        try {
            ctx.syncThreads();
            if (ctx.threadRank() % 5 == 0) {
                throw new IllegalStateException("caught in the helper");
            }
        } catch (IllegalStateException e) {
            second += 1_000_000;
        }
        return second;
    }

    @Test
    void helpersThatSyncAreInlinedAndAgreeWithStrands() {
        byte[][] runs = compiledAndOnStrands(Dim3.of(3), Dim3.of(37), 8L * 3 * 37, out -> ctx -> {
            MemorySegment cells = ctx.sharedArray("cells", 8L * ctx.blockDim().x());
            long mine = ctx.globalRank() * 3 + 1;
            long result;
            try {
                result = twiceThenGuarded(ctx, cells, mine);
            } catch (IllegalStateException e) {
                result = -1;                    // the helper's own handler must catch first
            }
            out.setAtIndex(ValueLayout.JAVA_LONG, ctx.globalRank(), result);
        });
        assertArrayEquals(runs[1], runs[0]);
        long blockZero = 0;
        for (int t = 0; t < 37; t++) {
            blockZero += t * 3 + 1;
        }
        long expected = 37 * blockZero + blockZero + 1_000_000;   // the sum of (S + mine); thread 0 caught in the helper
        assertEquals(expected, MemorySegment.ofArray(runs[0]).getAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, 0));
    }

    private static void recursive(KernelContext ctx, int depth) {
        ctx.syncThreads();
        if (depth > 0) {
            recursive(ctx, depth - 1);
        }
    }

    @Test
    void whatTheCompilerDoesNotFollowRunsOnStrandsAndSaysWhy() {
        MemorySegment out = Arena.ofAuto().allocate(4L * 64);
        KernelBody inExpression = ctx -> {
            int x = 1 + syncingValue(ctx);          // the helper syncs inside an expression: not inlined
            out.setAtIndex(ValueLayout.JAVA_INT, ctx.threadRank(), x);
        };
        ResumptionScan.Verdict verdict = ResumptionScan.scan(inExpression);
        assertNull(verdict.compiled());
        assertTrue(verdict.reason().contains("inside an expression"), verdict.reason());
        long before = Launch.COMPILED_BLOCKS.sum();
        Kernel.launch(Dim3.of(1), Dim3.of(64), 0, inExpression);
        assertEquals(0, Launch.COMPILED_BLOCKS.sum() - before);
        assertEquals(8, out.getAtIndex(ValueLayout.JAVA_INT, 63));

        KernelBody syncInLambda = ctx -> {
            Runnable r = ctx::syncThreads;
            r.run();
        };
        assertNull(ResumptionScan.scan(syncInLambda).compiled());
        assertNull(ResumptionScan.scan(ctx -> recursive(ctx, 2)).compiled());
        Supplier<long[]> made = () -> new long[4];
        KernelBody foreignInit = ctx -> {
            long[] cells = ctx.shared("cells", made);
            ctx.syncThreads();
            cells[0] = 1;
        };
        ResumptionScan.Verdict init = ResumptionScan.scan(foreignInit);
        assertTrue(init.onScheduler(), "an init it does not know may wait: compiled on the block's scheduler");
        assertTrue(init.reason().contains("init"), init.reason());
        Object key = new Object();
        KernelBody objectKey = ctx -> {
            ctx.sharedArray(key, 16);
            ctx.syncThreads();
        };
        assertTrue(ResumptionScan.scan(objectKey).reason().contains("key"), ResumptionScan.scan(objectKey).reason());
    }

    /**
     * Seeded: random block shapes (not powers of two) and data through a Hillis-Steele inclusive scan, whose every
     * step syncs twice, against a sequential prefix sum. {@code -Djpipeline.simt.seed=N} repeats a run.
     */
    @Test
    void randomShapesScanLikeASequentialPrefixSum() {
        long seed = Long.getLong("jpipeline.simt.seed", System.nanoTime());
        System.out.println("RegionCompilerTest.randomShapes seed " + seed + " (-Djpipeline.simt.seed=" + seed + ")");
        Random random = new Random(seed);
        for (int trial = 0; trial < 12; trial++) {
            int threads = 1 + random.nextInt(300);
            int blocks = 1 + random.nextInt(6);
            long[] input = random.longs((long) threads * blocks, -1000, 1000).toArray();
            MemorySegment out = Arena.ofAuto().allocate(8L * input.length);
            KernelBody scan = ctx -> {
                int n = ctx.blockDim().x();
                MemorySegment cells = ctx.sharedArray("cells", 8L * n);
                int t = ctx.threadRank();
                cells.setAtIndex(ValueLayout.JAVA_LONG, t, input[(int) ctx.globalRank()]);
                ctx.syncThreads();
                for (int offset = 1; offset < n; offset <<= 1) {
                    long add = t >= offset ? cells.getAtIndex(ValueLayout.JAVA_LONG, t - offset) : 0;
                    ctx.syncThreads();
                    cells.setAtIndex(ValueLayout.JAVA_LONG, t, cells.getAtIndex(ValueLayout.JAVA_LONG, t) + add);
                    ctx.syncThreads();
                }
                out.setAtIndex(ValueLayout.JAVA_LONG, ctx.globalRank(), cells.getAtIndex(ValueLayout.JAVA_LONG, t));
            };
            compiled(scan);
            Kernel.launch(Dim3.of(blocks), Dim3.of(threads), 0, scan);
            for (int b = 0; b < blocks; b++) {
                long running = 0;
                for (int t = 0; t < threads; t++) {
                    running += input[b * threads + t];
                    assertEquals(running, out.getAtIndex(ValueLayout.JAVA_LONG, (long) b * threads + t),
                        "seed " + seed + ", trial " + trial + ": " + blocks + " x " + threads + ", block " + b
                            + ", thread " + t);
                }
            }
        }
    }
}
