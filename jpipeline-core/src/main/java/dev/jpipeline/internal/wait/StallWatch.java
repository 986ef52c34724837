package dev.jpipeline.internal.wait;

import dev.jpipeline.internal.HangDetector;

/**
 * Told by {@link Waiting#await} when a wait has lasted long: the hook of the {@link HangDetector}. A wait with a
 * watch calls {@link #stalled} after a quarter of the patience and every quarter after that, and
 * {@link #resumed} once when it ends after having stalled. Waits shorter than a quarter of the patience pay
 * nothing.
 */
public interface StallWatch {

    /** How long a wait may last before it is looked at; positive. */
    long patienceNanos();

    /**
     * The current thread has waited in {@code site} for a while. May throw (an {@link IllegalStateException}
     * with a hang report) to end the wait. Runs between the wait's last poll and its park: it must not block through
     * {@code LockSupport} (a {@code java.util.concurrent} lock, a latch), whose park can take the unpark of a signal
     * meant for this wait, which would then sleep until its next stall check ({@code synchronized} is safe).
     */
    void stalled(Object site);

    /** The wait that stalled has ended (for any reason). */
    void resumed();
}
