package dev.jpipeline.internal;

import dev.jpipeline.internal.process.ProcessIdentity;
import java.lang.foreign.MemorySegment;

/**
 * The join protocol of a shared region's group (see {@link RegionLayout}): members take ranks by CAS on their slot's
 * pid, and a member is live while a process with its pid and start time lives.
 *
 * <pre>
 * A group forms at an epoch ("formed at"). A rank came to it when it joined it, or was told that it had lost a
 * member (its slot's "came" mark, or its slot held). The group filled once every rank came.
 * join(size, rank), repeated until it returns or throws:
 *   group size 0                 : CAS it to size (the first member fixes it)
 *   a member in another pid namespace than this process's: refused, naming it (its pid means nothing here, so
 *                                  whether it lives cannot be told)
 *   a member of the group died, and the group has not filled (it died before its peers joined: they are late,
 *   not a new group): refused, naming the dead and the ranks still to come; a joiner of the group's size
 *                                  marks its rank as come (told). Once every rank came and none lives, the group
 *                                  is over (below): so every peer of the dead member is told, and none waits
 *   group size s != size, or a rank of the group held by a dead process (a crash after the group filled):
 *                                  a live member -> refused, naming the live members (a member's death breaks
 *                                  its group: the survivors must leave first; a joiner of the group's size is
 *                                  marked as come); none -> a new group: CAS the epoch, record it as "formed at",
 *                                  free the dead slots, clear the sync arrivals the old group left, CAS the size
 *   slot free                    : claim it (RegionLayout.claim) and mark it come, in the epoch read before (else
 *                                  free it again)
 *   slot held by this process    : refused (one rank per (process, join))
 *   slot held by a live process  : refused, naming the pid
 * A group that lost a member is broken (RegionGroup bumps the epoch when it finds one dead, leave when a member
 * leaves while others live): its members' syncs fail from then on. A free slot in a live group is a member that
 * has not joined yet (members start at their own pace), never one that left. A member that leaves a group that
 * has not filled, with nobody else in it, is forgotten (its mark cleared): it left on purpose, and may come back.
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
            long formed = RegionLayout.formed(region);
            String foreign = foreignMembers(region, size);
            if (!foreign.isEmpty()) {
                throw new IllegalStateException(what + " has members in another pid namespace than this process's ("
                    + "pid:[" + ProcessIdentity.PID_NAMESPACE + "]): " + foreign + ". A region's members must share "
                    + "one pid namespace: a pid of another namespace names no process here, so whether that member "
                    + "lives cannot be told (rank " + rank + " of " + groupSize + " asked to join)");
            }
            String live = liveMembers(region, size);
            ProcessIdentity holder = size == groupSize ? RegionLayout.member(region, rank) : null;
            String dead = deadMembers(region, size);
            String toCome = notCome(region, size, formed);
            if (!dead.isEmpty() && !toCome.isEmpty()) {
                if (size == groupSize) {
                    RegionLayout.markCame(region, rank, epoch);     // this rank has been told
                }
                String still = notCome(region, size, formed);
                throw new IllegalStateException(what + ": its group of " + size + " lost " + dead + " before every "
                    + "member joined, so it can never meet (" + (size == groupSize ? "rank " + rank
                    : "a joiner of a group of " + groupSize) + " asked to join; "
                    + (live.isEmpty() ? "" : "live members: " + live + "; ")
                    + (still.isEmpty() ? "every rank has now been told: a new group forms at the next join once "
                        + "none lives" : "ranks not told yet: " + still + "; a new group forms once each has come "
                        + "and none lives, or delete the region's file") + ")");
            }
            if (size != groupSize || !dead.isEmpty()) {
                if (!live.isEmpty()) {
                    if (size == groupSize) {
                        RegionLayout.markCame(region, rank, epoch);
                    }
                    throw size != groupSize
                        ? new IllegalArgumentException(what + " is owned by a live group of " + size + " members ("
                            + live + "); asked to join a group of " + groupSize)
                        : new IllegalStateException("the group of " + what + " lost " + dead + ": it is broken, and "
                            + "its live members (" + live + ") must leave before a new group forms (rank " + rank
                            + " asked to join)");
                }
                newGroup(region, epoch, size, groupSize);       // every member died or left: a new group forms
                continue;
            }
            if (holder == null) {
                if (RegionLayout.claim(region, rank, null, me) && RegionLayout.epoch(region) == epoch) {
                    RegionLayout.markCame(region, rank, epoch);
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
        RegionLayout.setFormed(region, epoch + 1);  // every "came" mark so far is of an older group
        for (int r = 0; r < RegionLayout.SLOTS; r++) {
            ProcessIdentity stale = RegionLayout.member(region, r);
            if (stale != null && !stale.isAlive()) {
                RegionLayout.claim(region, r, stale, new ProcessIdentity(0, 0));
            }
        }
        RegionLayout.INT.setVolatile(region, RegionLayout.SYNC_ARRIVED_AT, 0);
        RegionLayout.INT.setVolatile(region, RegionLayout.LEFT_RANK_AT, 0);
        RegionLayout.casGroupSize(region, size, groupSize);
    }

    /** The ranks of a group of {@code size} formed at {@code formed} that have not come yet; empty when all have. */
    private static String notCome(MemorySegment region, int size, long formed) {
        StringBuilder b = new StringBuilder();
        for (int r = 0; r < size; r++) {
            if (!RegionLayout.came(region, r, formed)) {
                b.append(b.isEmpty() ? "" : ", ").append(r);
            }
        }
        return b.toString();
    }

    /** The members of a group of {@code size} recorded in another pid namespace than this process's, described. */
    private static String foreignMembers(MemorySegment region, int size) {
        long mine = ProcessIdentity.PID_NAMESPACE;
        StringBuilder b = new StringBuilder();
        for (int r = 0; r < size && mine != 0; r++) {
            ProcessIdentity m = RegionLayout.member(region, r);
            long theirs = RegionLayout.namespace(region, r);
            if (m != null && theirs != 0 && theirs != mine) {
                b.append(b.isEmpty() ? "" : ", ").append("rank ").append(r).append(": ").append(m)
                    .append(" in pid:[").append(theirs).append("]");
            }
        }
        return b.toString();
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

    /**
     * Leaves rank {@code rank}, if this process holds it. If another member of the group lives, the group breaks
     * (its syncs could never complete again), naming this rank.
     */
    public static void leave(MemorySegment region, int rank) {
        long epoch = RegionLayout.epoch(region);
        long formed = RegionLayout.formed(region);
        int size = RegionLayout.groupSize(region);
        boolean filled = size > 0 && size <= RegionLayout.SLOTS && notCome(region, size, formed).isEmpty();
        if (RegionLayout.release(region, rank, ProcessIdentity.CURRENT) && size > 0 && size <= RegionLayout.SLOTS) {
            if (!liveMembers(region, size).isEmpty()) {
                RegionLayout.INT.setVolatile(region, RegionLayout.LEFT_RANK_AT, rank + 1);
                broken(region, epoch);
            } else if (!filled && deadMembers(region, size).isEmpty()) {
                RegionLayout.unmarkCame(region, rank);      // left on purpose before its peers came: may come back
            }
        }
    }

    /** The live members of a group of {@code size}, described; empty when none lives. */
    static String liveMembers(MemorySegment region, int size) {
        return members(region, size, true);
    }

    /** The members of a group of {@code size} whose processes died, described; empty when none did. */
    static String deadMembers(MemorySegment region, int size) {
        return members(region, size, false);
    }

    private static String members(MemorySegment region, int size, boolean alive) {
        StringBuilder b = new StringBuilder();
        for (int r = 0; r < size; r++) {
            ProcessIdentity m = RegionLayout.member(region, r);
            if (m != null && m.isAlive() == alive) {
                b.append(b.isEmpty() ? "" : ", ").append("rank ").append(r).append(": ").append(m)
                    .append(alive ? "" : ", dead");
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
            long ns = m == null ? 0 : RegionLayout.namespace(region, r);
            boolean foreign = ns != 0 && ProcessIdentity.PID_NAMESPACE != 0 && ns != ProcessIdentity.PID_NAMESPACE;
            b.append("\n  rank ").append(r).append(": ")
                .append(m == null ? "free" : m + (foreign ? ", in another pid namespace (pid:[" + ns + "])"
                    : m.isAlive() ? ", alive" : ", dead"));
        }
        return b.toString();
    }
}
