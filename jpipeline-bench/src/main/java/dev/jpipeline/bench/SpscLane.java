package dev.jpipeline.bench;

import org.jctools.queues.SpscArrayQueue;

/**
 * A hand-off lane through a JCTools {@link SpscArrayQueue}, both ends spinning, carrying pre-boxed {@code Long}s
 * (no allocation per item): the queue used the way its users use it at its best.
 */
class SpscLane extends HandoffLane {

    /** The same 2^16 boxes every invocation: a queue of messages the application already holds. */
    static final Long[] BOXES = new Long[ITEMS];

    static {
        for (int i = 0; i < ITEMS; i++) {
            BOXES[i] = (long) i;
        }
    }

    final SpscArrayQueue<Long> queue;
    private final Thread consumer;
    private volatile boolean stop;

    SpscLane(int capacity, String name) {
        queue = new SpscArrayQueue<>(capacity);
        consumer = Thread.ofPlatform().daemon().name(name).start(this::consume);
    }

    private void consume() {
        try {
            for (;;) {
                Long element = queue.relaxedPoll();
                if (element != null) {
                    items.accept(item(element));
                } else if (stop) {
                    return;
                } else {
                    Thread.onSpinWait();
                }
            }
        } catch (Throwable t) {
            items.fail(t);
        }
    }

    /** The item a polled element stands for: the element itself. */
    long item(Long element) {
        return element;
    }

    @Override
    void open() {
        // a queue has no producer handle to take
    }

    /** {@code first} is a multiple of {@link #ITEMS} ({@link #sendInvocation}), so item i is box i. */
    @Override
    void produce(long first) {
        Long[] boxes = BOXES;
        for (int i = 0; i < ITEMS; i++) {
            offer(boxes[i]);
        }
    }

    /** Offers {@code element}, spinning while the queue is full (and failing if the consumer has died). */
    final void offer(Long element) {
        for (int spins = 1; !queue.relaxedOffer(element); spins++) {
            if ((spins & 0xFFFF) == 0) {
                items.checkConsumer();
            }
            Thread.onSpinWait();
        }
    }

    @Override
    void close() throws InterruptedException {
        stop = true;
        join(consumer);
    }
}
