package dev.jpipeline.stress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import dev.jpipeline.internal.PhaseBarrier;
import dev.jpipeline.internal.wait.WaitStatus;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * A failure recorded for a phase ({@code recordFailure}) before the arrival that completes it is seen, whole, by
 * {@code failureOf} on a thread whose wait sees the phase complete, on a barrier in a mapped file
 * ({@link MappedCells}) whose failures are records of text there (a seqlock: stamp, length, message). The
 * observer polls once ({@code await(0, POLL_ONCE)}) so that both orders are explored.
 *
 * <p>Results: whether the phase was complete (1) or not (0), and the record seen as {@link MappedCells#recorded}
 * (1 the failure, 0 none, -1 torn; 0 when the phase was not complete).
 */
@JCStressTest
@Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "the phase was not complete yet when the observer looked")
@Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "the phase was complete and its failure recorded")
@Outcome(id = "1, 0", expect = FORBIDDEN, desc = "the phase was complete but its failure was not seen")
@Outcome(expect = FORBIDDEN, desc = "the failure's record was torn")
@State
public class MappedFailureRecordedBeforeArrival {

    private static final RuntimeException FAILURE = new RuntimeException("the producer failed");

    private final PhaseBarrier barrier = new MappedCells().barrierWithRecords(1);

    @Actor
    public void producer() {
        barrier.recordFailure(0, FAILURE);
        barrier.arrive(1);
    }

    @Actor
    public void observer(II_Result r) {
        if (barrier.await(0, PhaseBarrier.POLL_ONCE, false) == WaitStatus.COMPLETE) {
            r.r1 = 1;
            r.r2 = MappedCells.recorded(barrier, 0, FAILURE);
        } else {
            r.r1 = 0;
            r.r2 = 0;
        }
    }
}
