package dev.jpipeline.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The barriers of one pipeline made on a shared state: per stage s, {@code produced[s]} (expects the producers'
 * commits) and {@code consumed[s]} (expects the consumers' releases), the count of handles that still own the
 * pipeline, a count partition's {@link SideLedger}, and the pipeline's {@link HangDetector}.
 *
 * <pre>
 * Invariant (libcu++ relies on it too): with Pp[s], Cp[s] the completed phases of produced[s], consumed[s],
 *     Cp[s] &lt;= Pp[s] &lt;= Cp[s] + 1
 * Batch b lives in stage b mod S, round b div S. A producer in round k of stage s may acquire once
 * Cp[s] &gt;= k; a consumer in round k may read once Pp[s] &gt;= k + 1. So no barrier ever runs more than one
 * phase ahead of a thread waiting on it, and a phase's failure record is read before the next phase can fail.
 * </pre>
 */
final class StageRing {

    /** How the pipeline was made: every thread of the group must make it the same way. */
    enum Kind { UNIFIED, BY_COUNT, BY_ROLE }

    final Kind kind;
    final int groupSize;
    final int producerCount;
    final int consumerCount;
    /** Whether one thread produces (its commits may be PhaseBarrier.arriveAlone stores): decided here only. */
    final boolean soloProducer;
    /** Whether one thread consumes (its releases are PhaseBarrier.arriveAlone stores). */
    final boolean soloConsumer;
    final PhaseBarrier[] produced;
    final PhaseBarrier[] consumed;
    final PipelineSettings settings;
    /** Count partition only: who has claimed which side; else null. */
    final SideLedger sides;
    /** Reports hangs and abandons handles whose threads have ended; null when hang detection is off. */
    final HangDetector detector;
    /** Ranks whose threads ended without quit: named where their absence makes progress impossible. */
    private final List<String> departures = new CopyOnWriteArrayList<>();
    /** Handles that have not quit yet; the one that brings it to 0 is the last owner (getAndAdd). */
    private volatile int owners;

    StageRing(Kind kind, int groupSize, int producerCount, int consumerCount, PipelineSettings settings) {
        this.kind = kind;
        this.groupSize = groupSize;
        this.producerCount = producerCount;
        this.consumerCount = consumerCount;
        this.soloProducer = producerCount == 1;
        this.soloConsumer = consumerCount == 1;
        this.settings = settings;
        int stages = settings.stageCount();
        // One word array for all stage barriers: [pad | produced words | pad | consumed words | pad]. A side with
        // one thread keeps its words side by side: one writer, and a reader that fetches one word's cache line
        // gets the next stages' words with it. A side of several threads spaces its words a padding apart, so that
        // threads arriving at different stages do not contend for one line. The padding keeps the two groups, and
        // everything else, off each other's lines.
        int pad = PhaseBarrier.WORD_PAD;
        int producedStride = soloProducer ? 1 : pad;
        int consumedStride = soloConsumer ? 1 : pad;
        int consumedBase = 2 * pad + (stages - 1) * producedStride + 1;
        long[] words = new long[consumedBase + (stages - 1) * consumedStride + 1 + pad];
        this.produced = new PhaseBarrier[stages];
        this.consumed = new PhaseBarrier[stages];
        for (int s = 0; s < stages; s++) {
            produced[s] = new PhaseBarrier(words, pad + s * producedStride, producerCount, null, soloProducer);
            consumed[s] = new PhaseBarrier(words, consumedBase + s * consumedStride, consumerCount, null, soloConsumer);
        }
        this.sides = kind == Kind.BY_COUNT ? new SideLedger(producerCount, consumerCount) : null;
        this.detector = settings.hangPatienceNanos() <= 0 ? null
            : new HangDetector(settings.hangPatienceNanos(), "pipeline deadlock: every thread of the " + this.describe()
                + " is stuck", this::signature, this::stageStates);
        OWNERS.setRelease(this, groupSize);
    }

    /** Drops undecided quitters that a count partition has just settled, from round 0 of their side. */
    void drop(SideLedger.Drops drops) {
        for (int i = 0; i < drops.producers(); i++) {
            for (PhaseBarrier p : produced) {
                p.dropFromRound(0);
            }
        }
        for (int i = 0; i < drops.consumers(); i++) {
            for (PhaseBarrier c : consumed) {
                c.dropFromRound(0);
            }
        }
    }

    /** Gives up one handle's ownership. @return whether it was the last one */
    boolean releaseOwner() {
        return (int) OWNERS.getAndAdd(this, -1) == 1;
    }

    void departed(String note) {
        departures.add(note);
    }

    /** "" or "; " followed by the ranks whose threads ended without quit. */
    String departures() {
        return departures.isEmpty() ? "" : "; " + String.join("; ", departures);
    }

    /** Changes whenever any barrier of the pipeline changes (the hang detector's progress signature). */
    long signature() {
        long h = 1;
        for (int s = 0; s < produced.length; s++) {
            h = h * 31 + produced[s].snapshot();
            h = h * 31 + consumed[s].snapshot();
        }
        return h;
    }

    String describe() {
        return kind + " pipeline of " + groupSize + " threads (" + producerCount + " producing, " + consumerCount
            + " consuming)";
    }

    String stageStates() {
        StringBuilder b = new StringBuilder();
        for (int s = 0; s < produced.length; s++) {
            PhaseBarrier p = produced[s];
            PhaseBarrier c = consumed[s];
            b.append(s == 0 ? "" : "\n  ").append("stage ").append(s).append(": produced phase ").append(p.phase())
                .append(" has ").append(p.arrived()).append('/').append(p.expected()).append(" commits, consumed phase ")
                .append(c.phase()).append(" has ").append(c.arrived()).append('/').append(c.expected())
                .append(" releases");
        }
        if (sides != null) {
            b.append("\n  sides: ").append(sides);
        }
        return b.toString();
    }

    @Override
    public String toString() {
        return describe() + ", " + owners + " owners; " + stageStates().replace("\n  ", "; ");
    }

    private static final VarHandle OWNERS;

    static {
        try {
            OWNERS = MethodHandles.lookup().findVarHandle(StageRing.class, "owners", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
