package dev.jpipeline.internal;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The barriers of one pipeline made on a shared state: its two {@link StageSide}s, {@code produced} (per stage,
 * the producers' commits) and {@code consumed} (the consumers' releases), each split into groups of members; the
 * count of handles that still own the pipeline, a count partition's {@link SideLedger}, and the pipeline's
 * {@link HangDetector}.
 *
 * <pre>
 * Invariant (libcu++ relies on it too): with Pp[s], Cp[s] the completed phases of any group's produced[s],
 * consumed[s],
 *     Cp[s] &lt;= Pp[s] &lt;= Cp[s] + 1
 * Batch b lives in stage b mod S, round b div S. A producer in round k of stage s may acquire once
 * Cp[s] &gt;= k; a consumer in round k may read once Pp[s] &gt;= k + 1. So no barrier ever runs more than one
 * phase ahead of a thread waiting on it, and a phase's failure record is read before the next phase can fail.
 *
 * A ring in a shared region (system scope, RegionStages) keeps its barriers, owners and ledger there, one group
 * per member; each process that made handles on it has a ring object over the same bytes. It has no hang detector
 * (it cannot see the threads of other processes): its waiters look for dead processes instead (RegionReaper).
 * </pre>
 */
final class StageRing {

    /** How the pipeline was made: every thread of the group must make it the same way. */
    enum Kind { UNIFIED, BY_COUNT, BY_ROLE }

    final Kind kind;
    final int groupSize;
    final int producerCount;
    final int consumerCount;
    final StageSide produced;
    final StageSide consumed;
    final PipelineSettings settings;
    /** Count partition only: who has claimed which side; else null. */
    final SideLedger sides;
    /** Reports hangs and abandons handles whose threads have ended; null when hang detection is off. */
    final HangDetector detector;
    /** Ranks whose threads ended without quit: named where their absence makes progress impossible. */
    private final List<String> departures = new CopyOnWriteArrayList<>();
    /** Handles that have not quit yet, a long at 0 (getAndAdd): the one that brings it to 0 is the last owner. */
    private final MemorySegment owners;
    /** The region's state when the ring is in a shared region, else null. */
    final RegionStages region;
    /** Region rings: this process's handles on the area, so that a waiter can leave for one whose thread ended. */
    final RegionLocals local;
    /** Region rings: leaves for dead ranks, and names them; else null. */
    private final RegionReaper reaper;

    StageRing(Kind kind, int groupSize, int producerCount, int consumerCount, PipelineSettings settings) {
        this.kind = kind;
        this.groupSize = groupSize;
        this.producerCount = producerCount;
        this.consumerCount = consumerCount;
        this.settings = settings;
        int stages = settings.stageCount();
        // One word array for all stage barriers: [pad | produced groups | consumed groups], each group followed by
        // a padding (see StageSide), so that the sides, their groups and everything else stay off each other's lines.
        int pad = PhaseBarrier.WORD_PAD;
        long[] words = new long[pad + StageSide.wordsNeeded(stages, producerCount)
            + StageSide.wordsNeeded(stages, consumerCount)];
        this.produced = new StageSide(words, pad, stages, producerCount);
        this.consumed = new StageSide(words, produced.end, stages, consumerCount);
        this.sides = kind == Kind.BY_COUNT ? new SideLedger(producerCount, consumerCount) : null;
        this.detector = settings.hangPatienceNanos() <= 0 ? null
            : new HangDetector(settings.hangPatienceNanos(), "pipeline deadlock: every thread of the " + this.describe()
                + " is stuck", this::signature, this::stageStates);
        this.owners = MemorySegment.ofArray(new long[] {groupSize});
        this.region = null;
        this.local = null;
        this.reaper = null;
    }

    /**
     * A ring over the pipeline that {@code region} holds (formatted by its make and checked by the caller): this
     * process's view, which writes nothing until a handle acts.
     */
    StageRing(RegionStages region, RegionLocals local, Kind kind, int groupSize, int producerCount,
              int consumerCount, PipelineSettings settings) {
        this.kind = kind;
        this.groupSize = groupSize;
        this.producerCount = producerCount;
        this.consumerCount = consumerCount;
        this.settings = settings;
        this.region = region;
        this.local = local;
        this.reaper = new RegionReaper(this);
        int stages = settings.stageCount();
        PhaseBarrier[][] producedWords = new PhaseBarrier[producerCount][stages];
        PhaseBarrier[][] consumedWords = new PhaseBarrier[consumerCount][stages];
        for (int s = 0; s < stages; s++) {
            for (int m = 0; m < producerCount; m++) {
                producedWords[m][s] = new PhaseBarrier(
                    new SharedWord(region.area, region.producedCell(m, s), region.record(m, s), reaper::reap));
            }
            for (int m = 0; m < consumerCount; m++) {
                consumedWords[m][s] = new PhaseBarrier(
                    new SharedWord(region.area, region.consumedCell(m, s), -1, reaper::reap));
            }
        }
        this.produced = new StageSide(producedWords, region.leftFrom(true));
        this.consumed = new StageSide(consumedWords, region.leftFrom(false));
        this.sides = kind == Kind.BY_COUNT ? new SideLedger(producerCount, consumerCount, region.ledger()) : null;
        this.detector = null;
        this.owners = region.owners();
    }

    /** Drops undecided quitters that a count partition has just settled, from round 0 of their side. */
    void drop(SideLedger.Drops drops) {
        for (int i = 0; i < drops.producers(); i++) {
            produced.dropFromStart(drops.firstProducer() + i);
        }
        for (int i = 0; i < drops.consumers(); i++) {
            consumed.dropFromStart(drops.firstConsumer() + i);
        }
    }

    /** Gives up one handle's ownership. @return whether it was the last one */
    boolean releaseOwner() {
        return (long) OWNERS.getAndAdd(owners, 0L, -1L) == 1;
    }

    /** Region rings: leaves for the ranks whose process died or whose thread ended (RegionReaper). */
    void reap() {
        reaper.reap();
    }

    /**
     * The failure of round {@code round} of stage {@code stage} for lack of a dead producer's share, or null
     * (region rings: RegionReaper.missingShare; in one process, a producer's thread that ended is one that quit).
     */
    Throwable missingShare(int stage, long round) {
        return reaper == null || region.producerDeaths() == 0 ? null : reaper.missingShare(stage, round);
    }

    /** Region rings: leaves for rank {@code rank}, which will never act (RegionReaper.leaveFor). */
    void leaveFor(int rank) {
        reaper.leaveFor(rank, "rank " + rank + " (" + region.maker(rank) + ")");
    }

    /** A handle was made on this ring: watched by the hang detector, or listed among this process's in a region. */
    void joined(StageHandle handle) {
        if (detector != null) {
            detector.register(handle);
        }
        if (local != null) {
            local.handles.add(handle);
        }
    }

    /** A handle leaves: no longer one of this process's in a region. */
    void left(StageHandle handle) {
        if (local != null) {
            local.handles.remove(handle);
        }
    }

    /**
     * The layer that writes rank {@code rank}'s cursors to its slot (RegionCursors) when the ring is in a region,
     * else null.
     */
    HandleEvents cursors(int rank) {
        return region == null ? null
            : new RegionCursors(region, rank, local.landingsIn(region.area.scope()), settings.stageCount());
    }

    /** Whether a run of timed waits that give up is watched: by the hang detector, or for dead processes. */
    boolean watchesPolls() {
        return detector != null || region != null;
    }

    /** Whether the ring is in the region mapping whose memory is {@code scope}. */
    boolean mappedIn(MemorySegment.Scope scope) {
        return region != null && region.area.scope().equals(scope);
    }

    /**
     * The exception for {@code fault}, an InternalError that an operation of the handle {@code handle} raised: in a
     * region, the region's truncation (RegionFaults); else it is rethrown.
     */
    RuntimeException faulted(InternalError fault, String handle) {
        if (region == null) {
            throw fault;
        }
        return RegionFaults.lost(fault, handle, null, region.area.byteSize());
    }

    /** A handle's thread ended without quit: named in departures (a region's slot says it instead). */
    void departed(String note) {
        if (region == null) {
            departures.add(note);
        }
    }

    /** "" or "; " followed by the ranks whose threads ended without quit. */
    String departures() {
        return (departures.isEmpty() ? "" : "; " + String.join("; ", departures))
            + (reaper == null ? "" : reaper.deaths());
    }

    /** Changes whenever any barrier of the pipeline changes (the hang detector's progress signature). */
    long signature() {
        return consumed.signature(produced.signature(1));
    }

    String describe() {
        return kind + " pipeline of " + groupSize + " threads (" + producerCount + " producing, " + consumerCount
            + " consuming)";
    }

    String stageStates() {
        StringBuilder b = new StringBuilder();
        for (int s = 0; s < settings.stageCount(); s++) {
            b.append(s == 0 ? "" : "\n  ").append("stage ").append(s).append(": produced ")
                .append(produced.describe(s, "commits")).append(", consumed ").append(consumed.describe(s, "releases"));
        }
        if (sides != null) {
            b.append("\n  sides: ").append(sides);
        }
        return b.toString();
    }

    @Override
    public String toString() {
        return describe() + ", " + (long) OWNERS.getVolatile(owners, 0L) + " owners; " + stageStates().replace("\n  ", "; ");
    }

    private static final VarHandle OWNERS = JAVA_LONG.varHandle();
}
