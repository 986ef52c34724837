package dev.jpipeline.internal;

import java.lang.foreign.MemorySegment;

/**
 * The join protocol of a shared region's group (see {@link RegionLayout}): members take ranks by CAS on their slot's
 * pid, and a member is live while a process with its pid and start time lives.
 *
 * <pre>
 * join(size, rank), repeated until it returns or throws:
 *   group size 0                 : CAS it to size (the first member fixes it)
 *   group size s != size, or the rank held by a dead process (a crash):
 *                                  a live member -> refused, naming the live members (a member's death breaks
 *                                  its group: the survivors must leave first); none -> a new group: CAS the
 *                                  epoch, free the dead slots, clear the sync arrivals the old group left, CAS
 *                                  the size to size
 *   slot free                    : claim it (RegionLayout.claim), in the epoch read before (else free it again)
 *   slot held by this process    : refused (one rank per (process, join))
 *   slot held by a live process  : refused, naming the pid
 * A group that lost a member is broken (RegionGroup bumps the epoch): its members' syncs fail from then on.
 * Every step is a CAS on a word that only moves forward or is re-read, so racing joiners in several processes each
 * end with a distinct rank or a refusal.
 * </pre>
 */
public final class RegionMembers {

    private RegionMembers() {
    }

    /**
     * Joins {@code region}'s group (checked arguments): see the class comment.
     *
     * @return the group's epoch that this member joined
     */
    public static long join(MemorySegment region, String what, int groupSize, int rank) {
        ProcessIdentity me = ProcessIdentity.CURRENT;
        for (;;) {
            int size = RegionLayout.groupSize(region);
            if (size == 0) {
                RegionLayout.casGroupSize(region, 0, groupSize);
                continue;
            }
            if (size < 0 || size > RegionLayout.SLOTS) {
                throw new IllegalArgumentException(what + " has a corrupted header: group size " + size);
            }
            long epoch = RegionLayout.epoch(region);
            String live = liveMembers(region, size);
            ProcessIdentity holder = size == groupSize ? RegionLayout.member(region, rank) : null;
            boolean staleHolder = holder != null && !holder.equals(me) && !holder.isAlive();
            if (size != groupSize || staleHolder) {
                if (!live.isEmpty()) {
                    throw size != groupSize
                        ? new IllegalArgumentException(what + " is owned by a live group of " + size + " members ("
                            + live + "); asked to join a group of " + groupSize)
                        : new IllegalStateException("rank " + rank + " of " + what + " was held by " + holder
                            + ", which died: its group is broken, and its live members (" + live + ") must leave "
                            + "before a new group forms");
                }
                newGroup(region, epoch, size, groupSize);       // every member died or left: a new group forms
                continue;
            }
            if (holder == null) {
                if (RegionLayout.claim(region, rank, null, me) && RegionLayout.epoch(region) == epoch) {
                    return epoch;
                }
                RegionLayout.release(region, rank, me);         // a new group formed meanwhile: join it afresh
            } else if (holder.equals(me)) {
                throw new IllegalStateException("rank " + rank + " of " + what + " is already joined by this process "
                    + "(" + me + ")");
            } else {
                throw new IllegalStateException("rank " + rank + " of " + what + " is taken by live " + holder);
            }
        }
    }

    /** Every member of epoch {@code epoch} died or left: frees their slots and clears their syncs' arrivals. */
    private static void newGroup(MemorySegment region, long epoch, int size, int groupSize) {
        if (!RegionLayout.casEpoch(region, epoch, epoch + 1)) {
            return;                                 // another joiner formed it
        }
        for (int r = 0; r < RegionLayout.SLOTS; r++) {
            ProcessIdentity stale = RegionLayout.member(region, r);
            if (stale != null && !stale.isAlive()) {
                RegionLayout.claim(region, r, stale, new ProcessIdentity(0, 0));
            }
        }
        RegionLayout.INT.setVolatile(region, RegionLayout.SYNC_ARRIVED_AT, 0);
        RegionLayout.casGroupSize(region, size, groupSize);
    }

    /**
     * The group of {@code epoch} has lost a member ({@code RegionGroup} found it dead or gone): marks it broken, so
     * that every member's next sync fails rather than counting arrivals of a group that can never complete.
     */
    static void broken(MemorySegment region, long epoch) {
        if (RegionLayout.casEpoch(region, epoch, epoch + 1)) {
            RegionLayout.INT.setVolatile(region, RegionLayout.SYNC_ARRIVED_AT, 0);
        }
    }

    /** Leaves rank {@code rank}, if this process holds it. */
    public static void leave(MemorySegment region, int rank) {
        RegionLayout.release(region, rank, ProcessIdentity.CURRENT);
    }

    /** The live members of a group of {@code size}, described; empty when none lives. */
    static String liveMembers(MemorySegment region, int size) {
        StringBuilder b = new StringBuilder();
        for (int r = 0; r < size; r++) {
            ProcessIdentity m = RegionLayout.member(region, r);
            if (m != null && m.isAlive()) {
                b.append(b.isEmpty() ? "" : ", ").append("rank ").append(r).append(": ").append(m);
            }
        }
        return b.toString();
    }

    /** Each rank's member and whether it lives, one line each. */
    public static String describe(MemorySegment region) {
        int size = RegionLayout.groupSize(region);
        if (size <= 0 || size > RegionLayout.SLOTS) {
            return "no group";
        }
        StringBuilder b = new StringBuilder("group of " + size + " (epoch " + RegionLayout.epoch(region) + ")");
        for (int r = 0; r < size; r++) {
            ProcessIdentity m = RegionLayout.member(region, r);
            b.append("\n  rank ").append(r).append(": ")
                .append(m == null ? "free" : m + (m.isAlive() ? ", alive" : ", dead"));
        }
        return b.toString();
    }
}
