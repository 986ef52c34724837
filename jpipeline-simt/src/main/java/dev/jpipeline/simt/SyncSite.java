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
        if (check == null) {
            int phase = barrier.arrive(1);
            barrier.await(phase, PhaseBarrier.NO_DEADLINE, false, WaitStrategy.BLOCKING, this, null);
            return;
        }
        KernelThread kt = KernelContext.current("a sync").thread();
        kt.scheduler.yieldPoint(kt, name);
        check.arrive(kt);
        int phase = barrier.arrive(1);
        arrived(kt, phase);
        barrier.await(phase, PhaseBarrier.NO_DEADLINE, false, WaitStrategy.BLOCKING, this, null);
        passed(kt, phase);
    }

    /**
     * Under checked execution, {@code kt} arrived at phase {@code phase}: what it did so far happens-before what
     * every member does after the phase (the race detector's release).
     */
    void arrived(KernelThread kt, int phase) {
        if (kt.checked.races != null) {
            kt.checked.races.release(kt, this, phase);
        }
    }

    /** Under checked execution, {@code kt} passed phase {@code phase}: the detector's acquire. */
    void passed(KernelThread kt, int phase) {
        if (kt.checked.races != null) {
            kt.checked.races.acquire(kt, this, phase);
        }
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
