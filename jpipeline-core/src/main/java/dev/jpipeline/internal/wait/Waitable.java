package dev.jpipeline.internal.wait;

import dev.jpipeline.internal.PhaseBarrier;

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

    /**
     * Does work that brings the condition closer, if there is any the waiter can do itself: a barrier's waiter
     * performs the copies tied to it that no worker has started. Called by the wait routine before it idles and
     * again before each park; never blocks for long (it performs copies, it does not wait for them).
     *
     * @return whether it did anything (the caller then polls again)
     */
    default boolean helpProgress() {
        return false;
    }

    /**
     * Whether a signal may miss a waiter that has just pushed its node: the condition is met by a release store
     * that is not ordered before the signaller's read of the stack (see {@link PhaseBarrier#arriveAlone}). The
     * wait routine then bounds each park, so that a missed signal costs a short delay, never a hang.
     */
    default boolean signalsMayMissAPush() {
        return false;
    }
}
