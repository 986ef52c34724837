package dev.jpipeline.simt;

import dev.jpipeline.internal.HangDetector;
import java.util.function.LongSupplier;

/**
 * Watches one kernel launch: which threads live, which are parked in a jpipeline wait, and whether anything is
 * still moving.
 *
 * <pre>
 * The launch's resident blocks are the participants of the core's HangDetector (the one hang detector): a block is
 * stuck while idle, when every thread it started is parked in a jpipeline wait (pipeline, barrier, __syncthreads,
 * __syncwarp, grid sync) and nothing is ready (its unstarted threads need no watching: its scheduler starts one
 * whenever the turn is free). The launch is hung when every resident block is stuck, no wait has ended, no thread
 * or block has started or finished and no copy is in flight for half the patience (a thread woken only to look at
 * its clock parks again without ending its wait, so it is no progress). The launching thread asks the detector on
 * each tick of its own wait; on a hang (or on a thread's failure) it aborts the launch: every thread that parks from
 * then on, or wakes, unwinds with KernelAbortedException (the block schedulers wake the parked ones).
 * </pre>
 */
final class LaunchMonitor {

    private final HangDetector detector;
    /** Set once when the launch is aborted: read by every park of the launch's threads. */
    private volatile String abortReason;

    /** @param progress changes whenever a wait ends or a thread or block starts or finishes */
    LaunchMonitor(long patienceNanos, String launch, LongSupplier progress) {
        this.detector = new HangDetector(patienceNanos, "kernel launch " + launch + " hung: every live thread is "
            + "blocked with nothing left to wake it", progress, () -> "");
    }

    /** A block has become resident. */
    void resident(BlockScheduler block) {
        detector.register(block);
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

    /** Why the launch was aborted, or {@code otherwise} while it is not. */
    String abortReasonOr(String otherwise) {
        String reason = abortReason;
        return reason != null ? reason : otherwise;
    }

    boolean aborted() {
        return abortReason != null;
    }

    /** Aborts the launch: every thread that parks or wakes from now on unwinds. */
    void abort(String reason) {
        abortReason = reason;
    }
}
