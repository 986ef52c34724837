package dev.jpipeline.stress;

import dev.jpipeline.internal.PhaseBarrier;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressMeta;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.IIII_Result;

/**
 * {@link TieVersusCopyLanded}, with its outcomes, on a barrier in a mapped file ({@link MappedCells}), whose
 * failures are recorded there as text: a copy tied to a phase lands on another thread (its data, in the mapped file
 * too, first, then the landing, with a failure) while the phase's only party arrives and then looks at the phase
 * once. When the owner sees the phase complete, it sees the copy's data and the failure's record for that phase,
 * whole ({@link MappedCells#recorded}: 1 the copy's failure, 0 none, -1 torn). jcstress takes only a test's own
 * methods as actors: these run the superclass's, with the data and the record read from the mapped file.
 */
@JCStressTest
@JCStressMeta(TieVersusCopyLanded.class)
@State
public class MappedTieVersusCopyLanded extends TieVersusCopyLanded {

    private final MappedCells cells;

    public MappedTieVersusCopyLanded() {
        this(new MappedCells());
    }

    private MappedTieVersusCopyLanded(MappedCells cells) {
        super(cells.barrierWithRecords(1));
        this.cells = cells;
    }

    @Actor
    @Override
    public void owner(IIII_Result r) {
        super.owner(r);
    }

    @Actor
    @Override
    public void copyWorker() {
        super.copyWorker();
    }

    @Arbiter
    @Override
    public void afterwards(IIII_Result r) {
        super.afterwards(r);
    }

    /** Data int 0 of the slot: a plain read. */
    @Override
    protected int data() {
        return cells.data(0);
    }

    /** Sets data int 0 of the slot: a plain write. */
    @Override
    protected void setData(int value) {
        cells.setData(0, value);
    }

    /** The record of phase {@code round}, as {@link MappedCells#recorded}: -1 when it is not the failure's, torn. */
    @Override
    protected int recorded(PhaseBarrier barrier, int round) {
        return MappedCells.recorded(barrier, round, COPY_FAILURE);
    }
}
