package dev.jpipeline.internal;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;

/**
 * The barriers of one pipeline made on a shared state: its two {@link StageSide}s, {@code produced} (per stage,
 * the producers' commits) and {@code consumed} (the consumers' releases), each split into groups of members; the
 * count of handles that still own the pipeline, and a count partition's {@link SideLedger}.
 *
 * <pre>
 * Invariant (libcu++ relies on it too): with Pp[s], Cp[s] the completed phases of any group's produced[s],
 * consumed[s],
 *     Cp[s] &lt;= Pp[s] &lt;= Cp[s] + 1
 * Batch b lives in stage b mod S, round b div S. A producer in round k of stage s may acquire once
 * Cp[s] &gt;= k; a consumer in round k may read once Pp[s] &gt;= k + 1. So no barrier ever runs more than one
 * phase ahead of a thread waiting on it, and a phase's failure record is read before the next phase can fail.
 *
 * Where the words live and who watches the participants is the ring's RingHome: this process's heap (HeapHome,
 * WatchedHeapHome with a hang detector) or a shared region (RegionHome, system scope across processes).
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
    /** Where the ring's words are and who watches its participants: the heap's (watched or not), or a region's. */
    final RingHome home;
    /** Handles that have not quit yet, a long at 0 (getAndAdd): the one that brings it to 0 is the last owner. */
    private final MemorySegment owners;

    /** A ring over the sides, owners and ledger that {@code home} holds (built for these counts and stages). */
    StageRing(Kind kind, int groupSize, int producerCount, int consumerCount, PipelineSettings settings,
              RingHome home) {
        this.kind = kind;
        this.groupSize = groupSize;
        this.producerCount = producerCount;
        this.consumerCount = consumerCount;
        this.settings = settings;
        this.home = home;
        this.produced = home.produced;
        this.consumed = home.consumed;
        this.owners = home.owners;
        this.sides = kind == Kind.BY_COUNT ? home.ledger(producerCount, consumerCount) : null;
        home.attach(this);
    }

    /** A ring in this process's heap, with a hang detector when the settings give it a patience. */
    static StageRing inHeap(Kind kind, int groupSize, int producerCount, int consumerCount,
                            PipelineSettings settings) {
        int stages = settings.stageCount();
        long patience = settings.hangPatienceNanos();
        return new StageRing(kind, groupSize, producerCount, consumerCount, settings, patience <= 0
            ? new HeapHome(stages, producerCount, consumerCount, groupSize)
            : new WatchedHeapHome(stages, producerCount, consumerCount, groupSize, patience));
    }

    /** Drops undecided quitters that a count partition has just settled, from round 0 of their side. */
    void drop(SideLedger.Drops drops) {
        drop(drops, settings.interleaver());
    }

    /**
     * {@link #drop(SideLedger.Drops)}, telling {@code interleaver} (the dropping handle's: checked execution's, or
     * null) that the settled quitters will never arrive, from batch 0 of their side (Interleaver.departs).
     */
    void drop(SideLedger.Drops drops, dev.jpipeline.internal.checked.Interleaver interleaver) {
        if (interleaver != null) {
            // libcu++ counts them on their side all the same: its barriers expect their arrivals from batch 0 on
            if (drops.producers() > 0) {
                interleaver.departs(this, drops.producers() + " owner(s) that left before taking a role (counted as "
                    + "producers of this count partition)", 0, -1);
            }
            if (drops.consumers() > 0) {
                interleaver.departs(this, drops.consumers() + " owner(s) that left before taking a role (counted as "
                    + "consumers of this count partition)", -1, 0);
            }
        }
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

    /** The failure of round {@code round} of stage {@code stage} for lack of a dead producer's share, or null. */
    Throwable missingShare(int stage, long round) {
        return home.missingShare(stage, round);
    }

    /** "" or "; " followed by the participants that left without quit. */
    String departures() {
        return home.departures();
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
