package dev.jpipeline.internal.wait;

/** Outcome of a wait in {@link Waiting#await}; callers turn it into a result or an exception with context. */
public enum WaitStatus {
    /** The condition is met (a phase completed): the arrivals that met it happen-before the waiter's return. */
    COMPLETE,
    /** The deadline passed (or a poll found the condition unmet). */
    TIMED_OUT,
    /** Every party has dropped out, so the phase can never complete. */
    ABANDONED,
    /** An interruptible wait saw the thread's interrupt status; the status has been cleared. */
    INTERRUPTED
}
