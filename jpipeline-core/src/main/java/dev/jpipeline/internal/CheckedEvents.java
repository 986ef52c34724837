package dev.jpipeline.internal;

import dev.jpipeline.internal.checked.Interleaver;
import dev.jpipeline.internal.copy.CopyLanding;
import java.lang.foreign.MemorySegment;

/**
 * A checked handle's {@link HandleEvents}: tells the {@link Interleaver} which destinations each stage's round
 * writes (copying) and when a round holds no data any more (freed), so that it can poison what a consumer must not
 * read. A round is freed by the last release of it, or, whoever comes first, by the producer's acquire of the next
 * round of the stage (that release may not have got there yet), before the producer may write the stage again.
 * It also names the protocol's happens-before edges (Interleaver.releases / acquires): a producer's commit of
 * batch b before a consumer's wait that found b complete (the produced side, phase b), and a consumer's release of
 * batch b before the acquire of batch b + stages, which reuses the stage (the consumed side, phase b).
 * It also tells which batches a departing handle will never arrive for, and which batch's arrivals each completed
 * wait needed (a consumer_wait the commits of its batch, a producer_acquire the releases of the stage's previous
 * round), so that the interleaver can tell a wait that completes only because the protocol dropped a departed
 * owner's arrivals, which libcu++ never drops (Interleaver.departs, Interleaver.needs).
 */
final class CheckedEvents extends HandleEvents {

    private final Interleaver interleaver;
    private final StageRing ring;
    /** The operation of the handle's wait that completes next (set by the handle before {@link #waited}). */
    String waitOp = "consumer_wait";

    CheckedEvents(Interleaver interleaver, StageRing ring) {
        this.interleaver = interleaver;
        this.ring = ring;
    }

    @Override
    void acquired(int stage, long round, long batch, long start) {
        if (round > 0) {
            interleaver.needs(ring, false, stage, batch - ring.settings.stageCount(), "producer_acquire");
            interleaver.stageFreed(ring, stage, round - 1);
            interleaver.acquires(ring.consumed, batch - ring.settings.stageCount());
        }
    }

    @Override
    void committed(int stage, long batch, long start) {
        interleaver.releases(ring.produced, batch);
    }

    @Override
    void waited(int stage, long batch, long start) {
        interleaver.needs(ring, true, stage, batch, waitOp);
        interleaver.acquires(ring.produced, batch);
    }

    /** The handle's wait in {@code op} for {@code batch} can never complete: every owner it needs has departed. */
    void abandoned(boolean commits, int stage, long batch, String op) {
        interleaver.abandoned(ring, commits, stage, batch, op);
    }

    @Override
    void departing(Departure how, String who, long nextCommit, long nextRelease) {
        interleaver.departs(ring, who + (how == Departure.QUIT ? " called quit()" : " ended without quit()"),
            nextCommit, nextRelease);
    }

    @Override
    CopyLanding copying(int stage, long round, long batch, long start, MemorySegment dst, CopyLanding landing) {
        interleaver.stageCopy(ring, stage, round, dst);
        return landing;
    }

    @Override
    void released(int stage, long round, long batch, long start) {
        interleaver.releases(ring.consumed, batch);
        if (ring.consumed.isComplete(stage, (int) round)) {
            interleaver.stageFreed(ring, stage, round);     // the last release of the round: nobody reads it now
        }
    }
}
