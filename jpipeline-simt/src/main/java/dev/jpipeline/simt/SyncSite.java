package dev.jpipeline.simt;

import dev.jpipeline.WaitStrategy;
import dev.jpipeline.internal.PhaseBarrier;
import dev.jpipeline.internal.wait.WaitSite;

/** A named execution barrier of the SIMT runtime (__syncthreads, __syncwarp, grid sync), for hang reports. */
final class SyncSite implements WaitSite {

    private final String name;
    private final PhaseBarrier barrier;
    /** Checked execution's view of the barrier, or null. */
    final SyncCheck check;

    SyncSite(String name, PhaseBarrier barrier) {
        this(name, barrier, null);
    }

    SyncSite(String name, PhaseBarrier barrier, SyncCheck check) {
        this.name = name;
        this.barrier = barrier;
        this.check = check;
    }

    /**
     * Arrives and waits for the current phase; waits park at once (kernel threads are virtual). Under checked
     * execution a scheduling point, and the arrival is checked first.
     */
    void arriveAndWait() {
        if (check != null) {
            KernelThread kt = KernelContext.current("a sync").thread();
            kt.scheduler.yieldPoint(kt, name);
            check.arrive(kt);
        }
        int phase = barrier.arrive(1);
        barrier.await(phase, PhaseBarrier.NO_DEADLINE, false, WaitStrategy.BLOCKING, this, null);
    }

    /** Its name, as checked execution's trace gives it. */
    String name() {
        return name;
    }

    /** Its barrier: a compiled thread arrives at it and waits without a stack (Strand.runCompiledThread). */
    PhaseBarrier barrier() {
        return barrier;
    }

    @Override
    public String describeWait() {
        return "waits in " + name + ": " + barrier.arrived() + " of " + barrier.expected() + " threads arrived";
    }
}
