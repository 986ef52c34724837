package dev.jpipeline.stress;

import dev.jpipeline.internal.wait.WaitStatus;

/**
 * A wait bounded by a patience far above any correct wait's time, for the tests of lost wake-ups: a waiter that
 * misses its wake-up sleeps until the deadline instead of hanging the run, and its wait is reported as an outcome
 * of its own, even when the last poll at the deadline finds the phase complete. The deadline only bounds the
 * damage of a bug; a correct wait returns within microseconds, far below it even on a loaded machine.
 */
final class BoundedWait {

    /** How long a waiter waits for a wake-up. */
    static final long PATIENCE_MS = 1_000;
    /** {@link #PATIENCE_MS} in nanoseconds. */
    static final long PATIENCE = PATIENCE_MS * 1_000_000;

    private BoundedWait() {
    }

    /** The deadline of a wait that starts now. */
    static long deadline() {
        return System.nanoTime() + PATIENCE;
    }

    /**
     * The outcome of a wait that ended with {@code status}, read right after it: 0 when it completed before
     * {@code deadline}, 1 when it timed out or completed only at the deadline (a lost wake-up), 2 + the status's
     * ordinal for any other end (abandoned, interrupted).
     */
    static int outcome(WaitStatus status, long deadline) {
        boolean late = System.nanoTime() - deadline >= 0;
        if (status == WaitStatus.TIMED_OUT || (status == WaitStatus.COMPLETE && late)) {
            return 1;
        }
        return status == WaitStatus.COMPLETE ? 0 : 2 + status.ordinal();
    }
}
