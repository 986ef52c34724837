package dev.jpipeline.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * A split-phase barrier: the stage barrier of a pipeline ({@code produced} / {@code consumed}) and the engine
 * behind {@code dev.jpipeline.Barrier}.
 *
 * <pre>
 * Algorithm
 *
 * The whole barrier is one 64-bit word, updated only by CAS, so every transition is atomic:
 *
 *     63            40 39            20 19             0
 *    +----------------+----------------+----------------+
 *    | phase (24 bits)| expected (20)  | arrived (20)   |
 *    +----------------+----------------+----------------+
 *
 *  - phase: the number of completed phases, modulo 2^24. A waiter for round k waits while phase == k.
 *    The pipeline never lets a barrier run more than one phase ahead of any waiter (libcu++ relies on the same
 *    invariant with a single parity bit), so 24 bits leave ample room to detect protocol violations.
 *  - expected: arrivals needed per phase; at most 2^20 - 1, the limit CUDA reports for a block-scope barrier.
 *    Dropping a party lowers it for the current or the next phase (see dropFromRound).
 *  - arrived: arrivals in the current phase. The arrival that makes arrived == expected completes the phase:
 *    the same CAS advances phase and resets arrived to 0, so no other thread can observe a half-reset word.
 *
 * With a completion action the last arriver first CASes arrived up to expected (the "completing" state, in
 * which any further arrival is an over-arrival), runs the action, then publishes the next phase.
 *
 * Waiting follows the caller's strategy (WaitStrategy: how many spins, how many yields) and then parks; the
 * default is adaptive: a platform thread spins (Thread.onSpinWait), then yields, then parks; a virtual thread
 * parks at once so that it never holds its carrier. A ParkListener bound to the thread is told before each park
 * and after each wake (the SIMT runtime's hang detection). Parked waiters sit on a Treiber stack; the thread that
 * completes a phase (or drops the last party) detaches the whole stack and unparks it. A waiter pushes its node
 * and re-reads the state before it parks; the completer CASes the state and then reads the stack. Both are
 * volatile accesses, so at least one of them sees the other (the Dekker pattern): no wake-up is lost.
 *
 * Memory consistency: an arrival is a volatile CAS (release), a wait ends with a volatile read (acquire) of
 * the completed state, so actions before any arrival of a phase happen-before actions after a wait that
 * observes the phase completed.
 * </pre>
 */
public final class PhaseBarrier extends PhaseBarrierPadAfter {

    /** Largest number of parties (2^20 - 1): the same bound CUDA's block-scope {@code barrier::max()} reports. */
    public static final int MAX_PARTIES = (1 << 20) - 1;
    /** Phases are counted modulo 2^24. */
    public static final int PHASE_MASK = (1 << 24) - 1;

    private static final int EXPECTED_SHIFT = 20;
    private static final int PHASE_SHIFT = 40;
    private static final long COUNT_MASK = MAX_PARTIES;

    /** The default waiting: spin, then yield, then park (the values of WaitStrategy.ADAPTIVE). */
    private static final long DEFAULT_SPINS = 1 << 9;
    private static final long DEFAULT_YIELDS = 1 << 6;

    private final Runnable completion;

    /**
     * @param expected   arrivals per phase, 0 to {@link #MAX_PARTIES} (0 makes every wait report abandonment)
     * @param completion run by the last arriver before the phase completes, or {@code null}
     */
    public PhaseBarrier(int expected, Runnable completion) {
        if (expected < 0 || expected > MAX_PARTIES) {
            throw new IllegalArgumentException(
                "barrier expected count must be in 0.." + MAX_PARTIES + ", got " + expected);
        }
        this.completion = completion;
        STATE.setRelease(this, (long) expected << EXPECTED_SHIFT);
    }

    /** A stage barrier: {@code expected} arrivals per phase and no completion action. */
    public PhaseBarrier(int expected) {
        this(expected, null);
    }

    // ---------------------------------------------------------------------------------------------------------
    // State decoding

    static int phaseOf(long s) {
        return (int) (s >>> PHASE_SHIFT);
    }

    static int expectedOf(long s) {
        return (int) ((s >>> EXPECTED_SHIFT) & COUNT_MASK);
    }

    static int arrivedOf(long s) {
        return (int) (s & COUNT_MASK);
    }

    private static long pack(int phase, int expected, int arrived) {
        return ((long) (phase & PHASE_MASK) << PHASE_SHIFT) | ((long) expected << EXPECTED_SHIFT) | arrived;
    }

    /** The current phase (completed phases modulo 2^24). */
    public int phase() {
        return phaseOf(lvState());
    }

    /** Arrivals each phase currently needs. */
    public int expected() {
        return expectedOf(lvState());
    }

    /** Arrivals already counted in the current phase. */
    public int arrived() {
        return arrivedOf(lvState());
    }

    /** Whether phase {@code round} (counted from 0, taken modulo 2^24) has completed. */
    public boolean isComplete(int round) {
        return phaseOf(lvState()) != (round & PHASE_MASK);
    }

    // ---------------------------------------------------------------------------------------------------------
    // Arrivals

    /**
     * Counts {@code count} arrivals in the current phase, completing it when they are the last ones.
     *
     * @return the phase arrived at (the token a later wait uses)
     * @throws IllegalStateException when the phase would get more arrivals than it expects
     */
    public int arrive(int count) {
        for (;;) {
            long s = lvState();
            int expected = expectedOf(s);
            int arrived = arrivedOf(s) + count;
            if (arrived > expected || count < 1) {
                throw overArrival(s, count);
            }
            int phase = phaseOf(s);
            if (arrived < expected) {
                if (casState(s, s + count)) {
                    return phase;
                }
            } else if (completion == null) {
                if (casState(s, pack(phase + 1, expected, 0))) {
                    signalAll();
                    return phase;
                }
            } else if (casState(s, s + count)) {
                runCompletionAndAdvance(phase, expected);
                return phase;
            }
        }
    }

    /**
     * Removes one party, starting with phase {@code round}: the party's next arrival would have been for that
     * phase, and it will not come. If the barrier is still in the phase before it (the party already arrived
     * there), that arrival is withdrawn together with the party, so the current phase still needs exactly the
     * arrivals it needed and every later phase needs one fewer. If the barrier is at {@code round}, the phase
     * completes when the arrivals it already has are now enough; when no party is left it never completes
     * and its waiters see {@link WaitStatus#ABANDONED}. (This is a pipeline's {@code quit}, not an arrival.)
     *
     * @throws IllegalStateException when the barrier is neither at {@code round} nor one phase before it
     */
    public void dropFromRound(int round) {
        for (;;) {
            long s = lvState();
            int phase = phaseOf(s);
            int expected = expectedOf(s);
            int arrived = arrivedOf(s);
            int lag = (round - phase) & PHASE_MASK;
            if (expected == 0 || (lag != 0 && lag != 1) || (lag == 1 && arrived == 0)) {
                throw new IllegalStateException("cannot drop a party from phase " + (round & PHASE_MASK)
                    + " of a barrier at phase " + phase + " (expected " + expected + ", arrived " + arrived + ")");
            }
            boolean done = lag == 1
                ? casState(s, pack(phase, expected - 1, arrived - 1))
                : leave(s, arrived > 0 && arrived == expected - 1);
            if (done) {
                if (expected == 1) {
                    signalAll();   // nobody is left to complete this phase: waiters must find out
                }
                return;
            }
        }
    }

    /**
     * One more party for the current and every later phase: the current phase now also waits for an arrival
     * that has not happened yet. Paired with a later {@link #arriveAndDrop()} it makes the current phase wait
     * for one extra event and leaves later phases as they were (how {@code cp.async.mbarrier.arrive} ties
     * copies to a barrier: +1 pending now, one arrival when the copies land).
     *
     * @throws IllegalStateException when the barrier already has {@link #MAX_PARTIES} parties
     */
    public void expectOneMore() {
        for (;;) {
            long s = lvState();
            int expected = expectedOf(s);
            int arrived = arrivedOf(s);
            if (expected >= MAX_PARTIES) {
                throw new IllegalStateException("barrier cannot expect more than " + MAX_PARTIES + " arrivals");
            }
            if (expected > 0 && arrived == expected) {
                Thread.onSpinWait();        // a completion action is running: the phase is about to advance
                continue;
            }
            if (casState(s, pack(phaseOf(s), expected + 1, arrived))) {
                return;
            }
        }
    }

    /**
     * Arrive-and-drop ({@code cuda::barrier::arrive_and_drop}): the caller arrives at the current phase and
     * is not expected in any later phase.
     *
     * @throws IllegalStateException when the barrier has no party left
     */
    public void arriveAndDrop() {
        for (;;) {
            long s = lvState();
            int expected = expectedOf(s);
            if (expected == 0 || arrivedOf(s) >= expected) {
                throw overArrival(s, 1);
            }
            if (leave(s, arrivedOf(s) + 1 == expected)) {
                return;
            }
        }
    }

    /** One CAS attempt that lowers the expected count, completing the phase when {@code completes}. */
    private boolean leave(long s, boolean completes) {
        int phase = phaseOf(s);
        int expected = expectedOf(s) - 1;
        if (!completes) {
            return casState(s, pack(phase, expected, arrivedOf(s)));
        }
        if (completion == null) {
            if (casState(s, pack(phase + 1, expected, 0))) {
                signalAll();
                return true;
            }
            return false;
        }
        // completing state: full with the old count, so that neither an arrival nor a waiter misreads it
        if (casState(s, pack(phase, expected + 1, expected + 1))) {
            runCompletionAndAdvance(phase, expected);
            return true;
        }
        return false;
    }

    /**
     * Runs the completion action while the word is in the completing state (arrived == expected, so every
     * further arrival is refused as an over-arrival), then publishes the next phase. If the action throws,
     * the phase still completes, so that no waiter hangs, and the exception reaches the last arriver.
     */
    private void runCompletionAndAdvance(int phase, int nextExpected) {
        try {
            completion.run();
        } finally {
            STATE.setVolatile(this, pack(phase + 1, nextExpected, 0));
            signalAll();
        }
    }

    private IllegalStateException overArrival(long s, int count) {
        return new IllegalStateException("barrier phase " + phaseOf(s) + " expects " + expectedOf(s)
            + " arrivals and already has " + arrivedOf(s) + "; arriving " + count + " more is not allowed");
    }

    // ---------------------------------------------------------------------------------------------------------
    // Waiting

    /** Deadline meaning "no deadline". */
    public static final long NO_DEADLINE = Long.MAX_VALUE;
    /** Deadline meaning "look once, do not wait". */
    public static final long POLL_ONCE = Long.MIN_VALUE;

    /**
     * Waits until phase {@code round} completes.
     *
     * @param deadline      a {@link System#nanoTime()} deadline, {@link #NO_DEADLINE} or {@link #POLL_ONCE}
     * @param interruptible whether an interrupt ends the wait ({@link WaitStatus#INTERRUPTED}, status cleared);
     *                      otherwise an interrupt is remembered and re-asserted before returning
     */
    public WaitStatus await(int round, long deadline, boolean interruptible) {
        return await(round, deadline, interruptible, 0, DEFAULT_SPINS, DEFAULT_YIELDS);
    }

    /**
     * Like {@link #await(int, long, boolean)}, with the waiting spelled out: a platform thread first spins
     * {@code spins} times ({@link Thread#onSpinWait()}), then yields {@code yields} times, then parks until the
     * completing arrival wakes it; a virtual thread parks at once. A wait that has lasted {@code stallNanos}
     * (when positive) without completing returns {@link WaitStatus#STALLED}, so that the caller can look for a
     * deadlock and call again.
     */
    public WaitStatus await(int round, long deadline, boolean interruptible, long stallNanos, long spins,
                            long yields) {
        return await(round, deadline, interruptible, stallNanos, spins, yields, this);
    }

    /**
     * The full form: {@code site} is what a {@link ParkListener} is told the thread waits in when it parks.
     */
    public WaitStatus await(int round, long deadline, boolean interruptible, long stallNanos, long spins,
                            long yields, Object site) {
        WaitStatus status = check(round);
        if (status != null) {
            return status;
        }
        if (deadline == POLL_ONCE) {
            return WaitStatus.TIMED_OUT;
        }
        return awaitSlow(round, deadline, interruptible, stallNanos, spins, yields, site);
    }

    /** The barrier word, for detecting that nothing has changed between two looks. */
    public long snapshot() {
        return lvState();
    }

    private WaitStatus check(int round) {
        long s = lvState();
        if (phaseOf(s) != (round & PHASE_MASK)) {
            return WaitStatus.COMPLETE;
        }
        return expectedOf(s) == 0 ? WaitStatus.ABANDONED : null;
    }

    private WaitStatus awaitSlow(int round, long deadline, boolean interruptible, long stallNanos, long spins,
                                 long yields, Object site) {
        Thread me = Thread.currentThread();
        long stallAt = stallNanos > 0 ? System.nanoTime() + stallNanos : NO_DEADLINE;
        boolean stallFirst = stallAt != NO_DEADLINE && (deadline == NO_DEADLINE || stallAt - deadline < 0);
        long limit = stallFirst ? stallAt : deadline;
        WaitStatus status = null;
        if (!me.isVirtual()) {
            for (long i = 0; i < spins && status == null; i++) {
                Thread.onSpinWait();
                status = check(round);
                if (status == null && (i & 0xFF) == 0xFF) {
                    status = expired(limit, interruptible);
                }
            }
            for (long i = 0; i < yields && status == null; i++) {
                Thread.yield();
                status = check(round);
                if (status == null) {
                    status = expired(limit, interruptible);
                }
            }
        }
        if (status == null) {
            status = park(me, round, limit, interruptible, site);
        }
        return stallFirst && status == WaitStatus.TIMED_OUT ? WaitStatus.STALLED : status;
    }

    /** TIMED_OUT when {@code limit} has passed, INTERRUPTED when an interruptible wait is interrupted. */
    private static WaitStatus expired(long limit, boolean interruptible) {
        if (limit != NO_DEADLINE && System.nanoTime() - limit >= 0) {
            return WaitStatus.TIMED_OUT;
        }
        return interruptible && Thread.interrupted() ? WaitStatus.INTERRUPTED : null;
    }

    private WaitStatus park(Thread me, int round, long deadline, boolean interruptible, Object site) {
        boolean interrupted = false;
        ParkListener listener = ParkListener.current();
        Waiter node = null;
        try {
            for (;;) {
                node = new Waiter(me);
                push(node);
                WaitStatus status = check(round);
                if (status == null) {
                    if (listener != null) {
                        listener.parking(site);
                    }
                    if (deadline == NO_DEADLINE) {
                        LockSupport.park(this);
                    } else {
                        long remaining = deadline - System.nanoTime();
                        if (remaining <= 0) {
                            status = WaitStatus.TIMED_OUT;
                        } else {
                            LockSupport.parkNanos(this, remaining);
                        }
                    }
                    if (listener != null) {
                        listener.unparked();
                    }
                    if (status == null && Thread.interrupted()) {
                        if (interruptible) {
                            status = WaitStatus.INTERRUPTED;
                        } else {
                            interrupted = true;
                        }
                    }
                }
                if (status == null) {
                    status = check(round);
                }
                if (status != null) {
                    node.thread = null;
                    return status;
                }
                // Woken without completion (spurious or a withdrawn party): the node may be detached already.
                node.thread = null;
            }
        } finally {
            if (node != null) {
                node.thread = null;         // also when a listener abandons the wait
            }
            if (interrupted) {
                me.interrupt();
            }
        }
    }

    private void push(Waiter node) {
        for (;;) {
            Waiter head = lvWaiters();
            while (head != null && head.thread == null) {
                // Unlink given-up nodes at the top so that a polling loop cannot grow the stack without bound.
                Waiter next = head.next;
                head = casWaiters(head, next) ? next : lvWaiters();
            }
            node.next = head;
            if (casWaiters(head, node)) {
                return;
            }
        }
    }

    private void signalAll() {
        if (lvWaiters() == null) {
            return;
        }
        Waiter w = (Waiter) WAITERS.getAndSet(this, (Waiter) null);
        for (; w != null; w = w.next) {
            Thread t = w.thread;
            if (t != null) {
                LockSupport.unpark(t);
            }
        }
    }

    @Override
    public String toString() {
        long s = lvState();
        return "phase " + phaseOf(s) + ", arrived " + arrivedOf(s) + "/" + expectedOf(s);
    }

    // ---------------------------------------------------------------------------------------------------------
    // VarHandle mechanics

    private static final VarHandle STATE;
    private static final VarHandle WAITERS;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            STATE = lookup.findVarHandle(PhaseBarrierFields.class, "state", long.class);
            WAITERS = lookup.findVarHandle(PhaseBarrierFields.class, "waiters", Waiter.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private long lvState() {
        return (long) STATE.getVolatile(this);
    }

    private boolean casState(long expect, long update) {
        return STATE.compareAndSet(this, expect, update);
    }

    private Waiter lvWaiters() {
        return (Waiter) WAITERS.getVolatile(this);
    }

    private boolean casWaiters(Waiter expect, Waiter update) {
        return WAITERS.compareAndSet(this, expect, update);
    }
}

/**
 * 128 bytes of padding before the hot fields, so that no other object's writes share their cache line. The int
 * fills the gap after a 12-byte object header, where HotSpot would otherwise place a subclass field.
 */
abstract class PhaseBarrierPadBefore {
    int gap;
    long p00, p01, p02, p03, p04, p05, p06, p07;
    long p08, p09, p10, p11, p12, p13, p14, p15;
}

/** The hot fields: written by arrivals (state) and by parking waiters (waiters). */
abstract class PhaseBarrierFields extends PhaseBarrierPadBefore {
    /** The packed barrier word: accessed through {@code STATE} with volatile semantics only. */
    volatile long state;
    /** Treiber stack of parked waiters: accessed through {@code WAITERS}. */
    volatile Waiter waiters;
}

/** 128 bytes of padding after the hot fields. */
abstract class PhaseBarrierPadAfter extends PhaseBarrierFields {
    long q00, q01, q02, q03, q04, q05, q06, q07;
    long q08, q09, q10, q11, q12, q13, q14, q15;
}
