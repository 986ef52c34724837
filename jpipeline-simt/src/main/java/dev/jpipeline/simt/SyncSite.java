package dev.jpipeline.simt;

import dev.jpipeline.WaitStrategy;
import dev.jpipeline.internal.PhaseBarrier;
import dev.jpipeline.internal.WaitSite;

/** A named execution barrier of the SIMT runtime (__syncthreads, __syncwarp, grid sync), for hang reports. */
final class SyncSite implements WaitSite {

    private final String name;
    private final PhaseBarrier barrier;

    SyncSite(String name, PhaseBarrier barrier) {
        this.name = name;
        this.barrier = barrier;
    }

    /** Arrives and waits for the current phase; waits park at once (kernel threads are virtual). */
    void arriveAndWait() {
        int phase = barrier.arrive(1);
        barrier.await(phase, PhaseBarrier.NO_DEADLINE, false, WaitStrategy.BLOCKING, this, null);
    }

    @Override
    public String describeWait() {
        return "waits in " + name + ": " + barrier.arrived() + " of " + barrier.expected() + " threads arrived";
    }
}
