package dev.jpipeline.stress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import dev.jpipeline.internal.PhaseBarrier;
import dev.jpipeline.internal.wait.WaitStatus;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.IIII_Result;

/**
 * A copy tied to a phase with {@code tieCopy()} lands on another thread ({@code copyLanded}, as a copy engine's
 * worker does: data first, then the landing, with a failure) while the phase's only party arrives and then looks
 * at the phase once. The phase must not complete before the copy landed: when the owner sees it complete, it
 * sees the copy's data and the failure recorded for that phase ({@code failureOf(0)}). Afterwards the copy's
 * extra party is gone: the barrier is at phase 1 expecting its one party again.
 *
 * <p>Results: the owner's look (1 complete, 0 not yet), the data it read and whether it saw the failure (-1 when
 * the phase was not complete), and the barrier word afterwards ({@link BarrierWord}). A subclass may run the race
 * on a barrier whose failure records are text ({@link MappedTieVersusCopyLanded}): there the record seen is -1
 * when it is torn.
 */
@JCStressTest
@Outcome(id = "0, -1, -1, 110", expect = ACCEPTABLE, desc = "the owner looked before the copy landed")
@Outcome(id = "1, 42, 1, 110", expect = ACCEPTABLE, desc = "the copy landed first: its data and failure are seen")
@Outcome(id = "1, 42, 0, .*", expect = FORBIDDEN, desc = "the phase completed but its copy's failure was lost")
@Outcome(id = "1, 42, -1, .*", expect = FORBIDDEN, desc = "the phase completed but its failure's record was torn")
@Outcome(id = "1, 0, .*", expect = FORBIDDEN, desc = "the phase completed before the copy's data landed")
@Outcome(expect = FORBIDDEN, desc = "wrong counts after the copy landed")
@State
public class TieVersusCopyLanded {

    static final RuntimeException COPY_FAILURE = new RuntimeException("copy failed");

    private final PhaseBarrier barrier;
    private int data;

    public TieVersusCopyLanded() {
        this(new PhaseBarrier(1));
    }

    /** The race on a fresh barrier that expects 1 party (a subclass's, in other memory). */
    protected TieVersusCopyLanded(PhaseBarrier barrier) {
        this.barrier = barrier;
        barrier.tieCopy();              // the owner's memcpyAsync, before its commit
    }

    @Actor
    public void owner(IIII_Result r) {
        int round = barrier.arrive(1);
        if (barrier.await(round, PhaseBarrier.POLL_ONCE, false) == WaitStatus.COMPLETE) {
            r.r1 = 1;
            r.r2 = data();
            r.r3 = recorded(barrier, round);
        } else {
            r.r1 = 0;
            r.r2 = -1;
            r.r3 = -1;
        }
    }

    @Actor
    public void copyWorker() {
        setData(42);
        barrier.copyLanded(COPY_FAILURE);
    }

    @Arbiter
    public void afterwards(IIII_Result r) {
        r.r4 = BarrierWord.of(barrier);
    }

    /** The copy's data: a plain read. */
    protected int data() {
        return data;
    }

    /** Sets the copy's data: a plain write. */
    protected void setData(int value) {
        data = value;
    }

    /** What {@code barrier} records for phase {@code round}: 1 the copy's failure, 0 none. */
    protected int recorded(PhaseBarrier barrier, int round) {
        return barrier.failureOf(round) == COPY_FAILURE ? 1 : 0;
    }
}
