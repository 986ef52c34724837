package dev.jpipeline.internal;

/** Outcome of waiting for a phase of a {@link PhaseBarrier}; callers turn it into an exception with context. */
public enum WaitStatus {
    /** The phase completed: its arrivals happen-before the waiter's return. */
    COMPLETE,
    /** The deadline passed (or a poll found the phase incomplete). */
    TIMED_OUT,
    /** Every party has dropped out, so the phase can never complete. */
    ABANDONED,
    /**
     * The wait has lasted its stall interval without completing (only when one was given): the caller may
     * look for a deadlock, then wait again.
     */
    STALLED,
    /** An interruptible wait saw the thread's interrupt status; the status has been cleared. */
    INTERRUPTED
}
