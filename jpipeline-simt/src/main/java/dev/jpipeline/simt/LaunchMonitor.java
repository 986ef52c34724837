package dev.jpipeline.simt;

import dev.jpipeline.internal.HangDetector;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Watches one kernel launch: which threads live, which are parked in a jpipeline wait, and whether anything is
 * still moving.
 *
 * <pre>
 * The launch's started CUDA threads are the participants of the core's HangDetector (the one hang detector): the
 * launch is hung when every live thread is parked in a jpipeline wait (pipeline, barrier, __syncthreads, __syncwarp,
 * grid sync), no wait has ended, no thread has started and no copy is in flight for half the patience (a thread
 * woken only to look at its clock parks again without ending its wait, so it is no progress). A block's unstarted
 * threads need no watching: its scheduler starts one whenever the turn is free. The launching thread asks the
 * detector on each tick of its own wait; on a hang (or on a thread's failure) it aborts the launch: every thread
 * that parks from then on, or wakes, unwinds with KernelAbortedException (the block schedulers wake the parked ones).
 * </pre>
 */
final class LaunchMonitor {

    private final AtomicInteger live = new AtomicInteger();
    /** Counts waits that ended and threads that started: the detector's progress signature. */
    private final AtomicLong progress = new AtomicLong();
    private final HangDetector detector;
    /** Set once when the launch is aborted: read by every park of the launch's threads. */
    private volatile String abortReason;

    LaunchMonitor(long patienceNanos, String launch) {
        this.detector = new HangDetector(patienceNanos, "kernel launch " + launch + " hung: every live thread is "
            + "blocked with nothing left to wake it", progress::get, () -> "");
    }

    void started(KernelThread kt) {
        live.incrementAndGet();
        progress.incrementAndGet();
        detector.register(kt);
    }

    void finished() {
        live.decrementAndGet();
    }

    void progressed() {
        progress.incrementAndGet();
    }

    int live() {
        return live.get();
    }

    /** The hang report, once the launch has been stuck long enough; else null. */
    String hang() {
        return detector.check();
    }

    void checkAborted() {
        String reason = abortReason;
        if (reason != null) {
            throw new KernelAbortedException(reason);
        }
    }

    boolean aborted() {
        return abortReason != null;
    }

    /** Aborts the launch: every thread that parks or wakes from now on unwinds. */
    void abort(String reason) {
        abortReason = reason;
    }
}
