package dev.jpipeline.internal.wait;

import java.util.Objects;

/**
 * A {@link StallWatch} that runs a check every {@code intervalNanos} of a stalled wait, instead of a hang detector's
 * report: a region's look for dead processes, a process group's look for dead members. The wait routine calls
 * {@link #stalled} every quarter of the patience, so the patience is four intervals (saturated). Whatever the check
 * throws ends the wait and propagates.
 *
 * @param intervalNanos how often the check runs while a wait lasts, positive
 * @param check         the check, run on the waiting thread
 */
public record PeriodicCheck(long intervalNanos, Runnable check) implements StallWatch {

    /** @throws IllegalArgumentException when the interval is not positive */
    public PeriodicCheck {
        Objects.requireNonNull(check, "check");
        if (intervalNanos <= 0) {
            throw new IllegalArgumentException("a periodic check's interval must be positive, got " + intervalNanos
                + " ns");
        }
    }

    @Override
    public long patienceNanos() {
        return intervalNanos > Long.MAX_VALUE / 4 ? Long.MAX_VALUE : 4 * intervalNanos;
    }

    @Override
    public void stalled(Object site) {
        check.run();
    }

    @Override
    public void resumed() {
    }
}
