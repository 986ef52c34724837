package dev.jpipeline.internal;

import static dev.jpipeline.internal.LincheckScenarios.scenario;

import dev.jpipeline.WaitStrategy;
import dev.jpipeline.internal.wait.Deadlines;
import dev.jpipeline.internal.wait.WaitStatus;
import dev.jpipeline.internal.wait.Waiting;
import org.jetbrains.lincheck.datastructures.BooleanGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.junit.jupiter.api.Test;

/**
 * Model checking of the stage barrier as the pipeline uses it: two parties that arrive once per phase, wait for
 * the phase they arrived at, quit, and tie copies that the other party's thread lands, with or without a failure.
 * The results must be those of {@link Spec} in some sequential order.
 *
 * <pre>
 * Each Lincheck thread is one party (ThreadIdGen: 0 is the initial part, 1..2 the parallel threads, 3 the final
 * part; parties are A = 1, 3 and B = 0, 2, so that the sequential parts act as the parties too). The operations
 * keep the protocol that gives copyLanded its meaning, and report instead of breaking it:
 *  - a party arrives only once its previous phase has completed (else "waiting": it would have to wait first), so
 *    a phase never completes before every party and every tied copy has arrived;
 *  - a party's copies are landed by the other party's thread ("the copy engine"): tieCopy first, then the copy
 *    is handed over, so a copy never lands before it was tied. Tie and hand-over hold one lock, and so does the
 *    lander's claim, so that "no copy to land" is never seen while a tie is half done (the tie itself is still
 *    one CAS on the barrier, which arrivals and polls race with);
 *  - a party checks its own last phase only: the failure record of that phase cannot be reused before the party
 *    arrives again.
 * Under that protocol copyLanded (record the failure, then arrive and drop) must be atomic: a waiter that sees
 * its phase complete must see the failure of every copy tied to it.
 *
 * The barrier starts with one copy of each party tied to phase 0, so that most random scenarios have copies in
 * flight. Random scenarios rarely line up a copy that completes a phase against a look at that phase, or a quit
 * against the arrival that would complete the phase: hand-written scenarios pin those races, and the model
 * checker explores their interleavings like any other.
 * </pre>
 */
@Param(name = "thread", gen = ThreadIdGen.class)
@Param(name = "flag", gen = BooleanGen.class)
public class PhaseBarrierProtocolLincheckTest {

    private static final RuntimeException COPY_FAILURE = new RuntimeException("copy failed");

    private final PhaseBarrier barrier = new PhaseBarrier(2);
    /** Per party: the phase it last arrived at, or -1. Only the party's own thread reads and writes its slot. */
    private final int[] lastRound = {-1, -1};
    /** Per party: whether it has left. Only the party's own thread reads and writes its slot. */
    private final boolean[] gone = new boolean[2];
    /** Per party: copies tied by the other party that this party's thread has to land. Guarded by itself. */
    private final int[] toLand = {1, 1};

    /** Each party starts with one copy tied to phase 0, landed by the other party's thread. */
    public PhaseBarrierProtocolLincheckTest() {
        barrier.tieCopy();
        barrier.tieCopy();
    }

    static int party(int thread) {
        return (thread + 1) & 1;
    }

    /**
     * The party's next arrival, as a pipeline makes it: first it looks at its previous phase (it would have to wait
     * for it) and reports what it saw there, then it arrives at the next one.
     *
     * @return "waiting" when the previous phase has not completed (nothing changes), else the previous phase's
     *         outcome ("first" before the first arrival) and the phase arrived at
     */
    @Operation
    public String arrive(@Param(name = "thread") int thread) {
        int p = party(thread);
        if (gone[p]) {
            return "gone";
        }
        String previous = lastRound[p] < 0 ? "first" : outcome(lastRound[p], false);
        if (!previous.equals("complete") && !previous.equals("failed") && !previous.equals("first")) {
            return "waiting";
        }
        lastRound[p] = barrier.arrive(1);
        return previous + ", arrived at " + lastRound[p];
    }

    /**
     * The party leaves: with {@code arriving}, by {@code arriveAndDrop} (its last arrival, once its previous phase
     * completed); else by the pipeline's quit, {@code dropFromRound} of the phase after its last arrival.
     */
    @Operation
    public String leave(@Param(name = "thread") int thread, @Param(name = "flag") boolean arriving) {
        int p = party(thread);
        if (gone[p]) {
            return "gone";
        }
        if (arriving) {
            if (lastRound[p] >= 0 && !barrier.isComplete(lastRound[p])) {
                return "waiting";
            }
            barrier.arriveAndDrop();
        } else {
            barrier.dropFromRound(lastRound[p] + 1);
        }
        gone[p] = true;
        return "left";
    }

    /** Ties a copy to the current phase and hands it to the other party's thread, which lands it. */
    @Operation
    public void tieCopy(@Param(name = "thread") int thread) {
        int p = party(thread);
        if (gone[p]) {
            return;
        }
        synchronized (toLand) {
            barrier.tieCopy();
            toLand[1 - p]++;
        }
    }

    /** Lands a copy handed to this thread, failed or not. */
    @Operation
    public String land(@Param(name = "thread") int thread, @Param(name = "flag") boolean fail) {
        int p = party(thread);
        synchronized (toLand) {
            if (toLand[p] == 0) {
                return "none";
            }
            toLand[p]--;
        }
        barrier.copyLanded(fail ? COPY_FAILURE : null);
        return fail ? "failed" : "landed";
    }

    /**
     * Looks at the party's last phase without arriving: with {@code slow}, through {@link Waiting}'s slow path (a
     * pushed waiter node, the poll after the push) with a deadline that has come; else with a single poll.
     */
    @Operation
    public String check(@Param(name = "thread") int thread, @Param(name = "flag") boolean slow) {
        int p = party(thread);
        if (gone[p]) {
            return "gone";
        }
        return lastRound[p] < 0 ? "first" : outcome(lastRound[p], slow);
    }

    /** A pipeline's wait for {@code round}: the wait, then the phase's failure record. */
    private String outcome(int round, boolean slow) {
        WaitStatus status = slow
            ? barrier.await(round, System.nanoTime(), false, WaitStrategy.BLOCKING, barrier, null)
            : barrier.await(round, Deadlines.POLL_ONCE, false);
        if (status != WaitStatus.COMPLETE) {
            return status.name();
        }
        return barrier.failureOf(round) == COPY_FAILURE ? "failed" : "complete";
    }

    @Test
    void modelChecking() {
        new ModelCheckingOptions()
            .iterations(20)
            .invocationsPerIteration(200)
            .threads(2)
            .actorsPerThread(3)
            .actorsBefore(2)
            .actorsAfter(2)
            .sequentialSpecification(Spec.class)
            // the copy that completes phase 0 lands with a failure while the other party looks at phase 0
            .addCustomScenario(scenario(PhaseBarrierProtocolLincheckTest.class)
                .initial("arrive", 0, "land", 0, false)
                .thread(1, "arrive", 1, "land", 1, true)
                .thread(2, "check", 2, false, "check", 2, true)
                .post("check", 3, false)
                .build())
            // a party quits while the other arrives and looks; the copies land on the way
            .addCustomScenario(scenario(PhaseBarrierProtocolLincheckTest.class)
                .initial("land", 0, true)
                .thread(1, "arrive", 1, "land", 1, false, "check", 1, true)
                .thread(2, "leave", 2, false, "arrive", 2)
                .post("check", 3, false, "arrive", 3)
                .build())
            // a party that arrived quits (withdrawing its arrival) while the other arrives and looks
            .addCustomScenario(scenario(PhaseBarrierProtocolLincheckTest.class)
                .initial("land", 0, false, "land", 1, true, "arrive", 0)
                .thread(1, "arrive", 1, "check", 1, true)
                .thread(2, "leave", 2, false)
                .post("check", 3, false, "arrive", 3)
                .build())
            // arrive-and-drop races an arrival and a failed copy; then the survivor goes on alone
            .addCustomScenario(scenario(PhaseBarrierProtocolLincheckTest.class)
                .initial("land", 1, false)
                .thread(1, "arrive", 1, "check", 1, false)
                .thread(2, "land", 2, true, "leave", 2, true)
                .post("arrive", 3, "check", 3, false)
                .build())
            .check(PhaseBarrierProtocolLincheckTest.class);
    }

    /** Two parties and their copies, sequentially. */
    public static final class Spec {
        private int phase;
        private int expected = 2 + 2;
        private int arrived;
        private final int[] lastRound = {-1, -1};
        private final boolean[] gone = new boolean[2];
        private final int[] toLand = {1, 1};
        /** Per phase parity: the phase whose copy failed last, as the barrier keeps it. */
        private final int[] failedPhase = {-1, -1};

        public String arrive(int thread) {
            int p = party(thread);
            if (gone[p]) {
                return "gone";
            }
            if (lastRound[p] == phase) {
                return "waiting";
            }
            String previous = lastRound[p] < 0 ? "first" : outcome(lastRound[p]);
            lastRound[p] = phase;
            arrived++;
            completeIfFull();
            return previous + ", arrived at " + lastRound[p];
        }

        public String leave(int thread, boolean arriving) {
            int p = party(thread);
            if (gone[p]) {
                return "gone";
            }
            if (arriving && lastRound[p] == phase) {
                return "waiting";
            }
            gone[p] = true;
            expected--;
            if (!arriving && lastRound[p] == phase) {
                arrived--;                  // a quit withdraws the party's arrival together with the party
            } else if (arriving || arrived > 0) {
                completeIfFull();           // the others' arrivals may now be enough
            }
            return "left";
        }

        public void tieCopy(int thread) {
            int p = party(thread);
            if (!gone[p]) {
                expected++;
                toLand[1 - p]++;
            }
        }

        public String land(int thread, boolean fail) {
            int p = party(thread);
            if (toLand[p] == 0) {
                return "none";
            }
            toLand[p]--;
            if (fail) {
                failedPhase[phase & 1] = phase;
            }
            expected--;
            completeIfFull();
            return fail ? "failed" : "landed";
        }

        public String check(int thread, boolean slow) {
            int p = party(thread);
            if (gone[p]) {
                return "gone";
            }
            return lastRound[p] < 0 ? "first" : outcome(lastRound[p]);
        }

        private String outcome(int round) {
            if (round == phase) {
                return (expected == 0 ? WaitStatus.ABANDONED : WaitStatus.TIMED_OUT).name();
            }
            return failedPhase[round & 1] == round ? "failed" : "complete";
        }

        private void completeIfFull() {
            if (arrived == expected) {
                phase++;
                arrived = 0;
            }
        }
    }
}
