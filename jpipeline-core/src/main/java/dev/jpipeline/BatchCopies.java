package dev.jpipeline;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * The asynchronous copies of one batch of a thread-scope pipeline. The batch is complete once it is committed
 * and its copies have landed; the owning thread waits for that in {@code consumerWait} and
 * {@code consumerWaitPrior}. Barriers tied by {@code producerCommit(pipe, barrier)} get their pending arrival
 * as soon as the copies land, committed or not (like {@code cp.async.mbarrier.arrive}).
 */
final class BatchCopies extends PendingCopies {

    /** Spins before the owner parks; a thread-scope wait is usually for a copy that is nearly done. */
    private static final int SPINS = 1 << 9;

    /** A barrier phase waiting for this batch's copies. */
    private record Tie(Barrier barrier, long phase) {
    }

    /** The owner while it is parked waiting for this batch: set before it re-checks, read by landed(). */
    private volatile Thread waiter;
    /** Barrier phases tied to the copies in flight; guarded by this. */
    private List<Tie> ties;

    @Override
    void drained(Throwable failure) {
        List<Tie> tied;
        synchronized (this) {
            tied = ties;
            ties = null;
        }
        if (tied != null) {
            for (Tie tie : tied) {
                tie.barrier().copyLanded(tie.phase(), failure);
            }
        }
    }

    @Override
    void landed(Throwable failure) {
        Thread w = waiter;
        if (w != null) {
            LockSupport.unpark(w);
        }
    }

    /**
     * Ties {@code barrier}'s current phase to this batch's copies, if any are in flight.
     *
     * @return whether a tie was made
     */
    boolean tie(Barrier barrier) {
        synchronized (this) {
            if (!copiesInFlight()) {
                return false;
            }
            if (ties == null) {
                ties = new ArrayList<>(2);
            }
            ties.add(new Tie(barrier, barrier.expectCopy()));
            return true;
        }
    }

    /**
     * Owner: waits (uninterruptibly) until the batch is complete.
     *
     * @return the first copy failure, or null
     */
    Throwable await() {
        int spins = Thread.currentThread().isVirtual() ? 0 : SPINS;     // a virtual thread never holds its carrier
        for (int i = 0; i < spins && inFlight(); i++) {
            Thread.onSpinWait();
        }
        if (inFlight()) {
            boolean interrupted = false;
            waiter = Thread.currentThread();
            try {
                while (inFlight()) {
                    LockSupport.park(this);
                    interrupted |= Thread.interrupted();
                }
            } finally {
                waiter = null;
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }
        return failure();
    }
}
