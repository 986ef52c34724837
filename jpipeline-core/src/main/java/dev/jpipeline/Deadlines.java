package dev.jpipeline;

import dev.jpipeline.internal.PhaseBarrier;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * Turns Java time limits into {@link System#nanoTime()} deadlines for {@link PhaseBarrier#await}. Java
 * convention, not CUDA's: a zero or negative timeout, or a past instant, polls once (CUDA's zero duration
 * waits forever).
 */
final class Deadlines {

    private Deadlines() {
    }

    static long fromTimeout(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isNegative() || timeout.isZero()) {
            return PhaseBarrier.POLL_ONCE;
        }
        long nanos;
        try {
            nanos = timeout.toNanos();
        } catch (ArithmeticException tooLong) {
            return PhaseBarrier.NO_DEADLINE;
        }
        long deadline = System.nanoTime() + nanos;
        // nanoTime may be near any value; an overflowed sum or a sentinel collision means "practically never".
        return deadline == PhaseBarrier.POLL_ONCE || deadline - System.nanoTime() < 0
            ? PhaseBarrier.NO_DEADLINE : deadline;
    }

    static long fromInstant(Instant deadline) {
        Objects.requireNonNull(deadline, "deadline");
        Instant now = Instant.now();
        return deadline.isAfter(now) ? fromTimeout(Duration.between(now, deadline)) : PhaseBarrier.POLL_ONCE;
    }
}
