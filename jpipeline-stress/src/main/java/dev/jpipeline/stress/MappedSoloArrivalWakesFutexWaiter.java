package dev.jpipeline.stress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import dev.jpipeline.internal.process.Futex;
import dev.jpipeline.internal.PhaseBarrier;
import java.util.concurrent.ThreadLocalRandom;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * A solo arrival ({@code arriveAlone}: a release store of the next phase's word, then ProcessWaiting's
 * wakeIfCounted, which bumps the cell's signal count and calls FUTEX_WAKE when it finds a waiter counted) on a
 * barrier in a mapped file ({@link MappedCells}) ends the wait of a waiter that sleeps in futex on that signal
 * count, however the two interleave. The arrival first waits until the waiter has counted itself among the cell's
 * futex waiters (ProcessWaiting's W1, after its spin and yield polls: without that wait it would nearly always find
 * the waiter still spinning), then spins 0 to {@value #MAX_DELAY_SPINS} times at random, so that its store and
 * wake fall anywhere around the waiter's read of the signal count (W2), its poll of the word and its FUTEX_WAIT
 * (W3), or after it fell asleep.
 *
 * <p>A solo arrival's load of the count may pass its store, so a waiter counted after that load may sleep through
 * it; a shared word's futex sleeps are therefore bounded (100 us first), and such a miss shows as a short delay,
 * not here. What this test forbids is a wait that never ends: TIMED_OUT after {@value BoundedWait#PATIENCE_MS} ms
 * ({@link BoundedWait}), which a broken wake and a broken bound together produce. That the wake itself reaches a
 * sleeper whose waits are not bounded is ProcessWaitingTest's. Results: the wait's outcome (0 ended in time, 1
 * TIMED_OUT, 2 + the status's ordinal otherwise), and whether the arrival found the waiter counted for futex (1),
 * or went on without it (0: futex is unavailable, waits sleep in parks, and the test does not test what it says).
 */
@JCStressTest
@Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "the waiter, counted for futex, saw the arrival, was woken, or ended its bounded sleep")
@Outcome(id = "0, 0", expect = ACCEPTABLE_INTERESTING,
    desc = "futex unavailable or the waiter never counted for it: the futex path went untested")
@Outcome(id = "1, .*", expect = FORBIDDEN, desc = "TIMED_OUT: the waiter slept through the arrival until its deadline")
@Outcome(expect = FORBIDDEN, desc = "the wait ended otherwise (abandoned, interrupted)")
@State
public class MappedSoloArrivalWakesFutexWaiter {

    /** The arrival spins at most this many times after it found the waiter counted. */
    static final int MAX_DELAY_SPINS = 64;
    private static final boolean FUTEX = Futex.available();

    private final MappedCells cells = new MappedCells();
    private final PhaseBarrier barrier = cells.barrier(0, 1);
    private final int delaySpins = ThreadLocalRandom.current().nextInt(MAX_DELAY_SPINS + 1);

    @Actor
    public void waiter(II_Result r) {
        long deadline = BoundedWait.deadline();
        r.r1 = BoundedWait.outcome(barrier.await(0, deadline, false), deadline);
    }

    @Actor
    public void arrival(II_Result r) {
        r.r2 = FUTEX && waiterCounted() ? 1 : 0;
        for (int i = 0; i < delaySpins; i++) {
            Thread.onSpinWait();
        }
        barrier.arriveAlone(0);
    }

    /** Waits until the waiter counted itself for futex: true, or false after {@link BoundedWait#PATIENCE_MS}. */
    private boolean waiterCounted() {
        long deadline = BoundedWait.deadline();
        while (cells.futexWaiters(0) == 0) {
            if (System.nanoTime() - deadline >= 0) {
                return false;
            }
            Thread.onSpinWait();
        }
        return true;
    }
}
