package dev.jpipeline.internal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

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
 *   look     : busyByLook(), where a decision is taken once per copy: besides the sightings, the calling thread
 *              reads its own run-queue time (Linux schedstat) at most every 10 ms; queued for 10% of the time
 *              since its last look marks the machine busy. A thread that never spins (it helps, or copies itself)
 *              still sees the load this way.
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
     * 50 ms let a 2-core machine with one CPU hog look every pass of a 256 MiB prefetch (docs/performance.md §19).
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
    static boolean sawIdling(long idleNanos, long now) {
        if (idleNanos < BUSY_NANOS) {
            return false;
        }
        busyUntil = now + HOLD_NANOS;
        return true;
    }

    /** A thread looks at its own run-queue wait at most this often: every 10 ms. */
    static final long LOOK_EVERY_NANOS = 10_000_000;
    /** A thread that waited on the run queue for this share of the time since its last look saw the machine busy. */
    static final double QUEUED_SHARE = 0.10;
    /** This thread's scheduler statistics (Linux): time on a CPU, time runnable but queued, slices (nanoseconds). */
    private static final Path SCHEDSTAT = Path.of("/proc/thread-self/schedstat");
    /** Whether {@link #SCHEDSTAT} can be read here; cleared at the first failure. */
    private static volatile boolean schedstat = Files.isReadable(SCHEDSTAT);
    /** Per thread: {when it last looked, its queued time then}; {0, 0} before its first look. */
    private static final ThreadLocal<long[]> LAST_LOOK = ThreadLocal.withInitial(() -> new long[2]);

    /**
     * {@link #busy()}, or else, at most every {@link #LOOK_EVERY_NANOS} per thread, the calling thread's own look at
     * how long it sat runnable in the run queue since its last look: {@link #QUEUED_SHARE} of that time or more
     * means more runnable threads than cores, and marks the machine busy. For decisions taken once per copy (not on
     * the hand-off's fast path): a look reads {@code /proc/thread-self/schedstat} (a few microseconds).
     */
    public static boolean busyByLook() {
        if (busy() || !schedstat) {
            return busy();
        }
        long now = System.nanoTime();
        long[] last = LAST_LOOK.get();
        if (last[0] != 0 && now - last[0] < LOOK_EVERY_NANOS) {
            return false;
        }
        long queued;
        try {
            String[] fields = Files.readString(SCHEDSTAT).trim().split(" ");
            queued = Long.parseLong(fields[1]);
        } catch (IOException | RuntimeException unreadable) {
            schedstat = false;              // no such statistics here: the waits' sightings alone decide
            return false;
        }
        boolean seen = lookedBusy(last, now, queued);
        if (seen) {
            busyUntil = now + HOLD_NANOS;
        }
        return seen;
    }

    /**
     * One look: whether {@code queued} (the thread's run-queue time now) grew by {@link #QUEUED_SHARE} of the time
     * since {@code last} ({when, queued} of the previous look, updated here); never on a first look.
     */
    static boolean lookedBusy(long[] last, long now, long queued) {
        boolean seen = last[0] != 0 && queued - last[1] >= QUEUED_SHARE * (now - last[0]);
        last[0] = now;
        last[1] = queued;
        return seen;
    }

    /** Forgets every sighting (tests). */
    static void reset() {
        busyUntil = 0;
    }
}
