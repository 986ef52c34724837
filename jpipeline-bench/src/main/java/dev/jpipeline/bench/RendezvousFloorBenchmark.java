package dev.jpipeline.bench;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The machine's floor for a unified pipeline of two threads: not a pipeline, but the least any unified pipeline
 * must do per stage. A unified thread's {@code consumer_wait} for a batch cannot return before every thread has
 * committed it, so two threads run in step: each stage needs the other thread's commit to reach this one. Here
 * each thread publishes its step count on a cache line of its own (a release store, no read-modify-write) and
 * spins until the other's count reaches the same step: one cross-core line transfer each way per step and nothing
 * else. Scores are steps per second; {@code HandoffBenchmark.unified} with 2 threads is measured against it.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(3)
public class RendezvousFloorBenchmark {

    static final int STEPS = CheckedItems.ITEMS;
    /** Longs between the two counters: each sits on a 128-byte stretch of its own. */
    private static final int STRIDE = 16;
    private static final VarHandle COUNT = MethodHandles.arrayElementVarHandle(long[].class);

    /** Two step counters (this thread's at STRIDE, the partner's at 2 * STRIDE) and the partner thread. */
    @State(Scope.Thread)
    public static class Pair {
        final long[] counts = new long[3 * STRIDE + 1];
        Thread partner;
        long steps;
        volatile boolean stop;

        @Setup(Level.Trial)
        public void start() {
            partner = Thread.ofPlatform().daemon().name("rendezvous-partner").start(() -> {
                for (long n = 1; ; n++) {
                    COUNT.setRelease(counts, 2 * STRIDE, n);
                    while ((long) COUNT.getAcquire(counts, STRIDE) < n) {
                        if (stop) {
                            return;
                        }
                        Thread.onSpinWait();
                    }
                }
            });
        }

        @TearDown(Level.Trial)
        public void stop() throws InterruptedException {
            stop = true;
            HandoffLane.join(partner);
        }
    }

    @Benchmark
    @OperationsPerInvocation(STEPS)
    public long lockstep(Pair p) {
        long[] counts = p.counts;
        long first = p.steps + 1;
        long last = p.steps + STEPS;
        for (long n = first; n <= last; n++) {
            COUNT.setRelease(counts, STRIDE, n);
            for (int spins = 0; (long) COUNT.getAcquire(counts, 2 * STRIDE) < n; spins++) {
                if (spins == Integer.MAX_VALUE) {
                    throw new IllegalStateException("partner stopped at step " + COUNT.getAcquire(counts, 2 * STRIDE));
                }
                Thread.onSpinWait();
            }
        }
        p.steps = last;
        return last;
    }
}
