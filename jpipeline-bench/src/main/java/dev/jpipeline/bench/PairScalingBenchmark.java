package dev.jpipeline.bench;

import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.ThreadTeam;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.jctools.queues.SpscArrayQueue;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Scaling: {@code pairs} independent producer/consumer pairs run at once, each handing 8-byte items through its
 * own depth-4 ring (a jpipeline partitioned pipeline, or a JCTools SpscArrayQueue(4) with spinning on both
 * sides). Each invocation starts the 2 x pairs threads, streams {@code ITEMS} items per pair and joins them;
 * the score is total items per second (higher is better). Meant for machines with at least 2 x pairs cores.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(value = 5, jvmArgsAppend = "--sun-misc-unsafe-memory-access=allow")
@State(Scope.Benchmark)
public class PairScalingBenchmark {

    static final int ITEMS = 1 << 18;
    static final int DEPTH = 4;

    @Param({"1", "2", "4", "8"})
    int pairs;

    /** Runs {@code pairs} copies of {@code pair} on their own threads and waits for all of them. */
    private long runPairs(Runnable pair) {
        Thread[] threads = new Thread[pairs];
        AtomicReference<Throwable> failure = new AtomicReference<>();
        for (int p = 0; p < pairs; p++) {
            threads[p] = Thread.ofPlatform().start(() -> {
                try {
                    pair.run();
                } catch (Throwable t) {
                    failure.set(t);
                }
            });
        }
        for (Thread t : threads) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (failure.get() != null) {
            throw new IllegalStateException(failure.get());
        }
        return (long) pairs * ITEMS;
    }

    /** The calling thread produces; a consumer thread it starts checks every item. */
    private static void jpipelinePair() {
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, DEPTH);
        ThreadTeam team = ThreadTeam.ofPlatform(2);
        long[] slots = new long[DEPTH];
        AtomicReference<Throwable> consumerFailure = new AtomicReference<>();
        Thread consumer = Thread.ofPlatform().start(() -> {
            try (Pipeline pipe = Pipeline.make(team.member(1), state, 1)) {
                for (int i = 0; i < ITEMS; i++) {
                    pipe.consumerWait();
                    if (slots[i % DEPTH] != i) {
                        throw new IllegalStateException("item " + i + " lost");
                    }
                    pipe.consumerRelease();
                }
            } catch (Throwable t) {
                consumerFailure.set(t);
            }
        });
        try (Pipeline pipe = Pipeline.make(team.member(0), state, 1)) {
            for (int i = 0; i < ITEMS; i++) {
                pipe.producerAcquire();
                slots[i % DEPTH] = i;
                pipe.producerCommit();
            }
        }
        join(consumer, consumerFailure);
    }

    private static void spscPair() {
        SpscArrayQueue<Long> queue = new SpscArrayQueue<>(DEPTH);
        AtomicReference<Throwable> consumerFailure = new AtomicReference<>();
        Thread consumer = Thread.ofPlatform().start(() -> {
            for (long i = 0; i < ITEMS; ) {
                Long item = queue.relaxedPoll();
                if (item == null) {
                    Thread.onSpinWait();
                } else if (item != i++) {
                    consumerFailure.set(new IllegalStateException("item lost"));
                    return;
                }
            }
        });
        for (long i = 0; i < ITEMS; i++) {
            Long item = i;
            while (!queue.relaxedOffer(item)) {
                Thread.onSpinWait();
            }
        }
        join(consumer, consumerFailure);
    }

    private static void join(Thread consumer, AtomicReference<Throwable> failure) {
        try {
            consumer.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (failure.get() != null) {
            throw new IllegalStateException(failure.get());
        }
    }

    @Benchmark
    public long jpipeline() {
        return runPairs(PairScalingBenchmark::jpipelinePair);
    }

    @Benchmark
    public long jctoolsSpsc() {
        return runPairs(PairScalingBenchmark::spscPair);
    }
}
