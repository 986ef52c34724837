package dev.jpipeline.bench;

import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.ThreadTeam;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One producer hands 8-byte items to one consumer through a ring of {@code depth} slots: a jpipeline
 * partitioned pipeline (1 producer, 1 consumer, {@code depth} stages) against {@link ArrayBlockingQueue} of
 * the same capacity. The benchmark thread produces; a consumer thread, started for each iteration, drains.
 * Figures are items per second (ops = items).
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(5)
public class StageHandoffBenchmark {

    static final int ITEMS = 1024;

    /** A jpipeline stage ring with a consumer thread that checks and drains every item. */
    @State(Scope.Thread)
    public static class PipelineRing {
        @Param({"2", "4", "8"})
        int depth;

        long[] slots;
        Pipeline producer;
        Thread consumer;
        final AtomicLong consumed = new AtomicLong();
        long next;

        @Setup(Level.Iteration)
        public void start() {
            slots = new long[depth];
            next = 0;
            consumed.set(0);
            PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, depth);
            ThreadTeam team = ThreadTeam.ofPlatform(2);
            consumer = Thread.ofPlatform().daemon().start(() -> drain(Pipeline.make(team.member(1), state, 1)));
            producer = Pipeline.make(team.member(0), state, 1);
        }

        private void drain(Pipeline pipe) {
            long expected = 0;
            try {
                for (int stage = 0; ; stage = stage + 1 == depth ? 0 : stage + 1) {
                    pipe.consumerWait();
                    if (slots[stage] != expected++) {
                        throw new IllegalStateException("item " + (expected - 1) + " lost or reordered");
                    }
                    pipe.consumerRelease();
                    consumed.lazySet(expected);
                }
            } catch (IllegalStateException noProducerLeft) {
                pipe.quit();
            }
        }

        @TearDown(Level.Iteration)
        public void stop() throws InterruptedException {
            producer.quit();
            consumer.join(10_000);
            if (consumer.isAlive() || consumed.get() != next) {
                throw new IllegalStateException("consumer saw " + consumed.get() + " of " + next + " items");
            }
        }
    }

    /** The same hand-off through an {@link ArrayBlockingQueue}. */
    @State(Scope.Thread)
    public static class BlockingQueueRing {
        @Param({"2", "4", "8"})
        int depth;

        ArrayBlockingQueue<Long> queue;
        Thread consumer;
        long next;
        static final Long POISON = Long.MIN_VALUE;

        @Setup(Level.Iteration)
        public void start() {
            queue = new ArrayBlockingQueue<>(depth);
            next = 0;
            consumer = Thread.ofPlatform().daemon().start(() -> {
                try {
                    long expected = 0;
                    for (Long item; (item = queue.take()) != POISON; ) {
                        if (item != expected++) {
                            throw new IllegalStateException("item lost or reordered");
                        }
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
        }

        @TearDown(Level.Iteration)
        public void stop() throws InterruptedException {
            queue.put(POISON);
            consumer.join(10_000);
        }
    }

    @Benchmark
    @OperationsPerInvocation(ITEMS)
    public void jpipeline(PipelineRing ring) {
        Pipeline pipe = ring.producer;
        long[] slots = ring.slots;
        int depth = ring.depth;
        for (int i = 0; i < ITEMS; i++) {
            pipe.producerAcquire();
            slots[(int) (ring.next % depth)] = ring.next++;
            pipe.producerCommit();
        }
    }

    @Benchmark
    @OperationsPerInvocation(ITEMS)
    public void arrayBlockingQueue(BlockingQueueRing ring) throws InterruptedException {
        for (int i = 0; i < ITEMS; i++) {
            ring.queue.put(ring.next++);     // boxing is part of the peer's real cost
        }
    }
}
