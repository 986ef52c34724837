package dev.jpipeline.internal;

import dev.jpipeline.internal.process.ProcessWaiting;
import dev.jpipeline.internal.wait.Waitable;
import dev.jpipeline.internal.wait.Waiter;
import dev.jpipeline.internal.wait.Waiting;

/**
 * Where a {@link PhaseBarrier}'s word lives, how its waiters sleep and wake, and where a phase's failure is kept:
 * the barrier runs its one algorithm over this seam, whatever the memory (as Agrona writes one ring buffer over
 * {@code AtomicBuffer}, heap or mapped).
 *
 * <pre>
 * HeapBarrierWord  an element of a long[] of this process; waiters park on a Treiber stack of Waiter nodes
 *                  (Waiting, the one wait routine); failures are Throwables per phase parity
 * SharedWord       a word of a region several processes map; waiters count themselves and sleep in futex on a
 *                  wake word beside it (ProcessWaiting); failures are text records there
 *
 * Both are waited on in Waiting, the one wait routine: the word only says how a waiter is published (enqueue),
 * sleeps (park) and is unpublished (dequeue).
 * </pre>
 *
 * Contract of every implementation: get is a volatile read, cas a volatile compare-and-set, publish a store at
 * least as strong as release; a transition a waiter may wait for is followed by signal, and a waiter that pushed
 * itself (or counted itself) before polling the word cannot miss a transition made by a CAS (each implementation
 * states its Dekker argument). storeAlone's release store may miss a waiter; then signalsMayMissAPush is true and the
 * waits are bounded. A failure recorded for a phase before the arrival that completes it is seen by every waiter
 * that saw the phase complete.
 */
abstract class BarrierWord {

    /** The word (a volatile read). */
    abstract long get();

    /** A volatile compare-and-set of the word. */
    abstract boolean cas(long expect, long update);

    /** The next phase's word after a completion action ran: a store, at least release. */
    abstract void publish(long value);

    /**
     * A solo arrival's release store of {@code next} by the word's only writer, which read {@code held} (the word
     * of the phase it completes), then a signal that may miss a waiter just pushed.
     *
     * @throws IllegalStateException where the word does not hold {@code held} and others may have written it (a
     *                               shared region another process corrupted)
     */
    abstract void storeAlone(long held, long next);

    /** After a transition a waiter may be waiting for: wakes the waiters. */
    abstract void signal();

    /** Publishes a waiter that polls the word after the push ({@link Waitable#enqueue}): pushes or counts it. */
    abstract void enqueue(Waiter waiter);

    /** A wait ended with its node published ({@link Waitable#dequeue}): unlinks or uncounts it. */
    abstract void dequeue(Waiter waiter);

    /** Sleeps until a signal or {@code limit}, for a waiter of {@code barrier}'s phase {@code round} ({@link Waitable#park}). */
    abstract void park(PhaseBarrier barrier, long round, long limit);

    /** The longest one bounded park lasts ({@link Waitable#maxParkNanos}). */
    abstract long maxParkNanos();

    /** Whether an interrupt ends a park ({@link Waitable#interruptEndsPark}). */
    abstract boolean interruptEndsPark();

    /** Whether a signal may miss a waiter just pushed (solo arrivals are stores): then waits are bounded. */
    abstract boolean signalsMayMissAPush();

    /** Records {@code failure} for phase {@code round}. */
    abstract void recordFailure(int round, Throwable failure);

    /** Forgets a failure of an earlier phase of {@code round}'s parity (PhaseBarrier.clearStaleFailure). */
    abstract void clearStaleFailure(int round);

    /** The failure recorded for phase {@code round}, or null. */
    abstract Throwable failureOf(int round);

    /** Where the word is, for messages about a corrupted word: empty, or " at offset N of ...". */
    abstract String where();
}
