package dev.jpipeline.bench;

import com.lmax.disruptor.BlockingWaitStrategy;
import com.lmax.disruptor.BusySpinWaitStrategy;
import com.lmax.disruptor.RingBuffer;
import com.lmax.disruptor.dsl.Disruptor;
import com.lmax.disruptor.dsl.ProducerType;
import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.ThreadTeam;
import dev.jpipeline.WaitStrategy;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Exchanger;
import java.util.concurrent.Phaser;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.jctools.queues.SpscArrayQueue;
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
 * One producer hands 8-byte items to one consumer: jpipeline's stage ring (a partitioned pipeline with one
 * producer, one consumer and {@code depth} stages, each wait strategy) side by side with the Java tools a user
 * would otherwise pick. The benchmark thread produces 1024 items per invocation; a consumer thread, started for
 * each iteration, checks and drains every item. Scores are items per second.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(value = 5, jvmArgsAppend = "--sun-misc-unsafe-memory-access=allow")
public class StageHandoffBenchmark {

    static final int ITEMS = 1024;

    /** A consumer thread that checks that items arrive in order, and the count it reached. */
    abstract static class CheckedConsumer {
        final AtomicLong consumed = new AtomicLong();
        Thread consumer;
        long next;

        final void check(long item) {
            long expected = consumed.get();
            if (item != expected) {
                throw new IllegalStateException("item " + expected + " lost or reordered: got " + item);
            }
            consumed.lazySet(expected + 1);
        }

        final void startConsumer(Runnable drain) {
            next = 0;
            consumed.set(0);
            consumer = Thread.ofPlatform().daemon().name("bench-consumer").start(drain);
        }

        final void joinConsumer() throws InterruptedException {
            consumer.join(10_000);
            if (consumer.isAlive() || consumed.get() != next) {
                throw new IllegalStateException("consumer saw " + consumed.get() + " of " + next + " items");
            }
        }
    }

    /** jpipeline: partitioned block-scope pipeline, 1 producer + 1 consumer, {@code depth} stages. */
    @State(Scope.Thread)
    public static class PipelineRing extends CheckedConsumer {
        @Param({"2", "4", "8"})
        int depth;

        @Param({"BUSY_SPIN", "YIELDING", "ADAPTIVE", "BLOCKING"})
        String strategy;

        long[] slots;
        Pipeline producer;

        @Setup(Level.Iteration)
        public void start() {
            slots = new long[depth];
            PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, depth)
                .waitStrategy(named(strategy)).build();
            ThreadTeam team = ThreadTeam.ofPlatform(2);
            startConsumer(() -> drain(Pipeline.make(team.member(1), state, 1)));
            producer = Pipeline.make(team.member(0), state, 1);
        }

        private void drain(Pipeline pipe) {
            try {
                for (int stage = 0; ; stage = stage + 1 == depth ? 0 : stage + 1) {
                    pipe.consumerWait();
                    check(slots[stage]);
                    pipe.consumerRelease();
                }
            } catch (IllegalStateException noProducerLeft) {
                pipe.quit();
            }
        }

        @TearDown(Level.Iteration)
        public void stop() throws InterruptedException {
            producer.quit();                  // the consumer's next wait reports "no producer left"
            joinConsumer();
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

    /** {@link ArrayBlockingQueue} with {@code put} / {@code take}. */
    @State(Scope.Thread)
    public static class BlockingQueueRing extends CheckedConsumer {
        @Param({"4", "1024"})
        int abqCapacity;

        ArrayBlockingQueue<Long> queue;

        @Setup(Level.Iteration)
        public void start() {
            queue = new ArrayBlockingQueue<>(abqCapacity);
            startConsumer(() -> {
                try {
                    for (long item; (item = queue.take()) >= 0; ) {
                        check(item);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
        }

        @TearDown(Level.Iteration)
        public void stop() throws InterruptedException {
            queue.put(-1L);
            joinConsumer();
        }
    }

    @Benchmark
    @OperationsPerInvocation(ITEMS)
    public void arrayBlockingQueue(BlockingQueueRing ring) throws InterruptedException {
        for (int i = 0; i < ITEMS; i++) {
            ring.queue.put(ring.next++);
        }
    }

    /** An LMAX Disruptor ring with one event handler. */
    @State(Scope.Thread)
    public static class DisruptorRing extends CheckedConsumer {
        @Param({"4", "1024"})
        int disruptorRing;

        @Param({"BusySpin", "Blocking"})
        String disruptorWait;

        /** A mutable event: the ring's slot. */
        static final class Slot {
            long value;
        }

        Disruptor<Slot> disruptor;
        RingBuffer<Slot> ring;

        @Setup(Level.Iteration)
        public void start() {
            next = 0;
            consumed.set(0);
            disruptor = new Disruptor<>(Slot::new, disruptorRing, Thread.ofPlatform().daemon().factory(),
                ProducerType.SINGLE,
                disruptorWait.equals("BusySpin") ? new BusySpinWaitStrategy() : new BlockingWaitStrategy());
            disruptor.handleEventsWith((slot, sequence, endOfBatch) -> check(slot.value));
            ring = disruptor.start();
        }

        @TearDown(Level.Iteration)
        public void stop() {
            disruptor.shutdown();             // returns once every published event is handled
            if (consumed.get() != next) {
                throw new IllegalStateException("handler saw " + consumed.get() + " of " + next + " items");
            }
        }
    }

    @Benchmark
    @OperationsPerInvocation(ITEMS)
    public void disruptor(DisruptorRing state) {
        RingBuffer<DisruptorRing.Slot> ring = state.ring;
        for (int i = 0; i < ITEMS; i++) {
            long sequence = ring.next();
            ring.get(sequence).value = state.next++;
            ring.publish(sequence);
        }
    }

    /** JCTools {@link SpscArrayQueue}, both sides spinning. */
    @State(Scope.Thread)
    public static class SpscRing extends CheckedConsumer {
        @Param({"4", "1024"})
        int spscCapacity;

        SpscArrayQueue<Long> queue;
        volatile boolean done;

        @Setup(Level.Iteration)
        public void start() {
            queue = new SpscArrayQueue<>(spscCapacity);
            done = false;
            startConsumer(() -> {
                for (;;) {
                    Long item = queue.relaxedPoll();
                    if (item != null) {
                        check(item);
                    } else if (done && queue.isEmpty()) {
                        return;
                    } else {
                        Thread.onSpinWait();
                    }
                }
            });
        }

        @TearDown(Level.Iteration)
        public void stop() throws InterruptedException {
            done = true;
            joinConsumer();
        }
    }

    @Benchmark
    @OperationsPerInvocation(ITEMS)
    public void jctoolsSpsc(SpscRing ring) {
        SpscArrayQueue<Long> queue = ring.queue;
        for (int i = 0; i < ITEMS; i++) {
            Long item = ring.next++;
            while (!queue.relaxedOffer(item)) {
                Thread.onSpinWait();
            }
        }
    }

    /** {@link Exchanger}: every item is a rendezvous. */
    @State(Scope.Thread)
    public static class ExchangerPair extends CheckedConsumer {
        final Exchanger<Long> exchanger = new Exchanger<>();

        @Setup(Level.Iteration)
        public void start() {
            startConsumer(() -> {
                try {
                    for (long item; (item = exchanger.exchange(null)) >= 0; ) {
                        check(item);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
        }

        @TearDown(Level.Iteration)
        public void stop() throws InterruptedException {
            exchanger.exchange(-1L);
            joinConsumer();
        }
    }

    @Benchmark
    @OperationsPerInvocation(ITEMS)
    public void exchanger(ExchangerPair pair) throws InterruptedException {
        for (int i = 0; i < ITEMS; i++) {
            pair.exchanger.exchange(pair.next++);
        }
    }

    /** {@link Phaser} of two parties: a one-slot hand-off (write, advance; read, advance). */
    @State(Scope.Thread)
    public static class PhaserPair extends CheckedConsumer {
        Phaser phaser;
        long slot;

        @Setup(Level.Iteration)
        public void start() {
            phaser = new Phaser(2);
            startConsumer(() -> {
                for (;;) {
                    phaser.arriveAndAwaitAdvance();         // the slot is full
                    long item = slot;
                    phaser.arriveAndAwaitAdvance();         // the slot is free again
                    if (item < 0) {
                        return;
                    }
                    check(item);
                }
            });
        }

        @TearDown(Level.Iteration)
        public void stop() throws InterruptedException {
            slot = -1;
            phaser.arriveAndAwaitAdvance();
            phaser.arriveAndAwaitAdvance();
            joinConsumer();
        }
    }

    @Benchmark
    @OperationsPerInvocation(ITEMS)
    public void phaser(PhaserPair pair) {
        for (int i = 0; i < ITEMS; i++) {
            pair.slot = pair.next++;
            pair.phaser.arriveAndAwaitAdvance();
            pair.phaser.arriveAndAwaitAdvance();
        }
    }

    /** The built-in wait strategy of that name (JMH parameters are strings). */
    static WaitStrategy named(String name) {
        return switch (name) {
            case "BUSY_SPIN" -> WaitStrategy.BUSY_SPIN;
            case "YIELDING" -> WaitStrategy.YIELDING;
            case "ADAPTIVE" -> WaitStrategy.ADAPTIVE;
            case "BLOCKING" -> WaitStrategy.BLOCKING;
            default -> throw new IllegalArgumentException("no built-in wait strategy named " + name);
        };
    }
}
