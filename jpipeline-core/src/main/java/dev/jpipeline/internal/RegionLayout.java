package dev.jpipeline.internal;

import dev.jpipeline.internal.process.MappedAtomics;
import dev.jpipeline.internal.process.ProcessIdentity;
import dev.jpipeline.internal.process.ProcessWaiting;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.charset.StandardCharsets;

/**
 * The layout of a shared region's header, version 1, and its checks. Every number read from a region is checked
 * against the file's size and this layout before use, so a corrupted or hostile file gets an exception, never an
 * access outside the region.
 *
 * <pre>
 * All fields in native byte order (the processes of a region share one machine), at these byte offsets:
 *   0  magic           8 bytes "JPIPEREG"
 *   8  version         int, 1
 *  12  header bytes    int, 4096: the data starts here
 *  16  region bytes    long: the file's size
 *  24  member slots    int, 63
 *  28  group size      int: 0 until the first member joins (set with a CAS), then the size every member joined with
 *  32  epoch           long: bumped (CAS) when a new group forms over a crashed one's stale members
 *  40  sync arrivals   int: members arrived at the group's current sync (RegionGroup)
 *  44  left rank       int: 1 + the rank whose leave broke the group last (0: none), for the survivors' message
 *  48  sync generation a ProcessWaiting wait word (8 bytes): the group's completed syncs
 *  56  formed at       long: the epoch at which the current group formed (RegionMembers.newGroup); 0 at first
 *  64  member slot i at 64 + 64 i: pid long @0 (0: free; claimed with a CAS), start millis long @8, came long @16
 *                      (1 + the epoch at which rank i last came to the group: joined it, or was told that it had
 *                      lost a member; a value above "formed at" means it came to the current group), pid namespace
 *                      long @24 (the inode of the member's /proc/self/ns/pid, 0 unknown), then reserved
 * Files written before "formed at", "came" and the namespace existed hold 0 there, which reads as: formed at epoch
 * 0, no rank came but those whose slots are held, namespaces unknown (not compared).
 * Cross-process atomics: aligned long and int CASes on the mapped file (VarHandles over the segment), which are
 * atomic between processes on the architectures Java runs on (x86-64, AArch64).
 * </pre>
 */
public final class RegionLayout {

    static final byte[] MAGIC = "JPIPEREG".getBytes(StandardCharsets.US_ASCII);
    /** The magic as one native-order long: stored last, in one write. */
    private static final long MAGIC_WORD = java.nio.ByteBuffer.wrap(MAGIC).order(java.nio.ByteOrder.nativeOrder())
        .getLong();
    public static final int VERSION = 1;
    public static final int HEADER_BYTES = 4096;
    static final long VERSION_AT = 8;
    static final long HEADER_BYTES_AT = 12;
    static final long REGION_BYTES_AT = 16;
    static final long SLOTS_AT = 24;
    static final long GROUP_SIZE_AT = 28;
    static final long EPOCH_AT = 32;
    static final long SYNC_ARRIVED_AT = 40;
    static final long LEFT_RANK_AT = 44;
    static final long SYNC_GENERATION_AT = 48;
    static final long FORMED_AT = 56;
    static final long CAME_IN_SLOT = 16;
    static final long NAMESPACE_IN_SLOT = 24;
    static final long MEMBERS_AT = 64;
    static final int SLOT_BYTES = 64;
    /** Member slots: as many as fit in the header. */
    public static final int SLOTS = (HEADER_BYTES - (int) MEMBERS_AT) / SLOT_BYTES;

    static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();

    private RegionLayout() {
    }

    /**
     * Writes a fresh header into {@code region} (all zero but for these fields), the magic last: an opener that
     * sees the magic sees the rest (SharedRegion.open waits for it).
     */
    public static void format(MemorySegment region) {
        region.set(ValueLayout.JAVA_INT, VERSION_AT, VERSION);
        region.set(ValueLayout.JAVA_INT, HEADER_BYTES_AT, HEADER_BYTES);
        region.set(ValueLayout.JAVA_LONG, REGION_BYTES_AT, region.byteSize());
        region.set(ValueLayout.JAVA_INT, SLOTS_AT, SLOTS);
        LONG.setRelease(region, 0L, MAGIC_WORD);
    }

    /**
     * Checks a mapped region's header against the file it came from.
     *
     * @param what how to name the file in messages
     * @throws IllegalArgumentException naming the file and the rule broken: not a jpipeline region (no magic),
     *                                  another version, a size that does not match the file, a truncated file, a
     *                                  header that does not fit
     */
    public static void check(MemorySegment region, String what) {
        if (region.byteSize() < HEADER_BYTES) {
            throw new IllegalArgumentException(what + " is not a jpipeline region: it has " + region.byteSize()
                + " bytes, fewer than a region's " + HEADER_BYTES + "-byte header (a truncated file?)");
        }
        byte[] magic = region.asSlice(0, MAGIC.length).toArray(ValueLayout.JAVA_BYTE);
        if (!java.util.Arrays.equals(magic, MAGIC)) {
            throw new IllegalArgumentException(what + " is not a jpipeline region: it does not start with the magic "
                + "\"JPIPEREG\"");
        }
        int version = region.get(ValueLayout.JAVA_INT, VERSION_AT);
        if (version != VERSION) {
            throw new IllegalArgumentException(what + " is a jpipeline region of layout version " + version
                + "; this build reads version " + VERSION);
        }
        int headerBytes = region.get(ValueLayout.JAVA_INT, HEADER_BYTES_AT);
        long regionBytes = region.get(ValueLayout.JAVA_LONG, REGION_BYTES_AT);
        int slots = region.get(ValueLayout.JAVA_INT, SLOTS_AT);
        if (headerBytes != HEADER_BYTES || slots != SLOTS) {
            throw new IllegalArgumentException(what + " has a corrupted header: " + headerBytes + " header bytes and "
                + slots + " member slots, expected " + HEADER_BYTES + " and " + SLOTS);
        }
        if (regionBytes != region.byteSize()) {
            throw new IllegalArgumentException(what + " has " + region.byteSize() + " bytes but its header says "
                + regionBytes + (region.byteSize() < regionBytes ? " (a truncated file?)" : ""));
        }
        int groupSize = groupSize(region);
        if (groupSize < 0 || groupSize > SLOTS) {
            throw new IllegalArgumentException(what + " has a corrupted header: group size " + groupSize + ", "
                + "expected 0 to " + SLOTS);
        }
    }

    static int groupSize(MemorySegment region) {
        return (int) INT.getVolatile(region, GROUP_SIZE_AT);
    }

    static boolean casGroupSize(MemorySegment region, int expected, int size) {
        return MappedAtomics.casInt(region, GROUP_SIZE_AT, expected, size);
    }

    static long slotAt(int rank) {
        return MEMBERS_AT + (long) rank * SLOT_BYTES;
    }

    /** The member in slot {@code rank}, or null when it is free. Start time read after the pid (see claim). */
    static ProcessIdentity member(MemorySegment region, int rank) {
        long pid = (long) LONG.getVolatile(region, slotAt(rank));
        if (pid == 0) {
            return null;
        }
        return new ProcessIdentity(pid, (long) LONG.getVolatile(region, slotAt(rank) + 8));
    }

    /** The pid namespace (inode, 0 unknown) recorded with the member in slot {@code rank}; read after its pid. */
    static long namespace(MemorySegment region, int rank) {
        return (long) LONG.getVolatile(region, slotAt(rank) + NAMESPACE_IN_SLOT);
    }

    /** Whether rank {@code rank} came to the group that formed at epoch {@code formed}: its slot is held, or marked. */
    static boolean came(MemorySegment region, int rank, long formed) {
        return (long) LONG.getVolatile(region, slotAt(rank)) != 0
            || (long) LONG.getVolatile(region, slotAt(rank) + CAME_IN_SLOT) > formed;
    }

    /** Records that rank {@code rank} came to the group in epoch {@code epoch}. */
    static void markCame(MemorySegment region, int rank, long epoch) {
        LONG.setVolatile(region, slotAt(rank) + CAME_IN_SLOT, epoch + 1);
    }

    /** Forgets that rank {@code rank} came (it left a group that had not filled, with nobody else in it). */
    static void unmarkCame(MemorySegment region, int rank) {
        LONG.setVolatile(region, slotAt(rank) + CAME_IN_SLOT, 0L);
    }

    /** The epoch at which the current group formed. */
    static long formed(MemorySegment region) {
        return (long) LONG.getVolatile(region, FORMED_AT);
    }

    static void setFormed(MemorySegment region, long epoch) {
        LONG.setVolatile(region, FORMED_AT, epoch);
    }

    /**
     * Claims slot {@code rank} for {@code me} if it holds {@code expected} (null: free). The start time and the
     * pid namespace are written first, then the pid with a CAS, and a reader reads the pid first: a reader that
     * sees the new pid sees its start time and namespace too (volatile order). A stale member's start time is overwritten before the CAS that replaces its
     * pid; a reader between the two may see the old pid with the new start time, which names no live process: it
     * takes the member for dead, which it is.
     */
    static boolean claim(MemorySegment region, int rank, ProcessIdentity expected, ProcessIdentity me) {
        long at = slotAt(rank);
        long oldPid = expected == null ? 0 : expected.pid();
        if ((long) LONG.getVolatile(region, at) != oldPid) {
            return false;
        }
        LONG.setVolatile(region, at + 8, me.startMillis());
        LONG.setVolatile(region, at + NAMESPACE_IN_SLOT, me.pid() == 0 ? 0L : ProcessIdentity.PID_NAMESPACE);
        return MappedAtomics.casLong(region, at, oldPid, me.pid());
    }

    /** Frees slot {@code rank} if {@code me} holds it. */
    static boolean release(MemorySegment region, int rank, ProcessIdentity me) {
        return MappedAtomics.casLong(region, slotAt(rank), me.pid(), 0L);
    }

    static long epoch(MemorySegment region) {
        return (long) LONG.getVolatile(region, EPOCH_AT);
    }

    static boolean casEpoch(MemorySegment region, long expected, long next) {
        return MappedAtomics.casLong(region, EPOCH_AT, expected, next);
    }
}
