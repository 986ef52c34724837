package dev.jpipeline.bench;

/**
 * One producer → consumer lane of an end-to-end hand-off benchmark: a consumer thread of its own, started with the
 * lane and alive until {@link #close}, that checks every item ({@link CheckedItems}), and a producing side that
 * one thread opens, feeds an invocation at a time and closes. Items are sequence numbers modulo
 * {@link CheckedItems#ITEMS}.
 *
 * <p>Threads: {@link #open}, {@link #sendInvocation} and {@link #close} are called by the producing thread only
 * (a jpipeline handle belongs to the thread that made it); {@link #items} is read by whoever waits for the
 * consumer.
 */
abstract class HandoffLane {

    /** Items per invocation. */
    static final int ITEMS = CheckedItems.ITEMS;

    /** What the consumer has checked. */
    final CheckedItems items = new CheckedItems();

    /** Items sent so far; producing thread only. */
    private long sent;

    /** Producing thread: takes the producing side (called once, before the first {@link #sendInvocation}). */
    abstract void open();

    /** Producing thread: sends {@link #ITEMS} items, the first numbered {@code first}. */
    abstract void produce(long first);

    /** Producing thread: ends the stream and waits up to 10 s for the consumer thread to stop. */
    abstract void close() throws InterruptedException;

    /** Producing thread: sends the next invocation's items and returns how many have been sent in all. */
    final long sendInvocation() {
        produce(sent);
        sent += ITEMS;
        return sent;
    }

    /** Waits up to 10 s for {@code t} to stop. */
    static void join(Thread t) throws InterruptedException {
        t.join(10_000);
        if (t.isAlive()) {
            throw new IllegalStateException(t.getName() + " did not stop within 10 s");
        }
    }
}
