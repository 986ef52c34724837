package dev.jpipeline;

import dev.jpipeline.internal.PhaseBarrier;
import dev.jpipeline.internal.TraceLane;

/**
 * One producer's asynchronous copies into one stage of a shared pipeline, tied to the stage's {@code produced}
 * barrier the way {@code cp.async.mbarrier.arrive} ties copies to an mbarrier: at commit the producer makes its
 * own arrival at once and adds one pending arrival to the current phase ({@link #commit()}); when the copies
 * have landed, whichever thread finished last makes that pending arrival and leaves later phases as they were
 * (arrive-and-drop). So consumers can never see the stage before its data, and the producer's own arrivals stay
 * as they are without copies (which keeps {@code quit()} exact). A failure is recorded in the ring before the
 * arrival, so the consumers' wait reports it.
 */
final class StageCopies extends PendingCopies {

    private final StageRing ring;
    private final int stage;
    private final PhaseBarrier produced;
    /** The owner's trace, or null. */
    private final TraceLane trace;
    /** The round of the open batch: written by the owner before it submits copies (published by the engine). */
    private int round;
    /** When the open batch's first copy was submitted (trace clock), written like round. */
    private long copyStart;

    StageCopies(StageRing ring, int stage, TraceLane trace) {
        this.ring = ring;
        this.stage = stage;
        this.produced = ring.produced[stage];
        this.trace = trace;
    }

    void attach(int round) {
        if (!isOpen() && trace != null) {
            copyStart = trace.now();
        }
        this.round = round;
        attach();
    }

    /** Owner, at commit of the open batch: the pending arrival, the producer's own, then the seal. */
    void commit() {
        produced.expectOneMore();
        produced.arrive(1);
        seal();
    }

    @Override
    void landed(Throwable failure) {
        if (trace != null) {
            trace.copyLanded(copyStart, stage, (long) round * ring.produced.length + stage);
        }
        if (failure != null) {
            ring.recordFailure(stage, round, failure);
        }
        produced.arriveAndDrop();
    }
}
