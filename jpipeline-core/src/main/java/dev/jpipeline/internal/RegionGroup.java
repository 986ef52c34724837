package dev.jpipeline.internal;

import dev.jpipeline.Group;
import dev.jpipeline.internal.process.ProcessIdentity;
import dev.jpipeline.internal.process.ProcessWaiting;
import dev.jpipeline.internal.wait.Deadlines;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A group whose members are (process, thread) pairs joined by rank through a shared region: {@code size()} and
 * {@code threadRank()} are fixed at the join, and {@code sync()} waits for every member of every process.
 *
 * <pre>
 * sync (a sense-counting barrier on two words of the region's header):
 *   g = generation; if arrivals.getAndAdd(1) + 1 == size: arrivals = 0, then generation = g + 1 (release), wake
 *   all; else wait (ProcessWaiting) until generation != g.
 * The generation is read before the arrival: it can move only once every member, this one included, has arrived,
 * so the value read is this sync's. The last arrival resets the count before it publishes the next generation, so
 * an arrival at the next sync (which needs the new generation first) never meets a stale count.
 * While it waits, a member looks every CHECK_NANOS for members that died (RegionLayout's slots): their absence
 * makes the sync impossible, so it marks the group broken (bumps the epoch, clears the arrivals) and throws an
 * IllegalStateException naming the rank and the pid; every other member's next look, or next sync, fails too. A
 * member that leaves while others live breaks the group itself (RegionMembers.leave), naming its rank; a free
 * slot is a member that has not joined yet, which the sync waits for; this member's own slot found free (or
 * another's) means that it left (its region was closed by another thread), and the sync fails naming it.
 * Syncs under way are counted per mapping (syncing), so that closing the mapping waits for them to end
 * instead of unmapping memory that a sleeper's futex call holds or that its next look would read.
 * </pre>
 */
public final class RegionGroup implements Group {

    /** How often a waiting member looks for dead ones: a crash is reported within about this long. */
    static final long CHECK_NANOS = 100_000_000;

    private final MemorySegment region;
    private final String what;
    private final int size;
    private final int rank;
    /** The group's epoch this member joined: a sync of a later epoch (the group broke) fails. */
    private final long epoch;
    /** The syncs under way in this process on the mapping {@link #region} is of (SharedRegion.close waits). */
    private final AtomicInteger syncing;

    /**
     * @param what    how to name the region in messages; {@code epoch} the epoch joined
     * @param syncing the count of syncs under way on the mapping, shared by its groups
     */
    public RegionGroup(MemorySegment region, String what, int size, int rank, long epoch, AtomicInteger syncing) {
        this.region = region;
        this.what = what;
        this.size = size;
        this.rank = rank;
        this.epoch = epoch;
        this.syncing = syncing;
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    public int threadRank() {
        return rank;
    }

    /**
     * Waits until every member of the group, in every process, has called it.
     *
     * @throws IllegalStateException when a member died or left before arriving (naming it), or the region's group
     *                               changed under this member
     */
    @Override
    public void sync() {
        syncing.incrementAndGet();
        try {
            syncOnce();
        } catch (InternalError fault) {
            throw RegionFaults.lost(fault, "sync of rank " + rank + " of " + what, null, region.byteSize());
        } finally {
            syncing.decrementAndGet();
        }
    }

    private void syncOnce() {
        checkEpoch();
        int generation = (int) RegionLayout.INT.getVolatile(region, RegionLayout.SYNC_GENERATION_AT);
        int arrived = (int) RegionLayout.INT.getAndAdd(region, RegionLayout.SYNC_ARRIVED_AT, 1) + 1;
        if (arrived == size) {
            RegionLayout.INT.setVolatile(region, RegionLayout.SYNC_ARRIVED_AT, 0);
            RegionLayout.INT.setRelease(region, RegionLayout.SYNC_GENERATION_AT, generation + 1);
            ProcessWaiting.wakeAll(region, RegionLayout.SYNC_GENERATION_AT);
            return;
        }
        if (arrived > size || arrived < 1) {
            throw new IllegalStateException(what + ": " + arrived + " arrivals at a sync of a group of " + size
                + " (a corrupted region, or members of another group)");
        }
        ProcessWaiting.await(region, RegionLayout.SYNC_GENERATION_AT, g -> g != generation, Deadlines.NO_DEADLINE,
            false, CHECK_NANOS, this::checkMembers);
    }

    /** Throws when the group this member joined has broken (a member died or left, seen by any member). */
    private void checkEpoch() {
        long now = RegionLayout.epoch(region);
        if (now != epoch) {
            int left = (int) RegionLayout.INT.getVolatile(region, RegionLayout.LEFT_RANK_AT);
            String dead = RegionMembers.deadMembers(region, size);     // slots are freed only by a new group
            // both causes where both are known: a survivor that heard of a death first and left is not the cause
            String cause = (dead.isEmpty() ? "" : "a member died (" + dead + ")")
                + (left > 0 && left <= size ? (dead.isEmpty() ? "" : ", and ") + "rank " + (left - 1)
                + " left the group" : "");
            throw new IllegalStateException(what + ": the group that rank " + rank + " joined (epoch " + epoch
                + ") has broken: " + (cause.isEmpty() ? "a member died or left" : cause)
                + " (the region is at epoch " + now + "); leave, and join anew");
        }
    }

    /**
     * Throws when a member of the group died (marking the group broken for every member), or the group broke (a
     * member left): the sync it waits for can never complete.
     */
    private void checkMembers() {
        checkEpoch();
        if (RegionLayout.groupSize(region) != size) {
            throw new IllegalStateException(what + ": the group changed under rank " + rank + " (size "
                + RegionLayout.groupSize(region) + ", joined as " + size + ")");
        }
        if (!ProcessIdentity.CURRENT.equals(RegionLayout.member(region, rank))) {
            throw new IllegalStateException(what + ": rank " + rank + " left the group while it waited in a sync (its "
                + "region was closed), so the sync can never complete");
        }
        for (int r = 0; r < size; r++) {
            ProcessIdentity member = RegionLayout.member(region, r);
            if (member != null && !member.isAlive()) {
                RegionMembers.broken(region, epoch);
                throw new IllegalStateException(what + ": rank " + r + " (" + member + ") died, so the group's sync "
                    + "can never complete (rank " + rank + " waits in it)");
            }
        }
    }

    @Override
    public String toString() {
        return "rank " + rank + " of " + size + " in " + what;
    }
}
