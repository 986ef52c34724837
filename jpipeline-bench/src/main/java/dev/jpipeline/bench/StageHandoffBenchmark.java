package dev.jpipeline.bench;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Exchanger;
import java.util.concurrent.Phaser;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The hand-off of {@link HandoffBenchmark} (inherited: jpipeline, JCTools, the Disruptor, same harness and
 * figures) beside the {@code java.util.concurrent} tools a user would otherwise pick: {@link ArrayBlockingQueue},
 * {@link Exchanger} and a two-party {@link Phaser}. End to end, 2^16 items per invocation, a consumer thread per
 * trial that checks every item. Run every wait strategy with {@code -p strategy=BUSY_SPIN,YIELDING,ADAPTIVE,BLOCKING}.
 *
 * <p>Until 0.1 this class started a consumer thread per iteration, handed 1024 items per invocation without
 * waiting for the consumer, boxed a new {@code Long} per item for JCTools, and had the consumer read a field on
 * the cache line the producer wrote per item. Together that held every case near 4 M items/s on 16 cores.
 */
public class StageHandoffBenchmark extends HandoffBenchmark {

    /** {@link ArrayBlockingQueue} with {@code put} / {@code take}. */
    @State(Scope.Thread)
    public static class BlockingQueueRing {
        @Param({"4", "1024"})
        int abqCapacity;

        final CheckedItems items = new CheckedItems();
        ArrayBlockingQueue<Long> queue;
        Thread consumer;
        long sent;

        @Setup(Level.Trial)
        public void start() {
            queue = new ArrayBlockingQueue<>(abqCapacity);
            consumer = Thread.ofPlatform().daemon().name("abq-consumer").start(() -> {
                try {
                    for (long item; (item = queue.take()) >= 0; ) {
                        items.accept(item);
                    }
                } catch (Throwable t) {
                    items.fail(t);
                }
            });
        }

        @TearDown(Level.Trial)
        public void stop() throws InterruptedException {
            queue.put(-1L);
            HandoffLane.join(consumer);
        }
    }

    @Benchmark
    @OperationsPerInvocation(ITEMS)
    public void arrayBlockingQueue(BlockingQueueRing ring) throws InterruptedException {
        Long[] boxes = SpscLane.BOXES;
        for (int i = 0; i < ITEMS; i++) {
            ring.queue.put(boxes[i]);
        }
        ring.sent += ITEMS;
        ring.items.awaitAll(ring.sent);
    }

    /** {@link Exchanger}: every item is a rendezvous. */
    @State(Scope.Thread)
    public static class ExchangerPair {
        final CheckedItems items = new CheckedItems();
        final Exchanger<Long> exchanger = new Exchanger<>();
        Thread consumer;
        long sent;

        @Setup(Level.Trial)
        public void start() {
            consumer = Thread.ofPlatform().daemon().name("exchanger-consumer").start(() -> {
                try {
                    for (long item; (item = exchanger.exchange(null)) >= 0; ) {
                        items.accept(item);
                    }
                } catch (Throwable t) {
                    items.fail(t);
                }
            });
        }

        @TearDown(Level.Trial)
        public void stop() throws InterruptedException {
            exchanger.exchange(-1L);
            HandoffLane.join(consumer);
        }
    }

    @Benchmark
    @OperationsPerInvocation(ITEMS)
    public void exchanger(ExchangerPair pair) throws InterruptedException {
        Long[] boxes = SpscLane.BOXES;
        for (int i = 0; i < ITEMS; i++) {
            pair.exchanger.exchange(boxes[i]);
        }
        pair.sent += ITEMS;
        pair.items.awaitAll(pair.sent);
    }

    /** {@link Phaser} of two parties: a one-slot hand-off (write, advance; read, advance). */
    @State(Scope.Thread)
    public static class PhaserPair {
        final CheckedItems items = new CheckedItems();
        final Phaser phaser = new Phaser(2);
        Thread consumer;
        long slot;
        long sent;

        @Setup(Level.Trial)
        public void start() {
            consumer = Thread.ofPlatform().daemon().name("phaser-consumer").start(() -> {
                try {
                    for (;;) {
                        phaser.arriveAndAwaitAdvance();         // the slot is full
                        long item = slot;
                        phaser.arriveAndAwaitAdvance();         // the slot is free again
                        if (item < 0) {
                            return;
                        }
                        items.accept(item);
                    }
                } catch (Throwable t) {
                    items.fail(t);
                }
            });
        }

        @TearDown(Level.Trial)
        public void stop() throws InterruptedException {
            slot = -1;
            phaser.arriveAndAwaitAdvance();
            phaser.arriveAndAwaitAdvance();
            HandoffLane.join(consumer);
        }
    }

    @Benchmark
    @OperationsPerInvocation(ITEMS)
    public void phaser(PhaserPair pair) {
        for (int i = 0; i < ITEMS; i++) {
            pair.slot = i;
            pair.phaser.arriveAndAwaitAdvance();
            pair.phaser.arriveAndAwaitAdvance();
        }
        pair.sent += ITEMS;
        pair.items.awaitAll(pair.sent);
    }
}
