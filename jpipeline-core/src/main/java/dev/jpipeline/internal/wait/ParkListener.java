package dev.jpipeline.internal.wait;

import dev.jpipeline.internal.checked.Interleaver;
import java.time.Instant;
import java.util.concurrent.locks.LockSupport;

/**
 * Told when the current thread parks in a jpipeline wait and when it wakes, and does the parking and the waking:
 * the hook through which an execution model built on top of the core sees which of its threads are blocked and
 * where (the SIMT runtime's hang detection), and decides what runs while one is blocked (its block scheduler hands
 * the block's single turn to another CUDA thread). Bound per thread with {@link #CURRENT}; unbound threads pay one
 * look-up per park, nothing else.
 *
 * <p>A waiter pushed while a listener was bound is woken through that listener's {@link #wake()}, not by
 * {@link LockSupport#unpark}: the listener must then treat a wake like a permit, as {@code LockSupport} does (a
 * wake that comes before the {@link #park} makes that park return at once), or a wake-up is lost.
 */
public interface ParkListener {

    /** The listener of the current thread, if any. */
    ScopedValue<ParkListener> CURRENT = ScopedValue.newInstance();

    /**
     * The current thread is about to park. Runs after the wait's last poll: it must not block through
     * {@code LockSupport} (a {@code java.util.concurrent} lock, a latch), whose park can take the unpark of the
     * signal that ends the wait ({@code synchronized} is safe).
     *
     * @param site what it waits for: an object whose {@link WaitSite#describeWait()} (or {@code toString()})
     *             says so
     */
    void parking(Object site);

    /**
     * The current thread has woken (for any reason; it may park again). May throw an unchecked exception to
     * abandon the wait, for example when its kernel launch has been aborted.
     */
    void unparked();

    /**
     * The wait in which the current thread parked (at least once) has ended: it runs again. A thread woken only to
     * look at its clock (a deadline, a stall check) parks again without this call, so a listener can tell a wait
     * that moved on from a thread that merely woke.
     */
    default void waitEnded() {
    }

    /**
     * Parks the current thread until {@link #wake()} is called (or was called since the last park), the deadline
     * passes, or spuriously; by default {@link LockSupport#park}. Called between {@link #parking} and
     * {@link #unparked}.
     *
     * @param blocker  what it waits on, for thread dumps
     * @param limit    when to wake at the latest, on this listener's {@link #nanoTime()} clock (the wait's
     *                 deadline, or earlier for a stall check or a bounded re-poll), or {@link Deadlines#NO_DEADLINE}
     * @param deadline the wait's own deadline (a timed wait's), or {@link Deadlines#NO_DEADLINE}: a listener that
     *                 orders every wake-up itself (checked execution) needs only this one
     */
    default void park(Object blocker, long limit, long deadline) {
        if (limit == Deadlines.NO_DEADLINE) {
            LockSupport.park(blocker);
        } else {
            LockSupport.parkNanos(blocker, limit - System.nanoTime());
        }
    }

    /**
     * The clock of the current thread's deadlines: {@link System#nanoTime()} by default; checked execution's
     * virtual clock, which moves only when nothing else can run, so that timeouts replay.
     *
     * @return nanoseconds, comparable with each other only
     */
    default long nanoTime() {
        return System.nanoTime();
    }

    /**
     * The clock of the current thread's {@code Instant} deadlines: {@link Instant#now()} by default; checked
     * execution's is the wall clock at the run's start plus virtual time, so that a deadline does not depend on how
     * long the run has taken.
     *
     * @return the current instant on this listener's clock
     */
    default Instant instantNow() {
        return Instant.now();
    }

    /**
     * Checked execution's hold on the pipelines that the current thread makes, or null (the default).
     *
     * @return the interleaver, or null
     */
    default Interleaver interleaver() {
        return null;
    }

    /**
     * Wakes the thread this listener is bound to, from any thread: the signal of a waiter it pushed. By default
     * {@link LockSupport#unpark}; a wake may be spurious (the waiter re-polls its condition).
     *
     * @param thread the Java thread that pushed the waiter
     */
    default void wake(Thread thread) {
        LockSupport.unpark(thread);
    }

    /**
     * The logical thread running now, when the listener's Java thread runs several of them one after another: a
     * pipeline handle made now belongs to it rather than to the Java thread.
     *
     * @return the logical thread, or null when the Java thread is the thread (the default)
     */
    default LogicalThread logicalThread() {
        return null;
    }

    /** The listener bound to the current thread, or null. */
    static ParkListener current() {
        return CURRENT.isBound() ? CURRENT.get() : null;
    }
}
