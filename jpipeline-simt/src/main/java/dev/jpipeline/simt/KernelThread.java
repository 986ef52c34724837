package dev.jpipeline.simt;

import dev.jpipeline.internal.ParkListener;
import dev.jpipeline.internal.WaitSite;

/**
 * The launch's view of one CUDA thread: tells the {@link LaunchMonitor} when it blocks in a jpipeline wait and
 * when it wakes, and unwinds it ({@link KernelAbortedException}) once the launch has been aborted.
 */
final class KernelThread implements ParkListener {

    final Dim3 blockIdx;
    final Dim3 threadIdx;
    private final LaunchMonitor monitor;
    /** What the thread is parked in, or null while it runs: written by the thread, read by the monitor. */
    private volatile Object blockedIn;
    volatile boolean finished;

    KernelThread(LaunchMonitor monitor, Dim3 blockIdx, Dim3 threadIdx) {
        this.monitor = monitor;
        this.blockIdx = blockIdx;
        this.threadIdx = threadIdx;
    }

    @Override
    public void parking(Object site) {
        monitor.checkAborted();
        blockedIn = site;
        monitor.blocked();
    }

    @Override
    public void unparked() {
        blockedIn = null;
        monitor.unblocked();
        monitor.checkAborted();
    }

    boolean isBlocked() {
        return blockedIn != null;
    }

    String describe() {
        Object site = blockedIn;
        return "block " + blockIdx + " thread " + threadIdx + ": "
            + (finished ? "finished" : site == null ? "running" : WaitSite.describe(site));
    }
}
