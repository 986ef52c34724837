package dev.jpipeline.internal;

/**
 * Told when the current thread parks in a jpipeline wait and when it wakes: the hook through which an execution
 * model built on top of the core (the SIMT runtime's hang detection) sees which of its threads are blocked and
 * where. Bound per thread with {@link #CURRENT}; unbound threads pay one look-up per park, nothing else.
 */
public interface ParkListener {

    /** The listener of the current thread, if any. */
    ScopedValue<ParkListener> CURRENT = ScopedValue.newInstance();

    /**
     * The current thread is about to park.
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

    /** The listener bound to the current thread, or null. */
    static ParkListener current() {
        return CURRENT.isBound() ? CURRENT.get() : null;
    }
}
