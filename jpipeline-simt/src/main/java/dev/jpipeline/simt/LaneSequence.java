package dev.jpipeline.simt;

import dev.jpipeline.internal.BatchSequence;

/**
 * One lane's view of its warp's batch sequence: what it perceives (its own commits) and what it waits for in the
 * actual, warp-shared sequence. Confined to the lane's thread; a strand resets it for each thread it runs.
 */
final class LaneSequence implements BatchSequence {

    private WarpState warp;
    private int epoch;
    private int commitsInEpoch;
    private boolean diverged;
    private long perceived;
    private long lastActual = -1;
    private long waitedThrough = -1;
    private long lastCoverage;

    /** Starts a new lane of {@code warp}: nothing committed, nothing waited for. */
    void reset(WarpState warp) {
        this.warp = warp;
        this.epoch = warp.epoch();
        this.commitsInEpoch = 0;
        this.diverged = false;
        this.perceived = 0;
        this.lastActual = -1;
        this.waitedThrough = -1;
        this.lastCoverage = 0;
    }

    void diverge() {
        syncEpoch();
        diverged = true;
    }

    private void syncEpoch() {
        int current = warp.epoch();
        if (current != epoch) {
            epoch = current;
            commitsInEpoch = 0;
            diverged = false;
        }
    }

    @Override
    public long commit() {
        syncEpoch();
        long index = diverged ? warp.divergedCommit() : warp.convergedCommit(commitsInEpoch++);
        perceived++;
        lastActual = index;
        return index;
    }

    @Override
    public void waitThrough(long target) {
        lastCoverage = Math.max(0, target - waitedThrough);
        waitedThrough = Math.max(waitedThrough, target);
    }

    @Override
    public long latest() {
        return warp.latest();
    }

    /** This lane's commits so far: its perceived sequence is {0 .. perceived-1}. */
    long perceived() {
        return perceived;
    }

    /** The actual index of this lane's latest commit, or -1. */
    long lastActual() {
        return lastActual;
    }

    /** How many batches of the actual sequence this lane's latest wait newly covered. */
    long lastCoverage() {
        return lastCoverage;
    }
}
