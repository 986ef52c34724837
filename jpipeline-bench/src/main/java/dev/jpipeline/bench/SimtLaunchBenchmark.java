package dev.jpipeline.bench;

import dev.jpipeline.simt.Dim3;
import dev.jpipeline.simt.Kernel;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The SIMT runtime against a CPU runtime for CUDA code: the three kernels AMD's HIP-CPU was measured on (issue
 * 11). Milliseconds per launch; each launch's result is checked. The reduction and the barrier loop run one launch
 * per JMH iteration (single-shot: 5 warm-up launches, then 20 measured; the JSON holds every launch, so medians and
 * spread come from {@code -rf json}); each is long enough (tens of thousands of thread-barriers) for the JIT to
 * compile the kernel during the warm-up. An empty launch is too short for that (5 launches of 32 threads leave the
 * runtime interpreted), so {@code empty} is timed in steady state: the average over 1-second iterations after 5
 * seconds of warm-up.
 *
 * <ul>
 *   <li>{@code blockReduction}: 256 blocks of 256 threads sum 65,536 longs through shared memory, a tree of 8
 *       halving steps, 9 {@code __syncthreads} per thread;</li>
 *   <li>{@code barrierLoop}: 64 blocks of 128 threads, each 1000 times {@code shared[t] += 1; __syncthreads();}
 *       (divide by 64 x 128 x 1000 for the cost of one thread-barrier);</li>
 *   <li>{@code empty}: an empty kernel of {@code shape} (grid x block), the cost of a launch itself;</li>
 *   <li>{@code blockReductionPlainJava}: the reduction as plain Java without jpipeline (threads and a
 *       {@code CyclicBarrier} per block), the baseline a user would write.</li>
 * </ul>
 */
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 5)
@Measurement(iterations = 20)
@Fork(value = 1, jvmArgsAppend = "-Xmx4g")
public class SimtLaunchBenchmark {

    static final int REDUCTION_BLOCKS = 256;
    static final int REDUCTION_THREADS = 256;
    static final int LOOP_BLOCKS = 64;
    static final int LOOP_THREADS = 128;
    static final int LOOP_ROUNDS = 1000;

    /** The reduction's input and its expected sum. */
    @State(Scope.Benchmark)
    public static class ReductionData {
        final long[] input = new long[REDUCTION_BLOCKS * REDUCTION_THREADS];
        long expected;

        @Setup(Level.Trial)
        public void fill() {
            for (int i = 0; i < input.length; i++) {
                input[i] = i * 0x9E3779B97F4A7C15L >>> 20;
                expected += input[i];
            }
        }
    }

    @Benchmark
    public long blockReduction(ReductionData data) {
        long[] blockSums = new long[REDUCTION_BLOCKS];
        Kernel.launch(Dim3.of(REDUCTION_BLOCKS), Dim3.of(REDUCTION_THREADS), 0, ctx -> {
            long[] partial = ctx.shared("partial", () -> new long[REDUCTION_THREADS]);
            int t = ctx.threadIdx().x();
            partial[t] = data.input[ctx.blockIdx().x() * REDUCTION_THREADS + t];
            ctx.syncThreads();
            for (int half = REDUCTION_THREADS / 2; half > 0; half /= 2) {
                if (t < half) {
                    partial[t] += partial[t + half];
                }
                ctx.syncThreads();
            }
            if (t == 0) {
                blockSums[ctx.blockIdx().x()] = partial[0];
            }
        });
        long sum = 0;
        for (long s : blockSums) {
            sum += s;
        }
        if (sum != data.expected) {
            throw new IllegalStateException("block reduction summed " + sum + ", expected " + data.expected);
        }
        return sum;
    }

    /**
     * The plain Java a user would write without jpipeline for the same block reduction: a thread per CUDA thread
     * (virtual, so that 256 of them per block are cheap) and a {@link java.util.concurrent.CyclicBarrier} per block for
     * {@code __syncthreads}, the blocks run as many at a time as the machine has cores.
     */
    @Benchmark
    public long blockReductionPlainJava(ReductionData data) throws Exception {
        long[] blockSums = new long[REDUCTION_BLOCKS];
        int parallel = Runtime.getRuntime().availableProcessors();
        java.util.concurrent.Semaphore resident = new java.util.concurrent.Semaphore(parallel);
        try (var threads = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
            for (int b = 0; b < REDUCTION_BLOCKS; b++) {
                resident.acquire();
                int block = b;
                long[] partial = new long[REDUCTION_THREADS];
                java.util.concurrent.CyclicBarrier sync = new java.util.concurrent.CyclicBarrier(REDUCTION_THREADS);
                java.util.concurrent.atomic.AtomicInteger left =
                    new java.util.concurrent.atomic.AtomicInteger(REDUCTION_THREADS);
                for (int t0 = 0; t0 < REDUCTION_THREADS; t0++) {
                    int t = t0;
                    threads.submit(() -> {
                        partial[t] = data.input[block * REDUCTION_THREADS + t];
                        sync.await();
                        for (int half = REDUCTION_THREADS / 2; half > 0; half /= 2) {
                            if (t < half) {
                                partial[t] += partial[t + half];
                            }
                            sync.await();
                        }
                        if (t == 0) {
                            blockSums[block] = partial[0];
                        }
                        if (left.decrementAndGet() == 0) {
                            resident.release();
                        }
                        return null;
                    });
                }
            }
        }
        long sum = 0;
        for (long s : blockSums) {
            sum += s;
        }
        if (sum != data.expected) {
            throw new IllegalStateException("plain block reduction summed " + sum + ", expected " + data.expected);
        }
        return sum;
    }

    @Benchmark
    public void barrierLoop() {
        Kernel.launch(Dim3.of(LOOP_BLOCKS), Dim3.of(LOOP_THREADS), 0, ctx -> {
            long[] shared = ctx.shared("counts", () -> new long[LOOP_THREADS]);
            int t = ctx.threadIdx().x();
            for (int round = 0; round < LOOP_ROUNDS; round++) {
                shared[t] += 1;
                ctx.syncThreads();
            }
            if (shared[t] != LOOP_ROUNDS) {
                throw new IllegalStateException("thread " + t + " counted " + shared[t] + ", expected " + LOOP_ROUNDS);
            }
        });
    }

    /** An empty kernel's grid and block. */
    @State(Scope.Benchmark)
    public static class Shape {
        @Param({"1x32", "1x1024", "1024x256"})
        String shape;

        Dim3 grid;
        Dim3 block;

        @Setup(Level.Trial)
        public void parse() {
            String[] gridAndBlock = shape.split("x");
            grid = Dim3.of(Integer.parseInt(gridAndBlock[0]));
            block = Dim3.of(Integer.parseInt(gridAndBlock[1]));
        }
    }

    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @Warmup(iterations = 5, time = 1)
    @Measurement(iterations = 10, time = 1)
    public void empty(Shape s) {
        Kernel.launch(s.grid, s.block, 0, ctx -> { });
    }
}
