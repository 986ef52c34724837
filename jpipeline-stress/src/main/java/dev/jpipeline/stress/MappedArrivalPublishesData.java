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
 * {@link CommitPublishesStageData} on a barrier in a mapped file ({@link MappedCells}): plain writes of data in
 * the mapped file, made before a solo arrival ({@code arriveAlone}, a system-scope stage's commit by a side's only
 * thread), are visible to a thread whose wait sees the phase complete. The consumer polls once
 * ({@code await(0, POLL_ONCE)}) so that both orders are explored.
 */
@JCStressTest
@Outcome(id = "-1, -1", expect = ACCEPTABLE, desc = "the phase was not complete yet when the consumer looked")
@Outcome(id = "1, 2", expect = ACCEPTABLE, desc = "the phase was complete and its data too")
@Outcome(expect = FORBIDDEN, desc = "the phase was complete but its data stale or torn")
@State
public class MappedArrivalPublishesData {

    private final MappedCells cells = new MappedCells();
    private final PhaseBarrier barrier = cells.barrier(0, 1);

    @Actor
    public void producer() {
        cells.setData(0, 1);
        cells.setData(1, 2);
        barrier.arriveAlone(0);
    }

    @Actor
    public void consumer(II_Result r) {
        if (barrier.await(0, PhaseBarrier.POLL_ONCE, false) == WaitStatus.COMPLETE) {
            r.r1 = cells.data(0);
            r.r2 = cells.data(1);
        } else {
            r.r1 = -1;
            r.r2 = -1;
        }
    }
}
