package dev.jpipeline.internal;

import dev.jpipeline.internal.wait.Deadlines;
import dev.jpipeline.internal.wait.Waiter;
import java.util.concurrent.locks.LockSupport;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A {@link PhaseBarrier}'s word in this process: an element of a {@code long[]} (an array of its own, padded on both
 * sides, or a pipeline's word array, where the stages' words sit side by side: see StageRing), with a Treiber stack
 * of parked waiters and the failures of the last phase of each parity.
 *
 * <pre>
 * No lost wake-up: a parking waiter pushes its node (volatile CAS on waiters) and then polls the word; a
 * transition CASes the word and then reads waiters (signal). Both pairs are volatile accesses, totally ordered,
 * so either the waiter's poll sees the transition or the signal sees the node. The exception is storeAlone, a
 * release store: its read of the stack may pass the store, so a waiter of a barrier with solo arrivals parks in
 * bounded slices (signalsMayMissAPush).
 *
 * Failures: one record per phase parity, written before the arrival that completes the phase (volatile), read by
 * a waiter after its wait saw the phase complete; the phase after cannot complete before the reader's own part in
 * it, so the record it reads is its phase's.
 * </pre>
 */
final class HeapBarrierWord extends HeapWordPadAfter {

    private final long[] words;
    private final int index;
    /** The longest one bounded park lasts (solo arrivals' waits): a long wait then wakes once a second. */
    private static final long MAX_PARK_NANOS = 1_000_000_000L;
    /** Whether arrivals may be storeAlone stores: then its waiters' parks are bounded. */
    private final boolean soloArrivals;
    /** The latest failure of an even / odd phase (see the class comment). */
    private volatile PhaseFailure failureEven;
    private volatile PhaseFailure failureOdd;

    HeapBarrierWord(long[] words, int index, long initial, boolean soloArrivals) {
        this.words = words;
        this.index = index;
        this.soloArrivals = soloArrivals;
        WORD.setRelease(words, index, initial);
    }

    long[] words() {
        return words;
    }

    int index() {
        return index;
    }

    @Override
    long get() {
        return (long) WORD.getVolatile(words, index);
    }

    @Override
    boolean cas(long expect, long update) {
        return WORD.compareAndSet(words, index, expect, update);
    }

    @Override
    void publish(long value) {
        WORD.setVolatile(words, index, value);
    }

    @Override
    void storeAlone(long held, long next) {
        assert get() == held : "a solo arrival expected 0x" + Long.toHexString(held) + " and found 0x"
            + Long.toHexString(get());
        WORD.setRelease(words, index, next);
        if (WAITERS.getAcquire(this) != null) {
            Waiter.signalAll(WAITERS, this);
        }
    }

    @Override
    void signal() {
        if (WAITERS.getVolatile(this) != null) {
            Waiter.signalAll(WAITERS, this);
        }
    }


    @Override
    void enqueue(Waiter waiter) {
        Waiter.push(WAITERS, this, waiter);
    }

    @Override
    void dequeue(Waiter waiter) {
        Waiter.sweep(WAITERS, this);
    }

    /** A LockSupport park, with the barrier as the blocker: a signal's unpark ends it. */
    @Override
    void park(PhaseBarrier barrier, long round, long limit) {
        if (limit == Deadlines.NO_DEADLINE) {
            LockSupport.park(barrier);
        } else {
            LockSupport.parkNanos(barrier, limit - System.nanoTime());
        }
    }

    @Override
    long maxParkNanos() {
        return MAX_PARK_NANOS;
    }

    @Override
    boolean interruptEndsPark() {
        return true;
    }

    @Override
    boolean signalsMayMissAPush() {
        return soloArrivals;
    }

    @Override
    void recordFailure(int round, Throwable failure) {
        PhaseFailure record = new PhaseFailure(round & PhaseBarrier.PHASE_MASK, failure);
        if ((round & 1) == 0) {
            failureEven = record;
        } else {
            failureOdd = record;
        }
    }

    @Override
    void clearStaleFailure(int round) {
        VarHandle slot = (round & 1) == 0 ? FAILURE_EVEN : FAILURE_ODD;
        PhaseFailure f = (PhaseFailure) slot.getVolatile(this);
        if (f != null && f.phase() != (round & PhaseBarrier.PHASE_MASK)) {
            slot.compareAndSet(this, f, null);      // a failure of round recorded meanwhile stays
        }
    }

    @Override
    Throwable failureOf(int round) {
        PhaseFailure f = (round & 1) == 0 ? failureEven : failureOdd;
        return f != null && f.phase() == (round & PhaseBarrier.PHASE_MASK) ? f.cause() : null;
    }

    @Override
    String where() {
        return "";
    }

    /** A failure recorded for one phase. */
    private record PhaseFailure(int phase, Throwable cause) {
    }

    private static final VarHandle WORD = MethodHandles.arrayElementVarHandle(long[].class);
    private static final VarHandle WAITERS;
    private static final VarHandle FAILURE_EVEN;
    private static final VarHandle FAILURE_ODD;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            WAITERS = lookup.findVarHandle(HeapWordWaiters.class, "waiters", Waiter.class);
            FAILURE_EVEN = lookup.findVarHandle(HeapBarrierWord.class, "failureEven", PhaseFailure.class);
            FAILURE_ODD = lookup.findVarHandle(HeapBarrierWord.class, "failureOdd", PhaseFailure.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}

/**
 * 128 bytes of padding before the waiters' stack, which every arrival reads: parking waiters write it, and must not
 * share its line with another barrier's stack or any other object's fields. The int fills the gap after a 12-byte
 * object header, where HotSpot would otherwise place a subclass field.
 */
abstract class HeapWordPadBefore extends BarrierWord {
    int gap;
    long p00, p01, p02, p03, p04, p05, p06, p07;
    long p08, p09, p10, p11, p12, p13, p14, p15;
}

/** The waiters' stack of a {@link HeapBarrierWord}. */
abstract class HeapWordWaiters extends HeapWordPadBefore {
    /** Treiber stack of parked waiters: accessed through {@code WAITERS}; written only by parking waiters. */
    volatile Waiter waiters;
}

/** 128 bytes of padding after the waiters' stack. */
abstract class HeapWordPadAfter extends HeapWordWaiters {
    long q00, q01, q02, q03, q04, q05, q06, q07;
    long q08, q09, q10, q11, q12, q13, q14, q15;
}
