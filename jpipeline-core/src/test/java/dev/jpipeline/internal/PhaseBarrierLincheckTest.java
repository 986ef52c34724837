package dev.jpipeline.internal;

import static dev.jpipeline.internal.LincheckScenarios.scenario;

import dev.jpipeline.WaitStrategy;
import dev.jpipeline.internal.wait.Deadlines;
import dev.jpipeline.internal.wait.WaitStatus;
import dev.jpipeline.internal.wait.Waiting;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.StressOptions;
import org.junit.jupiter.api.Test;

/**
 * Model checking of the stage barrier as a counter: every operation, used in any order by any thread, including
 * the misuses it refuses, is linearizable against {@link Spec}, a plain sequential barrier of a few lines.
 *
 * <pre>
 * Every operation here is one CAS or one volatile read of the barrier word (or a wait that ends with one), so no
 * protocol between the threads is needed: over-arrivals, drops from an impossible round and drops from an empty
 * barrier must throw IllegalStateException in the implementation exactly when they do in the specification.
 * copyLanded is left to PhaseBarrierProtocolLincheckTest: it is only defined while its copy is pending, which the
 * threads of a protocol guarantee and random counter operations would not.
 * </pre>
 *
 * <p>Lincheck runs the operations of each scenario on its own threads and checks that the results match some
 * sequential order of the same operations. The barrier starts with 2 parties; rounds range over 0..3, so that
 * waits and drops name past, current, next and impossible phases.
 */
@Param(name = "round", gen = IntGen.class, conf = "0:3")
@Param(name = "count", gen = IntGen.class, conf = "0:2")
public class PhaseBarrierLincheckTest {

    private final PhaseBarrier barrier = new PhaseBarrier(2);

    @Operation
    public int arrive(@Param(name = "count") int count) {
        return barrier.arrive(count);
    }

    @Operation
    public void arriveAndDrop() {
        barrier.arriveAndDrop();
    }

    @Operation
    public void dropFromRound(@Param(name = "round") int round) {
        barrier.dropFromRound(round);
    }

    @Operation
    public void tieCopy() {
        barrier.tieCopy();
    }

    @Operation
    public WaitStatus poll(@Param(name = "round") int round) {
        return barrier.poll(round);
    }

    @Operation
    public boolean isComplete(@Param(name = "round") int round) {
        return barrier.isComplete(round);
    }

    /** A wait that looks once ({@link Deadlines#POLL_ONCE}). */
    @Operation
    public WaitStatus awaitPollOnce(@Param(name = "round") int round) {
        return barrier.await(round, Deadlines.POLL_ONCE, false);
    }

    /**
     * A wait whose deadline has already come: it takes the whole slow path of {@link Waiting} (a waiter node
     * pushed on the stack, the poll after the push, the clock) and times out there, while other threads arrive
     * and signal the stack. Model checking fixes {@code System.nanoTime()}, so a later deadline would never pass.
     */
    @Operation
    public WaitStatus awaitDue(@Param(name = "round") int round) {
        return barrier.await(round, System.nanoTime(), false, WaitStrategy.BLOCKING, barrier, null);
    }

    /** The whole word, read once. */
    @Operation
    public String state() {
        return barrier.toString();
    }

    @Test
    void modelChecking() {
        new ModelCheckingOptions()
            .iterations(20)
            .invocationsPerIteration(200)
            .threads(2)
            .actorsPerThread(3)
            .actorsBefore(2)
            .actorsAfter(1)
            .sequentialSpecification(Spec.class)
            // a party that already arrived quits (its arrival is withdrawn) while the other arrives
            .addCustomScenario(scenario(PhaseBarrierLincheckTest.class)
                .initial("arrive", 1)
                .thread(1, "dropFromRound", 1)
                .thread(2, "arrive", 1, "awaitDue", 0)
                .post("state")
                .build())
            // a party quits before arriving while the other arrives, then arrives and drops
            .addCustomScenario(scenario(PhaseBarrierLincheckTest.class)
                .thread(1, "dropFromRound", 0, "poll", 0)
                .thread(2, "arrive", 1, "arriveAndDrop")
                .post("state", "awaitPollOnce", 1)
                .build())
            // a copy is tied to the phase while the other party's arrival would complete it
            .addCustomScenario(scenario(PhaseBarrierLincheckTest.class)
                .initial("arrive", 1)
                .thread(1, "tieCopy", "isComplete", 0)
                .thread(2, "arrive", 1, "awaitDue", 0)
                .post("state")
                .build())
            .check(PhaseBarrierLincheckTest.class);
    }

    @Test
    void stress() {
        new StressOptions()
            .iterations(5)
            .invocationsPerIteration(1_000)
            .threads(3)
            .actorsPerThread(3)
            .actorsBefore(2)
            .actorsAfter(1)
            .sequentialSpecification(Spec.class)
            .check(PhaseBarrierLincheckTest.class);
    }

    /** The barrier, sequentially: three counters. */
    public static final class Spec {
        private int phase;
        private int expected = 2;
        private int arrived;
        /** The current phase had an arrival withdrawn by a drop: when the last party leaves, it completes. */
        private boolean withdrawn;

        public int arrive(int count) {
            if (count < 1 || arrived + count > expected) {
                throw new IllegalStateException("over-arrival");
            }
            int at = phase;
            arrived += count;
            completeIfFull();
            return at;
        }

        public void arriveAndDrop() {
            if (expected == 0 || arrived >= expected) {
                throw new IllegalStateException("over-arrival");
            }
            expected--;             // arriving and leaving at once: the phase needs one arrival fewer
            completeIfFull();
        }

        public void dropFromRound(int round) {
            int lag = (round - phase) & PhaseBarrier.PHASE_MASK;
            if (expected == 0 || lag > 1 || (lag == 1 && arrived == 0)) {
                throw new IllegalStateException("impossible drop");
            }
            if (lag == 1) {         // the party arrived here already: withdraw the arrival with the party
                expected--;
                arrived--;
                withdrawn = true;
            } else {                // the party leaves before arriving: the phase needs one arrival fewer
                expected--;
                // with nobody left the phase completes if it had (withdrawn) arrivals, else it is abandoned
                if (arrived > 0 || (expected == 0 && withdrawn)) {
                    completeIfFull();
                }
            }
        }

        public void tieCopy() {
            expected++;
        }

        public WaitStatus poll(int round) {
            if (phase != (round & PhaseBarrier.PHASE_MASK)) {
                return WaitStatus.COMPLETE;
            }
            return expected == 0 ? WaitStatus.ABANDONED : null;
        }

        public boolean isComplete(int round) {
            return poll(round) == WaitStatus.COMPLETE;
        }

        public WaitStatus awaitPollOnce(int round) {
            WaitStatus status = poll(round);
            return status == null ? WaitStatus.TIMED_OUT : status;
        }

        public WaitStatus awaitDue(int round) {
            return awaitPollOnce(round);
        }

        public String state() {
            return "phase " + phase + ", arrived " + arrived + "/" + expected;
        }

        private void completeIfFull() {
            if (arrived == expected) {
                phase++;
                arrived = 0;
                withdrawn = false;
            }
        }
    }
}
