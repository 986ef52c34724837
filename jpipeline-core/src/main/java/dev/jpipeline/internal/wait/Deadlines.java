package dev.jpipeline.internal.wait;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * Turns Java time limits into {@link System#nanoTime()} deadlines for {@link Waiting#await}. Java convention, not
 * CUDA's: a zero or negative timeout, or a past instant, polls once (CUDA's zero duration waits forever). A
 * positive timeout, however short, is a real deadline: it has usually passed by the time the wait looks at it,
 * and then the wait returns {@link WaitStatus#TIMED_OUT} after its first unsuccessful poll.
 */
public final class Deadlines {

    /** Deadline meaning "no deadline". */
    public static final long NO_DEADLINE = Long.MAX_VALUE;
    /** Deadline meaning "look once, do not wait". */
    public static final long POLL_ONCE = Long.MIN_VALUE;

    private Deadlines() {
    }

    /** The deadline {@code timeout} from now. */
    public static long fromTimeout(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isNegative() || timeout.isZero()) {
            return POLL_ONCE;
        }
        long nanos = saturatedNanos(timeout);
        ParkListener listener = ParkListener.current();
        long now = listener == null ? System.nanoTime() : listener.nanoTime();
        long deadline = now + nanos;
        // A sum that overflowed (a timeout of centuries) or that hits a sentinel means "practically never".
        if (deadline - now < 0 || deadline == POLL_ONCE || deadline == NO_DEADLINE) {
            return NO_DEADLINE;
        }
        return deadline;
    }

    /** The deadline at {@code deadline}, measured once against the wall clock now (as CUDA does). */
    public static long fromInstant(Instant deadline) {
        Objects.requireNonNull(deadline, "deadline");
        ParkListener listener = ParkListener.current();
        Instant now = listener == null ? Instant.now() : listener.instantNow();
        if (!deadline.isAfter(now)) {
            return POLL_ONCE;
        }
        Duration left;
        try {
            left = Duration.between(now, deadline);
        } catch (ArithmeticException beyondDuration) {
            return NO_DEADLINE;
        }
        return fromTimeout(left);
    }

    /** {@code d} in nanoseconds, {@link Long#MAX_VALUE} when it does not fit. */
    public static long saturatedNanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException tooLong) {
            return d.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
    }

    /** Whether {@code deadline} (not a sentinel) has passed at {@code now}. */
    public static boolean passed(long deadline, long now) {
        return deadline != NO_DEADLINE && now - deadline >= 0;
    }

    /**
     * Asks {@code pending} every millisecond, for up to {@code nanos}, until it answers null: a wait for counts that
     * other threads or processes bring down and that wake no waiter (a region's copies still landing), which only
     * region makes and closes do, never the hot path.
     *
     * @return null once {@code pending} answered null; else its last answer (what is still pending)
     */
    public static String pollUntilNone(long nanos, Supplier<String> pending) {
        long deadline = System.nanoTime() + nanos;
        for (String left; ; LockSupport.parkNanos(1_000_000)) {
            left = pending.get();
            if (left == null || System.nanoTime() - deadline >= 0) {
                return left;
            }
        }
    }
}
