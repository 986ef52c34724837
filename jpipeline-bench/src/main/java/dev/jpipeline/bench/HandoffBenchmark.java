package dev.jpipeline.bench;

import com.lmax.disruptor.BusySpinWaitStrategy;
import com.lmax.disruptor.RingBuffer;
import com.lmax.disruptor.dsl.Disruptor;
import com.lmax.disruptor.dsl.ProducerType;
import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.ThreadTeam;
import dev.jpipeline.WaitStrategy;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
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
 * End-to-end hand-off: one producer thread (the benchmark thread) hands 2^16 sequence numbers per invocation to
 * one consumer thread, which checks every one; the invocation ends when the consumer has checked the last
 * ({@link CheckedItems}). The consumer thread lives for the whole trial. Scores are items (stages) per second.
 * jpipeline is used through its public API only, the peers the way their users use them at their best settings:
 *
 * <ul>
 *   <li>{@code partitioned}: a block-scope partitioned pipeline of one producer and one consumer, {@code depth}
 *       stages, each stage carrying one item in a {@code long[]} slot;</li>
 *   <li>{@code unified}: a unified pipeline of {@code threads} threads and 4 stages; the benchmark thread writes
 *       each stage's item, every thread commits every stage, and the other threads check it after their wait
 *       (stages per second);</li>
 *   <li>{@code jctoolsSpsc}: JCTools {@link SpscArrayQueue}, both ends spinning, carrying pre-boxed
 *       {@code Long}s (no allocation per item);</li>
 *   <li>{@code disruptor}: an LMAX Disruptor ring, single producer, busy-spin wait strategy.</li>
 * </ul>
 *
 * {@code docs/performance.md} reports medians of the fork means; keep {@code -rf json} for per-fork figures.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 3, jvmArgsAppend = "--sun-misc-unsafe-memory-access=allow")
public class HandoffBenchmark {

    static final int ITEMS = CheckedItems.ITEMS;

    /** A jpipeline partitioned pipeline: this thread produces, a consumer thread checks. */
    @State(Scope.Thread)
    public static class Partitioned {
        @Param({"1", "2", "4", "8"})
        int depth;

        @Param({"ADAPTIVE", "BUSY_SPIN"})
        String strategy;

        PartitionedLane lane;

        @Setup(Level.Trial)
        public void start() {
            lane = new PartitionedLane(depth, named(strategy), "handoff-consumer");
            lane.open();
        }

        @TearDown(Level.Trial)
        public void stop() throws InterruptedException {
            lane.close();
        }
    }

    @Benchmark
    @OperationsPerInvocation(ITEMS)
    public void partitioned(Partitioned p) {
        p.lane.items.awaitAll(p.lane.sendInvocation());
    }

    /** A jpipeline unified pipeline of {@code threads} threads, 4 stages; this thread is rank 0. */
    @State(Scope.Thread)
    public static class Unified {
        static final int DEPTH = 4;

        @Param({"2", "4", "8"})
        int threads;

        @Param({"ADAPTIVE", "BUSY_SPIN"})
        String strategy;

        final CheckedItems items = new CheckedItems();
        final long[] slots = new long[DEPTH];
        final List<Thread> helpers = new ArrayList<>();
        Pipeline pipe;
        long sent;
        volatile boolean stop;

        @Setup(Level.Trial)
        public void start() {
            PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, DEPTH)
                .waitStrategy(named(strategy)).build();
            ThreadTeam team = ThreadTeam.ofPlatform(threads);
            for (int rank = 1; rank < threads; rank++) {
                int r = rank;
                helpers.add(Thread.ofPlatform().daemon().name("unified-" + r).start(() -> {
                    try (Pipeline mine = Pipeline.make(team.member(r), state)) {
                        for (long n = 0; !stop; n++) {
                            int stage = (int) (n % DEPTH);
                            mine.producerAcquire();
                            mine.producerCommit();
                            mine.consumerWait();
                            if (slots[stage] != (n & CheckedItems.MASK)) {
                                items.fail(new IllegalStateException("rank " + r + " read " + slots[stage]
                                    + " in stage " + n + ", expected " + (n & CheckedItems.MASK)));
                                return;
                            }
                            mine.consumerRelease();
                            if (r == 1) {
                                items.accept(n & CheckedItems.MASK);
                            }
                        }
                    } catch (Throwable t) {
                        items.fail(t);
                    }
                }));
            }
            pipe = Pipeline.make(team.member(0), state);
        }

        @TearDown(Level.Trial)
        public void stop() throws InterruptedException {
            stop = true;                      // helpers leave at their next stage, which rank 0's quit lets complete
            pipe.quit();
            for (Thread helper : helpers) {
                HandoffLane.join(helper);
            }
        }
    }

    @Benchmark
    @OperationsPerInvocation(ITEMS)
    public void unified(Unified u) {
        Pipeline pipe = u.pipe;
        long[] slots = u.slots;
        long sent = u.sent;
        for (int i = 0; i < ITEMS; i++) {
            long n = sent + i;
            int stage = (int) (n % Unified.DEPTH);
            pipe.producerAcquire();
            slots[stage] = n & CheckedItems.MASK;
            pipe.producerCommit();
            pipe.consumerWait();
            pipe.consumerRelease();
        }
        u.sent = sent + ITEMS;
        u.items.awaitAll(u.sent - 1);      // rank 1 has committed the last stage, so it checked the one before
    }

    /** JCTools {@link SpscArrayQueue}, both ends spinning ({@link SpscLane}). */
    @State(Scope.Thread)
    public static class Spsc {
        @Param({"4"})
        int spscCapacity;

        SpscLane lane;

        /** The lane this state measures. */
        SpscLane newLane() {
            return new SpscLane(spscCapacity, "spsc-consumer");
        }

        @Setup(Level.Trial)
        public void start() {
            lane = newLane();
        }

        @TearDown(Level.Trial)
        public void stop() throws InterruptedException {
            lane.close();
        }
    }

    @Benchmark
    @OperationsPerInvocation(ITEMS)
    public void jctoolsSpsc(Spsc s) {
        s.lane.items.awaitAll(s.lane.sendInvocation());
    }

    /** JCTools shaped like a pipeline stage ({@link SeparateDataSpscLane}): an anatomy, not a peer. */
    @State(Scope.Thread)
    public static class SpscSeparateData extends Spsc {
        @Override
        SpscLane newLane() {
            return new SeparateDataSpscLane(spscCapacity, "spsc-consumer");
        }
    }

    @Benchmark
    @OperationsPerInvocation(ITEMS)
    public void jctoolsSpscSeparateData(SpscSeparateData s) {
        s.lane.items.awaitAll(s.lane.sendInvocation());
    }

    /** An LMAX Disruptor ring with one busy-spinning event handler. */
    @State(Scope.Thread)
    public static class DisruptorRing {
        @Param({"4", "1024"})
        int disruptorRing;

        /** A mutable event: the ring's slot. */
        static final class Slot {
            long value;
        }

        final CheckedItems items = new CheckedItems();
        Disruptor<Slot> disruptor;
        RingBuffer<Slot> ring;
        long sent;

        @Setup(Level.Trial)
        public void start() {
            disruptor = new Disruptor<>(Slot::new, disruptorRing, Thread.ofPlatform().daemon().factory(),
                ProducerType.SINGLE, new BusySpinWaitStrategy());
            disruptor.handleEventsWith((slot, sequence, endOfBatch) -> items.accept(slot.value));
            ring = disruptor.start();
        }

        @TearDown(Level.Trial)
        public void stop() {
            disruptor.halt();
        }
    }

    @Benchmark
    @OperationsPerInvocation(ITEMS)
    public void disruptor(DisruptorRing d) {
        RingBuffer<DisruptorRing.Slot> ring = d.ring;
        long sent = d.sent;
        for (int i = 0; i < ITEMS; i++) {
            long sequence = ring.next();
            ring.get(sequence).value = (sent + i) & CheckedItems.MASK;
            ring.publish(sequence);
        }
        d.sent = sent + ITEMS;
        d.items.awaitAll(d.sent);
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
