package dev.jpipeline.internal;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.jpipeline.internal.process.MappedAtomics;
import dev.jpipeline.internal.process.ProcessIdentity;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.nio.charset.StandardCharsets;

/**
 * The area of a shared region that holds a system-scope pipeline shared state: the proposals of each make, the
 * ranks' places and cursors, and the stage barriers of the pipeline made last, all at fixed offsets from the area's
 * start. Every process that made the pipeline reads and writes the same bytes; this class only computes where
 * things are and checks what it reads.
 *
 * <pre>
 * Layout, version 2 (native byte order; offsets from the area's start, which is 128-byte aligned in the region)
 *   0     magic          long "JPSTATE1": written by the first make's rank 0
 *   8     version        int 2 (VERSION)
 *  12     stages         int     the pipeline made last: its stage count,
 *  16     group size     int       group size,
 *  20     kind           int       StageRing.Kind ordinal,
 *  24     producers      int       producer count,
 *  28     consumers      int       consumer count
 *  32     makes          long    makes published so far (the verdict tag of the last)
 *  40     verdict        int     0: the last make succeeded; 1: it was refused
 *  44     message length int     then the refusal at 256
 *  48     producer deaths long   producers of the pipeline made last that a survivor left for (RegionReaper): while
 *                                it is 0, a consumer need not look for shares of dead producers
 *  64     owners         long    handles of the pipeline made last that have not left (own line)
 * 128     ledger         long    a count partition's SideLedger word (own line)
 * 256     refusal        MESSAGE_BYTES of UTF-8
 * 1280    rank slots     SLOT_BYTES each, for ranks 0 .. group size - 1
 *   then  produced cells: per producer, its stages' SharedWord cells side by side, each producer on lines of its own
 *   then  consumed cells: likewise per consumer
 *   then  left-from rounds: a long per producer and stage, then per consumer and stage
 *   then  failure records: SharedWord.RECORDS_BYTES per producer and stage
 *
 * Rank slot (SLOT_BYTES; the proposing rank writes the proposal, the make's rank 0 the rest when it formats, the
 * handle its cursors)
 *   0  proposal tag  long    the make this proposal is for (makes + 1 when written)
 *   8  kind int, 12 producers int, 16 role int (0 none, 1 producer, 2 consumer), 20 group size int, 24 stages int
 *  32  maker pid long, 40 maker start millis long: the process that made the rank's handle in the pipeline made
 *      last, copied from the proposer (88) when the make formats. Apart from the proposer, so that a make's
 *      proposals never overwrite who holds the previous pipeline's places: a dead maker's place is free whoever
 *      proposes next.
 *  48  state int: 0 none, ACTIVE, QUIT (left through quit), REAPED (its process died; a survivor left for it),
 *      ENDED (its thread ended without quit; its process left for it), CLOSED (its owner closed the region
 *      without quit, and left as quit would)
 *  52  side int: 0 not yet taken (count partition), 1 producer, 2 consumer, 3 both (unified)
 *  56  member int: the rank's number on its side(s)
 *  64  committed long, 72 acquired long (the batch acquired + 1, 0: none), 80 released long: the handle's cursors,
 *      written after each operation, read only once the process died (RegionReaper)
 *  88  proposer pid long, 96 proposer start millis long: the process that wrote the proposal (with it)
 * 104  attach long: the make that formatted the place (its tag) until the rank takes its handle (CAS to -tag);
 *      0 once a later make gave the place up because it was never taken (see RegionRendezvous)
 * 112  copies long: memcpyAsync copies the rank's handle handed to copy workers that have not landed yet (counted
 *      up at hand-off, down after the landing's arrival); they may outlive the handle's quit, and a make waits for
 *      them, since they would land in the next pipeline's stages
 * </pre>
 *
 * The sizes depend on the producer and consumer counts, which a make learns only from the proposals; the area a
 * state needs is computed for the largest case, a unified pipeline ({@link #bytesFor}).
 */
final class RegionStages {

    static final byte[] MAGIC = "JPSTATE1".getBytes(StandardCharsets.US_ASCII);
    static final int VERSION = 2;
    /** The area's start must be aligned to this in the region: its own lines. */
    static final int ALIGNMENT = 128;
    static final int MESSAGE_BYTES = 1024;
    static final int SLOT_BYTES = 128;
    /** Slot states. */
    static final int NONE = 0;
    static final int ACTIVE = 1;
    static final int QUIT = 2;
    static final int REAPED = 3;
    static final int ENDED = 4;
    static final int CLOSED = 5;
    /** Slot sides. */
    static final int UNDECIDED = 0;
    static final int PRODUCER = 1;
    static final int CONSUMER = 2;
    static final int BOTH = 3;

    private static final long VERSION_AT = 8;
    private static final long STAGES_AT = 12;
    private static final long GROUP_AT = 16;
    private static final long KIND_AT = 20;
    private static final long PRODUCERS_AT = 24;
    private static final long CONSUMERS_AT = 28;
    private static final long MAKES_AT = 32;
    private static final long VERDICT_AT = 40;
    private static final long MESSAGE_LENGTH_AT = 44;
    private static final long PRODUCER_DEATHS_AT = 48;
    private static final long OWNERS_AT = 64;
    private static final long LEDGER_AT = 128;
    private static final long MESSAGE_AT = 256;
    private static final long SLOTS_AT = MESSAGE_AT + MESSAGE_BYTES;

    // rank slot fields
    private static final long TAG = 0;
    private static final long P_KIND = 8;
    private static final long P_PRODUCERS = 12;
    private static final long P_ROLE = 16;
    private static final long P_GROUP = 20;
    private static final long P_STAGES = 24;
    private static final long PID = 32;
    private static final long START = 40;
    private static final long STATE = 48;
    private static final long SIDE = 52;
    private static final long MEMBER = 56;
    private static final long COMMITTED = 64;
    private static final long ACQUIRED = 72;
    private static final long RELEASED = 80;
    private static final long P_PID = 88;
    private static final long P_START = 96;
    private static final long ATTACH = 104;
    private static final long COPIES = 112;

    /** The area: a slice of the region's data, from the state's offset to the data's end. */
    final MemorySegment area;
    /** How to name the area in messages. */
    final String what;

    RegionStages(MemorySegment area, String what) {
        this.area = area;
        this.what = what;
    }

    // ---------------------------------------------------------------------------------------------------------
    // Sizes and offsets

    /** Bytes a state of {@code stages} stages for a group of {@code groupSize} needs, whatever it makes. */
    static long bytesFor(int stages, int groupSize) {
        return end(stages, groupSize, groupSize, groupSize);
    }

    private static long slotsEnd(int groupSize) {
        return align(SLOTS_AT + (long) groupSize * SLOT_BYTES);
    }

    /** Bytes a member's cells take: its stages' cells, on lines of their own. */
    private static long memberCells(int stages) {
        return align((long) stages * SharedWord.CELL_BYTES);
    }

    private static long producedCellsAt(int groupSize) {
        return slotsEnd(groupSize);
    }

    private static long consumedCellsAt(int stages, int groupSize, int producers) {
        return producedCellsAt(groupSize) + producers * memberCells(stages);
    }

    private static long leftFromAt(int stages, int groupSize, int producers, int consumers) {
        return consumedCellsAt(stages, groupSize, producers) + consumers * memberCells(stages);
    }

    private static long recordsAt(int stages, int groupSize, int producers, int consumers) {
        return align(leftFromAt(stages, groupSize, producers, consumers)
            + (long) (producers + consumers) * stages * Long.BYTES);
    }

    private static long end(int stages, int groupSize, int producers, int consumers) {
        return recordsAt(stages, groupSize, producers, consumers)
            + (long) producers * stages * SharedWord.RECORDS_BYTES;
    }

    private static long align(long n) {
        return (n + ALIGNMENT - 1) & -ALIGNMENT;
    }

    /** How many rank slots fit in the area. */
    long slotCapacity() {
        return Math.max(0, (area.byteSize() - SLOTS_AT) / SLOT_BYTES);
    }

    private static long slot(int rank) {
        return SLOTS_AT + (long) rank * SLOT_BYTES;
    }

    // ---------------------------------------------------------------------------------------------------------
    // The header

    int stages() {
        return area.get(JAVA_INT, STAGES_AT);
    }

    int groupSize() {
        return area.get(JAVA_INT, GROUP_AT);
    }

    int kind() {
        return area.get(JAVA_INT, KIND_AT);
    }

    int producers() {
        return area.get(JAVA_INT, PRODUCERS_AT);
    }

    int consumers() {
        return area.get(JAVA_INT, CONSUMERS_AT);
    }

    long makes() {
        return (long) LONG.getVolatile(area, MAKES_AT);
    }

    /** Whether the area holds a state a make has formatted (else it is blank, or something else's bytes). */
    boolean formatted() {
        return java.util.Arrays.equals(area.asSlice(0, MAGIC.length).toArray(JAVA_BYTE), MAGIC)
            && area.get(JAVA_INT, VERSION_AT) == VERSION;
    }

    /** Whether a state's magic is at {@code at} of {@code data} (a quick look before its header is read). */
    static boolean formattedAt(MemorySegment data, long at) {
        return at + SLOTS_AT <= data.byteSize() && data.get(JAVA_BYTE, at) == MAGIC[0]
            && java.util.Arrays.equals(data.asSlice(at, MAGIC.length).toArray(JAVA_BYTE), MAGIC);
    }

    /**
     * Bytes the pipeline this area's header describes takes, or -1 when the header describes none that fits the
     * area (not formatted, counts out of range).
     */
    long extent() {
        int stages = stages();
        int group = groupSize();
        int p = producers();
        int c = consumers();
        if (!formatted() || stages < 1 || stages > dev.jpipeline.PipelineSharedState.MAX_STAGES || group < 1
            || group > slotCapacity() || p < 1 || c < 1
            || p > group || c > group) {
            return -1;
        }
        long end = end(stages, group, p, c);
        return end <= area.byteSize() ? end : -1;
    }

    /**
     * A live handle of the pipeline made last, described ("rank 1 (pid ...)"), or null when none is left: a place
     * that is ACTIVE, whose maker lives, and that is held (see held: a place never taken is given up here). A
     * header whose group does not fit the area has none.
     */
    String liveHandle() {
        int previous = groupSize();
        if (!formatted() || previous < 0 || previous > slotCapacity()) {
            return null;
        }
        for (int r = 0; r < previous; r++) {
            if (state(r) == ACTIVE && maker(r).isAlive() && held(r)) {
                return "rank " + r + " (" + maker(r) + ")";
            }
        }
        return null;
    }

    /** A survivor left for a producer that died: consumers look for the shares it never delivers from now on. */
    void producerDied() {
        LONG.getAndAdd(area, PRODUCER_DEATHS_AT, 1L);
    }

    /** How many producers of the pipeline made last died (a survivor left for them). */
    long producerDeaths() {
        return (long) LONG.getVolatile(area, PRODUCER_DEATHS_AT);
    }

    /** The owners word: handles that have not left. */
    MemorySegment owners() {
        return area.asSlice(OWNERS_AT, Long.BYTES);
    }

    /** A count partition's ledger word. */
    MemorySegment ledger() {
        return area.asSlice(LEDGER_AT, Long.BYTES);
    }

    // ---------------------------------------------------------------------------------------------------------
    // Proposals and the verdict

    /** Writes rank {@code rank}'s proposal for make {@code tag}, with this process as its maker. */
    void propose(int rank, long tag, int kind, int producers, int role, int groupSize, int stages) {
        long s = slot(rank);
        area.set(JAVA_INT, s + P_KIND, kind);
        area.set(JAVA_INT, s + P_PRODUCERS, producers);
        area.set(JAVA_INT, s + P_ROLE, role);
        area.set(JAVA_INT, s + P_GROUP, groupSize);
        area.set(JAVA_INT, s + P_STAGES, stages);
        area.set(JAVA_LONG, s + P_PID, ProcessIdentity.CURRENT.pid());
        area.set(JAVA_LONG, s + P_START, ProcessIdentity.CURRENT.startMillis());
        LONG.setVolatile(area, s + TAG, tag);      // last: a reader that sees the tag sees the proposal
    }

    long proposalTag(int rank) {
        return (long) LONG.getVolatile(area, slot(rank) + TAG);
    }

    int proposedKind(int rank) {
        return area.get(JAVA_INT, slot(rank) + P_KIND);
    }

    int proposedProducers(int rank) {
        return area.get(JAVA_INT, slot(rank) + P_PRODUCERS);
    }

    int proposedRole(int rank) {
        return area.get(JAVA_INT, slot(rank) + P_ROLE);
    }

    int proposedGroupSize(int rank) {
        return area.get(JAVA_INT, slot(rank) + P_GROUP);
    }

    int proposedStages(int rank) {
        return area.get(JAVA_INT, slot(rank) + P_STAGES);
    }

    /** Publishes make {@code tag}'s verdict: null for success, else the refusal every rank throws. */
    void publishVerdict(long tag, String refusal) {
        area.set(JAVA_INT, VERDICT_AT, refusal == null ? 0 : 1);
        byte[] text = refusal == null ? new byte[0] : refusal.getBytes(StandardCharsets.UTF_8);
        int length = Math.min(text.length, MESSAGE_BYTES);
        MemorySegment.copy(text, 0, area, JAVA_BYTE, MESSAGE_AT, length);
        area.set(JAVA_INT, MESSAGE_LENGTH_AT, length);
        LONG.setVolatile(area, MAKES_AT, tag);
    }

    /** The refusal of the make published last, or null when it succeeded. */
    String refusal() {
        if (area.get(JAVA_INT, VERDICT_AT) == 0) {
            return null;
        }
        int length = Math.clamp(area.get(JAVA_INT, MESSAGE_LENGTH_AT), 0, MESSAGE_BYTES);
        return new String(area.asSlice(MESSAGE_AT, length).toArray(JAVA_BYTE), StandardCharsets.UTF_8);
    }

    // ---------------------------------------------------------------------------------------------------------
    // Formatting (the make's rank 0, between its two syncs: nobody uses the area meanwhile)

    /**
     * Writes the state of make {@code tag}'s pipeline: the header, every rank's place (side and member, maker,
     * ACTIVE, not taken, cursors 0), the
     * barriers at phase 0 expecting their member, empty left-from rounds and records; owners = group size.
     *
     * @param sides   per rank: its side (UNDECIDED, PRODUCER, CONSUMER, BOTH)
     * @param members per rank: its member number on its side(s)
     */
    void format(long tag, int stages, int groupSize, int kind, int producers, int consumers, int[] sides,
                int[] members) {
        MemorySegment.copy(MAGIC, 0, area, JAVA_BYTE, 0, MAGIC.length);
        area.set(JAVA_INT, VERSION_AT, VERSION);
        area.set(JAVA_INT, STAGES_AT, stages);
        area.set(JAVA_INT, GROUP_AT, groupSize);
        area.set(JAVA_INT, KIND_AT, kind);
        area.set(JAVA_INT, PRODUCERS_AT, producers);
        area.set(JAVA_INT, CONSUMERS_AT, consumers);
        LONG.setVolatile(area, LEDGER_AT, 0L);
        LONG.setVolatile(area, PRODUCER_DEATHS_AT, 0L);
        for (int r = 0; r < groupSize; r++) {
            long s = slot(r);
            area.set(JAVA_INT, s + SIDE, sides[r]);
            area.set(JAVA_INT, s + MEMBER, members[r]);
            area.set(JAVA_LONG, s + PID, area.get(JAVA_LONG, s + P_PID));
            area.set(JAVA_LONG, s + START, area.get(JAVA_LONG, s + P_START));
            LONG.setVolatile(area, s + ATTACH, tag);
            LONG.setVolatile(area, s + COPIES, 0L);     // 0, or its maker died with them: they never land
            area.set(JAVA_LONG, s + COMMITTED, 0L);
            area.set(JAVA_LONG, s + ACQUIRED, 0L);
            area.set(JAVA_LONG, s + RELEASED, 0L);
            INT.setVolatile(area, s + STATE, ACTIVE);
        }
        long initial = PhaseBarrier.initialState(1);
        for (int m = 0; m < producers; m++) {
            for (int st = 0; st < stages; st++) {
                SharedWord.format(area, producedCell(m, st), record(m, st), initial);
            }
        }
        for (int m = 0; m < consumers; m++) {
            for (int st = 0; st < stages; st++) {
                SharedWord.format(area, consumedCell(m, st), -1, initial);
            }
        }
        long leftFrom = leftFromAt(stages, groupSize, producers, consumers);
        area.asSlice(leftFrom, (long) (producers + consumers) * stages * Long.BYTES).fill((byte) 0);
        LONG.setVolatile(area, OWNERS_AT, (long) groupSize);
    }

    // ---------------------------------------------------------------------------------------------------------
    // The pipeline made last (offsets from the header: check it first, see check)

    long producedCell(int member, int stage) {
        return producedCellsAt(groupSize()) + member * memberCells(stages()) + (long) stage * SharedWord.CELL_BYTES;
    }

    long consumedCell(int member, int stage) {
        return consumedCellsAt(stages(), groupSize(), producers()) + member * memberCells(stages())
            + (long) stage * SharedWord.CELL_BYTES;
    }

    long record(int member, int stage) {
        return recordsAt(stages(), groupSize(), producers(), consumers())
            + ((long) member * stages() + stage) * SharedWord.RECORDS_BYTES;
    }

    /** The left-from rounds of the produced side, or (consumers) of the consumed side. */
    MemorySegment leftFrom(boolean produced) {
        long at = leftFromAt(stages(), groupSize(), producers(), consumers());
        long producedBytes = (long) producers() * stages() * Long.BYTES;
        return produced ? area.asSlice(at, producedBytes)
            : area.asSlice(at + producedBytes, (long) consumers() * stages() * Long.BYTES);
    }

    /**
     * Checks that the header describes a pipeline of {@code stages} stages and a group of {@code groupSize} whose
     * counts fit {@code kind} and the area, so that every offset computed from it is inside.
     *
     * @return null when it does, else what is wrong
     */
    String check(int stages, int groupSize, int kind) {
        int p = producers();
        int c = consumers();
        boolean unified = kind == StageRing.Kind.UNIFIED.ordinal();
        if (!formatted() || stages() != stages || groupSize() != groupSize || kind() != kind
            || (unified ? p != groupSize || c != groupSize : p < 1 || c < 1 || p + c != groupSize)) {
            return what + " does not hold the pipeline this rank made (" + stages + " stages, a group of "
                + groupSize + "): it says " + stages() + " stages, a group of " + groupSize() + ", kind " + kind()
                + ", " + p + " producers and " + c + " consumers (a corrupted region?)";
        }
        if (end(stages, groupSize, p, c) > area.byteSize()) {
            return what + " is too small for its pipeline: " + area.byteSize() + " bytes, needs "
                + end(stages, groupSize, p, c);
        }
        return null;
    }

    // ---------------------------------------------------------------------------------------------------------
    // Rank slots

    /**
     * Rank {@code rank}'s slot state.
     *
     * @throws IllegalStateException naming the offset and the value, when it is none of the states (a corrupted
     *                               region): every reader, a quitter or a survivor's look for the dead, fails
     *                               cleanly instead of taking it for a place that nobody holds
     */
    int state(int rank) {
        int state = (int) INT.getVolatile(area, stateAt(rank));
        if (state < NONE || state > CLOSED) {
            throw new IllegalStateException(what + ": rank " + rank + "'s slot state at offset " + stateAt(rank)
                + " of the state's area is " + state + ", which is none of its states " + NONE + ".." + CLOSED
                + " (a corrupted region?)");
        }
        return state;
    }

    /** Where rank {@code rank}'s slot state is, from the area's start. */
    static long stateAt(int rank) {
        return slot(rank) + STATE;
    }

    boolean casState(int rank, int expect, int update) {
        return MappedAtomics.casInt(area, slot(rank) + STATE, expect, update);
    }

    int side(int rank) {
        return (int) INT.getVolatile(area, slot(rank) + SIDE);
    }

    void side(int rank, int side, int member) {
        area.set(JAVA_INT, slot(rank) + MEMBER, member);
        INT.setVolatile(area, slot(rank) + SIDE, side);
    }

    int member(int rank) {
        return area.get(JAVA_INT, slot(rank) + MEMBER);
    }

    /**
     * Rank {@code rank} takes the place make {@code tag} formatted for it.
     *
     * @return false when a later make gave the place up first (the rank's make had failed on some rank)
     */
    boolean take(int rank, long tag) {
        return MappedAtomics.casLong(area, slot(rank) + ATTACH, tag, -tag);
    }

    /** Rank {@code rank} gives up the place make {@code tag} formatted for it, unless a later make did already. */
    boolean giveUp(int rank, long tag) {
        return MappedAtomics.casLong(area, slot(rank) + ATTACH, tag, 0L);
    }

    /**
     * Whether rank {@code rank}'s place in the pipeline made last is held by a handle: taken, or, while it is
     * still waiting to be taken, not given up by this call. A place formatted by a make that then failed between
     * its syncs (a rank died or left) is never taken; the next make gives it up (CAS to 0), so that a racing
     * late taker fails instead of sharing it.
     */
    boolean held(int rank) {
        long attach = (long) LONG.getVolatile(area, slot(rank) + ATTACH);
        return attach < 0 || attach > 0 && !MappedAtomics.casLong(area, slot(rank) + ATTACH, attach, 0L);
    }

    /** The process that made rank {@code rank}'s handle. */
    ProcessIdentity maker(int rank) {
        return new ProcessIdentity(area.get(JAVA_LONG, slot(rank) + PID), area.get(JAVA_LONG, slot(rank) + START));
    }

    /** The owner acquired batch {@code batch}: before it returns from producer_acquire. */
    void acquired(int rank, long batch) {
        LONG.setRelease(area, slot(rank) + ACQUIRED, batch + 1);
    }

    /** The owner has committed {@code count} batches: after its arrival. */
    void committed(int rank, long count) {
        LONG.setRelease(area, slot(rank) + ACQUIRED, 0L);
        LONG.setRelease(area, slot(rank) + COMMITTED, count);
    }

    /** The owner has released {@code count} batches: after its arrival. */
    void released(int rank, long count) {
        LONG.setRelease(area, slot(rank) + RELEASED, count);
    }

    long committed(int rank) {
        return (long) LONG.getVolatile(area, slot(rank) + COMMITTED);
    }

    /** The batch acquired and not committed + 1, or 0. */
    long acquired(int rank) {
        return (long) LONG.getVolatile(area, slot(rank) + ACQUIRED);
    }

    /** Rank {@code rank}'s handle handed a copy off ({@code +1}), or one of them landed ({@code -1}). */
    void copies(int rank, long delta) {
        LONG.getAndAdd(area, slot(rank) + COPIES, delta);
    }

    /** Copies of rank {@code rank}'s handle in flight. */
    long copies(int rank) {
        return (long) LONG.getVolatile(area, slot(rank) + COPIES);
    }

    long released(int rank) {
        return (long) LONG.getVolatile(area, slot(rank) + RELEASED);
    }

    private static final VarHandle LONG = JAVA_LONG.varHandle();
    private static final VarHandle INT = JAVA_INT.varHandle();
}
