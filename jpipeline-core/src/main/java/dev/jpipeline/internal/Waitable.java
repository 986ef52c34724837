package dev.jpipeline.internal;

/**
 * Something a thread can wait for with {@link Waiting#await}: a condition that can be polled, and a stack of
 * parked waiters that the thread meeting the condition wakes.
 */
public interface Waitable {

    /**
     * Looks once at the condition named by {@code token} (for a barrier, a phase).
     *
     * @return {@code null} while it is not met, else the outcome (never {@link WaitStatus#TIMED_OUT} or
     *         {@link WaitStatus#INTERRUPTED})
     */
    WaitStatus poll(long token);

    /**
     * Publishes {@code waiter} so that the next signal unparks it. The caller polls again after this and before
     * it parks: a signal that came between its last poll and the push is then seen by that poll.
     */
    void enqueue(Waiter waiter);

    /** Unlinks the nodes of waits that have ended (see {@link Waiter#sweep}). */
    void sweepWaiters();
}
