package dev.jpipeline.internal.wait;

import dev.jpipeline.WaitStrategy;
import dev.jpipeline.internal.PhaseBarrier;
import org.jetbrains.lincheck.Lincheck;
import org.junit.jupiter.api.Test;

/**
 * Model checking of blocking waits: threads that wait without a deadline under {@link WaitStrategy#BLOCKING}
 * (so they go straight to the park stage of {@link Waiting}) are released with the right status by whatever ends
 * their phase, in every interleaving Lincheck explores.
 *
 * <p>Lincheck's model checker lets every park wake spuriously and fixes {@code System.nanoTime()}, so it cannot
 * tell a lost wake-up from a spurious one (the waiter polls again either way) and a deadline never passes here:
 * these scenarios check what each wait returns and sees, and that nothing hangs or fails; the jcstress test
 * {@code ParkVersusSignal} checks that a parked waiter is woken.
 */
class WaitingLincheckTest {

    private static final int INVOCATIONS = 200;
    private static final RuntimeException COPY_FAILURE = new RuntimeException("copy failed");

    /** Two parties arrive and wait; a copy tied to the phase lands with a failure on a third thread. */
    @Test
    void arrivalsAndAFailedCopyReleaseBothWaiters() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> {
            PhaseBarrier barrier = new PhaseBarrier(2);
            barrier.tieCopy();
            Outcome a = new Outcome();
            Outcome b = new Outcome();
            Thread partyA = Thread.ofPlatform().start(() -> a.arriveAndWait(barrier));
            Thread copy = Thread.ofPlatform().start(() -> barrier.copyLanded(COPY_FAILURE));
            b.arriveAndWait(barrier);
            join(partyA, copy);
            a.expect(WaitStatus.COMPLETE, COPY_FAILURE);
            b.expect(WaitStatus.COMPLETE, COPY_FAILURE);
            check(barrier.phase() == 1 && barrier.expected() == 2 && barrier.arrived() == 0, barrier);
        });
    }

    /** A party waits for its phase; the other party quits before arriving, which completes the phase. */
    @Test
    void aQuitThatCompletesThePhaseReleasesTheWaiter() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> {
            PhaseBarrier barrier = new PhaseBarrier(2);
            Outcome a = new Outcome();
            Thread partyA = Thread.ofPlatform().start(() -> a.arriveAndWait(barrier));
            barrier.dropFromRound(0);
            join(partyA);
            a.expect(WaitStatus.COMPLETE, null);
            check(barrier.phase() == 1 && barrier.expected() == 1, barrier);
        });
    }

    /** An observer waits for a phase whose only party leaves without arriving: the wait is abandoned. */
    @Test
    void theLastPartyLeavingAbandonsTheWaiter() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> {
            PhaseBarrier barrier = new PhaseBarrier(1);
            WaitStatus[] seen = new WaitStatus[1];
            Thread observer = Thread.ofPlatform().start(() -> seen[0] = waitFor(barrier, 0));
            barrier.dropFromRound(0);
            join(observer);
            check(seen[0] == WaitStatus.ABANDONED, seen[0]);
            check(barrier.phase() == 0 && barrier.expected() == 0, barrier);
        });
    }

    private static WaitStatus waitFor(PhaseBarrier barrier, int round) {
        return barrier.await(round, Deadlines.NO_DEADLINE, false, WaitStrategy.BLOCKING, barrier, null);
    }

    private static void join(Thread... threads) {
        for (Thread t : threads) {
            try {
                t.join();
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }
    }

    private static void check(boolean condition, Object detail) {
        if (!condition) {
            throw new AssertionError(String.valueOf(detail));
        }
    }

    /** What one party's arrive-and-wait saw. */
    private static final class Outcome {
        WaitStatus status;
        Throwable failure;
        int round = -1;

        void arriveAndWait(PhaseBarrier barrier) {
            round = barrier.arrive(1);
            status = waitFor(barrier, round);
            failure = barrier.failureOf(round);
        }

        void expect(WaitStatus expectedStatus, Throwable expectedFailure) {
            check(round == 0 && status == expectedStatus && failure == expectedFailure,
                "round " + round + ", " + status + ", failure " + failure);
        }
    }
}
