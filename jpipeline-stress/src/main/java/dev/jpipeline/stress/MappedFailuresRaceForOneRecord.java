package dev.jpipeline.stress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import dev.jpipeline.internal.PhaseBarrier;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * Two parties of a barrier in a mapped file ({@link MappedCells}) each record a failure for phase 0 and then
 * arrive: the two race for the phase's one record (a CAS of its stamp to "writing"; the loser leaves it to the
 * winner). Once the phase is complete, the record holds exactly one of the two failures, whole: never both mixed,
 * never none.
 *
 * <p>Results: the record as {@link MappedCells#recorded} (1 party A's failure, 2 party B's, 0 none, -1 torn), and
 * the barrier word afterwards ({@link BarrierWord}).
 */
@JCStressTest
@Outcome(id = "1, 120", expect = ACCEPTABLE, desc = "party A's failure won the record")
@Outcome(id = "2, 120", expect = ACCEPTABLE, desc = "party B's failure won the record")
@Outcome(expect = FORBIDDEN, desc = "no failure recorded, a torn record, or wrong counts")
@State
public class MappedFailuresRaceForOneRecord {

    private static final RuntimeException FAILURE_A = new RuntimeException("party A failed");
    private static final RuntimeException FAILURE_B = new RuntimeException("party B failed at greater length");

    private final PhaseBarrier barrier = new MappedCells().barrierWithRecords(2);

    @Actor
    public void partyA() {
        barrier.recordFailure(0, FAILURE_A);
        barrier.arrive(1);
    }

    @Actor
    public void partyB() {
        barrier.recordFailure(0, FAILURE_B);
        barrier.arrive(1);
    }

    @Arbiter
    public void afterwards(II_Result r) {
        r.r1 = MappedCells.recorded(barrier, 0, FAILURE_A, FAILURE_B);
        r.r2 = BarrierWord.of(barrier);
    }
}
