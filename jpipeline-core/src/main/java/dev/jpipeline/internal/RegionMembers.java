package dev.jpipeline.internal;

import java.lang.foreign.MemorySegment;

/**
 * The join protocol of a shared region's group (see {@link RegionLayout}): members take ranks by CAS on their slot's
 * pid, and a member is live while a process with its pid and start time lives.
 *
 * <pre>
 * join(size, rank), repeated until it returns or throws:
 *   group size 0                 : CAS it to size (the first member fixes it)
 *   group size s != size         : a live member -> refused, naming s and the live members; all dead (a crashed
 *                                  group) -> CAS the epoch, free the dead slots, CAS the size to size
 *   slot free                    : claim it (RegionLayout.claim)
 *   slot held by this process    : refused (one rank per (process, join))
 *   slot held by a live process  : refused, naming the pid
 *   slot held by a dead process  : claim it over the stale member
 * Every step is a CAS on a word that only moves forward or is re-read, so racing joiners in several processes each
 * end with a distinct rank or a refusal.
 * </pre>
 */
public final class RegionMembers {

    private RegionMembers() {
    }

    /** Joins {@code region}'s group (checked arguments): see the class comment. */
    public static void join(MemorySegment region, String what, int groupSize, int rank) {
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
            if (size != groupSize) {
                String live = liveMembers(region, size);
                if (!live.isEmpty()) {
                    throw new IllegalArgumentException(what + " is owned by a live group of " + size + " members ("
                        + live + "); asked to join a group of " + groupSize);
                }
                long epoch = RegionLayout.epoch(region);
                if (RegionLayout.casEpoch(region, epoch, epoch + 1)) {
                    for (int r = 0; r < RegionLayout.SLOTS; r++) {
                        ProcessIdentity stale = RegionLayout.member(region, r);
                        if (stale != null && !stale.isAlive()) {
                            RegionLayout.claim(region, r, stale, new ProcessIdentity(0, 0));
                        }
                    }
                    RegionLayout.casGroupSize(region, size, groupSize);
                }
                continue;
            }
            ProcessIdentity holder = RegionLayout.member(region, rank);
            if (holder == null) {
                if (RegionLayout.claim(region, rank, null, me)) {
                    return;
                }
            } else if (holder.equals(me)) {
                throw new IllegalStateException("rank " + rank + " of " + what + " is already joined by this process "
                    + "(" + me + ")");
            } else if (holder.isAlive()) {
                throw new IllegalStateException("rank " + rank + " of " + what + " is taken by live " + holder);
            } else if (RegionLayout.claim(region, rank, holder, me)) {
                return;                         // a crashed member's rank, taken over
            }
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
