package dev.jpipeline.internal;

import dev.jpipeline.internal.copy.CopyLanding;
import dev.jpipeline.internal.trace.TraceLane;
import dev.jpipeline.trace.StageOperation;
import java.lang.foreign.MemorySegment;

/**
 * A traced handle's {@link HandleEvents}: records each operation on the handle's {@link TraceLane}, with the time
 * it began and the time it returned, and each copy handed off from its issue to its landing ({@link TracedLanding},
 * one per stage, made at the stage's first copy and reused batch after batch). Owner-confined, as the lane is.
 */
final class TracedEvents extends HandleEvents {

    private final TraceLane lane;
    /** Per stage, the landing that records a copy before it arrives; created at the stage's first copy. */
    private final TracedLanding[] landings;

    TracedEvents(TraceLane lane, int stages) {
        this.lane = lane;
        this.landings = new TracedLanding[stages];
    }

    @Override
    long now() {
        return lane.now();
    }

    @Override
    boolean recordsSpans() {
        return true;
    }

    @Override
    void acquired(int stage, long round, long batch, long start) {
        lane.record(StageOperation.ACQUIRE, start, stage, batch);
    }

    @Override
    void committed(int stage, long batch, long start) {
        lane.record(StageOperation.COMMIT, start, stage, batch);
    }

    @Override
    CopyLanding copying(int stage, long round, long batch, long start, MemorySegment dst, CopyLanding landing) {
        TracedLanding l = landings[stage];
        if (l == null) {
            l = landings[stage] = new TracedLanding(lane, landing, stage);      // the stage's: the same every batch
        }
        l.batch(batch, start);
        return l;
    }

    @Override
    void copied(int stage, long batch, long start) {
        lane.record(StageOperation.COPY, start, stage, batch);
    }

    @Override
    void waited(int stage, long batch, long start) {
        lane.record(StageOperation.WAIT, start, stage, batch);
    }

    @Override
    void released(int stage, long round, long batch, long start) {
        lane.record(StageOperation.RELEASE, start, stage, batch);
    }
}
