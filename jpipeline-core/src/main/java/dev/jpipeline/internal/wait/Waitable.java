package dev.jpipeline.internal.wait;

import dev.jpipeline.internal.PhaseBarrier;
import java.util.concurrent.locks.LockSupport;

/**
 * Something a thread can wait for with {@link Waiting#await}: a condition that can be polled, and a place where
 * waiters sleep that the thread meeting the condition wakes. In this process that place is a Treiber stack of
 * parked {@link Waiter}s, and a waiter parks with {@link LockSupport} (the defaults below). A word that several
 * processes map counts its waiters instead, and they sleep in a futex on a wake word beside it
 * (dev.jpipeline.internal.process.FutexWord): enqueue counts the wait, park sleeps on the wake word, dequeue
 * uncounts it. Either way the wait routine is the same: push or count, poll, sleep, poll.
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

    /**
     * The wait that published {@code waiter} has ended with the node still published (no signal detached it):
     * a stack unlinks it and the nodes of other waits that have ended ({@link Waiter#sweep}).
     */
    void dequeue(Waiter waiter);

    /**
     * Sleeps until a signal, {@code limit} (a {@link System#nanoTime()} deadline, or {@link Deadlines#NO_DEADLINE})
     * or a spurious wake-up; the caller polls after it returns. Called after {@link #enqueue} and a poll that found
     * the condition {@code token} unmet. By default a {@link LockSupport} park with this waitable as the blocker.
     */
    default void park(long token, long limit) {
        if (limit == Deadlines.NO_DEADLINE) {
            LockSupport.park(this);
        } else {
            LockSupport.parkNanos(this, limit - System.nanoTime());
        }
    }

    /**
     * The longest one park may last when parks are bounded ({@link #signalsMayMissAPush}): a long wait then wakes
     * at least this often, and a missed signal costs at most this. By default one second.
     */
    default long maxParkNanos() {
        return 1_000_000_000L;
    }

    /**
     * Whether {@link Thread#interrupt} ends a {@link #park}: true for a LockSupport park; false for a sleep in the
     * kernel that an interrupt does not reach, whose interruptible waits the wait routine then bounds instead.
     */
    default boolean interruptEndsPark() {
        return true;
    }

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
