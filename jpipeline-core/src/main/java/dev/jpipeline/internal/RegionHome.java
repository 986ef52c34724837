package dev.jpipeline.internal;

import dev.jpipeline.internal.wait.PeriodicCheck;
import dev.jpipeline.internal.wait.StallWatch;
import java.lang.foreign.MemorySegment;

/**
 * A ring in a shared region (system scope across processes, {@link RegionStages}): its barriers, owners and ledger
 * are the region's, one group per member, each barrier over a {@link SharedWord}; each process that made handles on
 * it has a ring over the same bytes, which writes nothing until a handle acts. It has no hang detector (it cannot
 * see the threads of other processes): its waiters look for dead processes instead ({@link RegionReaper}), every
 * SharedWord.CHECK_NANOS of a stalled wait (its stall watch, in the one wait routine) and of a run of timed waits
 * that give up.
 */
final class RegionHome extends RingHome {

    /** The region's state of the pipeline, formatted by its make and checked by the caller. */
    final RegionStages region;
    /** This process's handles on the area, so that a waiter can leave for one whose thread ended. */
    final RegionLocals local;
    /** Set by attach, once, before any handle exists (the ring's constructor publishes it with the ring). */
    private RegionReaper reaper;

    /**
     * Looks for dead processes every CHECK_NANOS of a stalled wait, and of a run of polls: the stall watch of every
     * handle's wait. The look may throw (a corrupted word, a dead process's failed batch), which ends the wait.
     */
    private final StallWatch reaping = new PeriodicCheck(SharedWord.CHECK_NANOS, this::reap);

    RegionHome(RegionStages region, RegionLocals local, int stages) {
        super(StageSide.ofSolos(words(region, stages, true), region.leftFrom(true)),
            StageSide.ofSolos(words(region, stages, false), region.leftFrom(false)), region.owners());
        this.region = region;
        this.local = local;
    }

    /** One SharedWord barrier per member and stage, [member][stage], over the region's formatted cells. */
    private static PhaseBarrier[][] words(RegionStages region, int stages, boolean produced) {
        int members = produced ? region.producers() : region.consumers();
        PhaseBarrier[][] words = new PhaseBarrier[members][stages];
        for (int m = 0; m < members; m++) {
            for (int s = 0; s < stages; s++) {
                words[m][s] = new PhaseBarrier(produced
                    ? new SharedWord(region.area, region.producedCell(m, s), region.record(m, s))
                    : new SharedWord(region.area, region.consumedCell(m, s), -1));
            }
        }
        return words;
    }

    @Override
    SideLedger ledger(int producers, int consumers) {
        return new SideLedger(producers, consumers, region.ledger());
    }

    @Override
    void attach(StageRing ring) {
        reaper = new RegionReaper(ring, region, local);
    }

    /** Leaves for the ranks whose process died or whose thread ended (RegionReaper). */
    void reap() {
        reaper.reap();
    }

    /** Leaves for rank {@code rank}, which will never act (RegionReaper.leaveFor). */
    void leaveFor(int rank) {
        reaper.leaveFor(rank, "rank " + rank + " (" + region.maker(rank) + ")");
    }

    @Override
    void joined(StageHandle handle) {
        local.handles.add(handle);
        EndedThreadWatch.watching();        // after the listing: a watch that is stopping sees it, or one starts
    }

    @Override
    void left(StageHandle handle) {
        local.handles.remove(handle);
    }

    @Override
    StallWatch stallWatch(StageHandle handle) {
        return reaping;
    }

    @Override
    HandleEvents cursors(int rank) {
        return new RegionCursors(region, rank, local.landingsIn(region.area.scope()), produced.stages());
    }

    @Override
    Throwable missingShare(int stage, long round) {
        return region.producerDeaths() == 0 ? null : reaper.missingShare(stage, round);
    }

    /** A region's slot says why a rank left: nothing is kept here. */
    @Override
    void departed(String note) {
    }

    @Override
    String departures() {
        return reaper.deaths();
    }

    @Override
    boolean mappedIn(MemorySegment.Scope scope) {
        return region.area.scope().equals(scope);
    }

    @Override
    RuntimeException faulted(InternalError fault, String handle) {
        return RegionFaults.lost(fault, handle, null, region.area.byteSize());
    }
}
