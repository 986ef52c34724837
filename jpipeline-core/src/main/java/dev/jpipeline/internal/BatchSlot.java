package dev.jpipeline.internal;

import dev.jpipeline.internal.copy.CopyLanding;
import java.util.ArrayList;
import java.util.List;

/**
 * One outstanding batch of a thread-scope pipeline that has asynchronous copies: a {@link PhaseBarrier} that
 * expects the owner's commit, to which the batch's copies are tied like a stage's. The owner's wait for the batch
 * is a wait for that phase, so thread scope gets the same deadlines, interrupts and park listener as any wait.
 *
 * <pre>
 *   each copy of batch b        : prepare(b) (first: batch = b, round = barrier.phase())
 *   each copy handed off        : async = true, inFlight++, then barrier.tieCopy() (by the copy engine)
 *   commit                      : barrier.arrive(1): the phase completes when every copy has landed
 *   wait                        : await(barrier, round); failureOf(round)
 *   producerCommit(pipe, bar)   : while copies are in flight, bar.tieCopy() and remember bar; when the last copy
 *                                 in flight lands, bar.copyLanded(first failure)   (cp.async.mbarrier.arrive)
 * </pre>
 * A slot is reused for a later batch only after its batch was waited for, so its phase has completed.
 */
final class BatchSlot implements CopyLanding {

    final PhaseBarrier barrier = new PhaseBarrier(1);
    /** Owner-confined: the batch the slot stands for, its phase, and whether it has asynchronous copies. */
    long batch = -1;
    int round;
    boolean async;
    /** Guarded by this: copies in flight, barriers tied to them, and the first failure among them. */
    private int inFlight;
    private List<PhaseBarrier> ties;
    private Throwable firstFailure;

    /** Owner, before each copy of batch {@code b}: the slot now stands for that batch. */
    void prepare(long b) {
        if (batch != b) {
            batch = b;
            round = barrier.phase();
            async = false;
        }
    }

    /** Owner (inside the engine's decision): a copy of the prepared batch goes to a worker. */
    @Override
    public void copyHandedOff() {
        async = true;
        synchronized (this) {
            if (inFlight == 0) {
                firstFailure = null;
            }
            inFlight++;
        }
    }

    /** Owner: ties {@code other}'s current phase to the copies of this batch still in flight, if any. */
    void tie(PhaseBarrier other) {
        synchronized (this) {
            if (inFlight == 0) {
                return;
            }
            other.tieCopy();
            if (ties == null) {
                ties = new ArrayList<>(2);
            }
            ties.add(other);
        }
    }

    /** A worker: one of the batch's copies has landed. */
    @Override
    public void copyLanded(Throwable failure) {
        List<PhaseBarrier> drained = null;
        Throwable first;
        synchronized (this) {
            if (failure != null && firstFailure == null) {
                firstFailure = failure;
            }
            first = firstFailure;
            if (--inFlight == 0 && ties != null) {
                drained = ties;
                ties = null;
            }
        }
        try {
            if (drained != null) {
                for (PhaseBarrier b : drained) {
                    b.copyLanded(first);
                }
            }
        } finally {
            barrier.copyLanded(failure);
        }
    }
}
