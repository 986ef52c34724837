package dev.jpipeline.internal.wait;

/**
 * Whether the machine was lately seen oversubscribed: more runnable threads than cores, so that a waiter that spins
 * takes a core from the thread it waits for (on a busy 2-core machine, a copy worker or a producer waiting for a time
 * slice). Waits whose strategy backs off ({@code WaitStrategy.backsOffWhenBusy()}) then park at once instead of
 * spinning.
 *
 * <pre>
 *   seen     : a spinning or yielding waiter found that far more time passed between two of its clock reads than
 *              its idles take on a free core (BUSY_NANOS for at most 256 spins or yields): it was descheduled, or
 *              its yields ran other threads. The machine then counts as busy for HOLD_NANOS.
 *   busy()   : one volatile read while nothing was seen (the common case on an idle machine), then the clock.
 * </pre>
 *
 * Racy by design: the mark is a hint written without ordering, and a stale read costs one spin phase or one park,
 * never correctness.
 */
public final class Oversubscription {

    /**
     * Idling between two clock reads (at most 256 spins of ~40 ns or yields of ~1 us on a free core) that lasts this
     * long means other threads ran on this core meanwhile: at least one time slice of someone else.
     */
    static final long BUSY_NANOS = 1_000_000;
    /**
     * How long one sighting counts: half a second. Each new look costs a lost time slice to the waiter that looks
     * (it spins until it is descheduled), so looks must be rare beside the work; the load's end is noticed within it.
     * With 50 ms, a 256 MiB prefetch pass (about 50 ms on 2 CPUs) would pay for a new look on every pass.
     */
    static final long HOLD_NANOS = 500_000_000;

    /** {@link System#nanoTime()} until which the machine counts as busy; 0 when it never was. */
    private static volatile long busyUntil;

    private Oversubscription() {
    }

    /** Whether a waiter lately saw the machine oversubscribed. */
    public static boolean busy() {
        long until = busyUntil;
        return until != 0 && System.nanoTime() - until < 0;
    }

    /** A waiter saw {@code idleNanos} pass over its idles between two clock reads, the later at {@code now}. */
    public static boolean sawIdling(long idleNanos, long now) {
        if (idleNanos < BUSY_NANOS) {
            return false;
        }
        busyUntil = now + HOLD_NANOS;
        return true;
    }

    /** Forgets every sighting (tests). */
    public static void reset() {
        busyUntil = 0;
    }
}
