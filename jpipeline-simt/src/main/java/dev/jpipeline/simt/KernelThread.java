package dev.jpipeline.simt;

import dev.jpipeline.internal.HangDetector;
import dev.jpipeline.internal.ParkListener;
import dev.jpipeline.internal.WaitSite;

/**
 * The launch's view of one CUDA thread: a participant of the launch's hang detector, told through the park
 * listener hook when it blocks in a jpipeline wait and when it wakes; it unwinds ({@link KernelAbortedException})
 * once the launch has been aborted.
 */
final class KernelThread implements ParkListener, HangDetector.Participant {

    final Dim3 blockIdx;
    final Dim3 threadIdx;
    private final LaunchMonitor monitor;
    /** The Java thread running this CUDA thread: set before it starts. */
    private volatile Thread thread;
    /** What the thread is parked in, or null while it runs: written by the thread, read by the detector. */
    private volatile Object blockedIn;
    volatile boolean finished;

    KernelThread(LaunchMonitor monitor, Dim3 blockIdx, Dim3 threadIdx) {
        this.monitor = monitor;
        this.blockIdx = blockIdx;
        this.threadIdx = threadIdx;
    }

    void runsOn(Thread t) {
        thread = t;
    }

    @Override
    public void parking(Object site) {
        monitor.checkAborted();
        blockedIn = site;
    }

    /** Woken: it may park again in the same wait (a timed look at its clock), so it still counts as blocked. */
    @Override
    public void unparked() {
        monitor.checkAborted();
    }

    /** Its wait has ended: it runs again, which is progress for the launch. */
    @Override
    public void waitEnded() {
        blockedIn = null;
        monitor.progressed();
    }

    @Override
    public Thread thread() {
        return thread;
    }

    @Override
    public boolean isGone() {
        return finished;
    }

    @Override
    public String stalledIn() {
        Object site = blockedIn;
        return site == null ? null : WaitSite.describe(site);
    }

    @Override
    public Throwable fault() {
        return null;
    }

    /** A kernel thread always finishes through the launch's finally block: nothing to do on its behalf. */
    @Override
    public void abandon() {
    }

    @Override
    public String name() {
        return "block " + blockIdx + " thread " + threadIdx;
    }
}
