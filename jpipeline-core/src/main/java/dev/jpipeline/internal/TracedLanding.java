package dev.jpipeline.internal;

import dev.jpipeline.internal.copy.CopyLanding;
import dev.jpipeline.internal.trace.TraceLane;

/**
 * The landing of a traced handle's copies into one stage: records the copy on the handle's trace lane, then
 * lands it on its target (the stage's barrier). One per traced handle and stage, reused batch after batch.
 *
 * <p>The owner sets the batch and its first copy's start time before it submits the copy (the engine's queue
 * publishes them to the worker); a batch's copies all land before the stage can be acquired again, so a worker
 * never reads the next batch's values.
 */
final class TracedLanding implements CopyLanding {

    private final TraceLane trace;
    private final CopyLanding target;
    private final int stage;
    private long batch = -1;
    private long start;

    TracedLanding(TraceLane trace, CopyLanding target, int stage) {
        this.trace = trace;
        this.target = target;
        this.stage = stage;
    }

    /** Owner, before each copy: the batch it belongs to, and when its first copy was issued. */
    void batch(long batch, long start) {
        if (batch != this.batch) {
            this.batch = batch;
            this.start = start;
        }
    }

    @Override
    public void copyHandedOff() {
        target.copyHandedOff();
    }

    @Override
    public void copyLanded(Throwable failure) {
        try {
            trace.copyLanded(start, stage, batch);
        } finally {
            target.copyLanded(failure);     // the stage must complete even if tracing failed
        }
    }
}
