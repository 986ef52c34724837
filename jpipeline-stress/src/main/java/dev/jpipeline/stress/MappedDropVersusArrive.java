package dev.jpipeline.stress;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressMeta;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.IIII_Result;

/**
 * {@link DropVersusArrive}, with its outcomes, on barriers in a mapped file ({@link MappedCells}): a party's
 * arrival races another party leaving the same phase, in the three ways a party can leave, with the barrier words
 * in shared memory. Phase 0 completes exactly once and the next phase expects the two remaining parties. jcstress
 * takes only a test's own methods as actors: these run the superclass's.
 */
@JCStressTest
@JCStressMeta(DropVersusArrive.class)
@State
public class MappedDropVersusArrive extends DropVersusArrive {

    public MappedDropVersusArrive() {
        this(new MappedCells());
    }

    private MappedDropVersusArrive(MappedCells cells) {
        super(cells.barrier(0, 3), cells.barrier(1, 3), cells.barrier(2, 3));
    }

    @Actor
    @Override
    public void partyA() {
        super.partyA();
    }

    @Actor
    @Override
    public void partyB() {
        super.partyB();
    }

    @Arbiter
    @Override
    public void observe(IIII_Result r) {
        super.observe(r);
    }
}
