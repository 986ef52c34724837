package dev.jpipeline.internal;

import dev.jpipeline.internal.copy.CopyLanding;
import java.lang.foreign.MemorySegment;

/**
 * What a {@link StageHandle} tells the layers beside its protocol: the seam through which tracing
 * ({@link TracedEvents}), checked execution ({@link CheckedEvents}) and a shared region's cursors
 * ({@link RegionCursors}) follow a handle, so that the handle itself holds only the protocol and its misuse
 * messages.
 *
 * <pre>
 * Contract
 *  - Every hook runs on the handle's owner, after the operation it names has taken effect (its arrival made, its
 *    cursor moved), except copying, which runs before the copy is handed off (it says where the copy lands), and
 *    leaving, which decides whether the owner's departure may proceed.
 *  - start is what now() returned when the operation began: 0 unless some hook records spans. An operation that
 *    throws (a misuse, a failed stage) fires nothing, except waited, which fires once the batch is complete,
 *    before its failure, if any, is thrown.
 *  - batch numbers count from 0 over the whole run (round * stages + stage); round is the stage's round.
 *  - A hook may throw only for a fault of its own store (a corrupted region word); the handle's state has
 *    already moved, so the fault is the operation's outcome, as a corrupted barrier word's would be.
 * </pre>
 *
 * <p>A handle with nothing beside it holds {@link #NONE}, whose hooks are empty: its call sites see one receiver
 * type and the JIT drops them. Several layers are chained by {@link #of}, in a fixed order (checked, traced,
 * region), each landing wrapping the one before, so that a region counts a copy until its traced landing is done.
 */
abstract class HandleEvents {

    /** No layer beside the protocol. */
    static final HandleEvents NONE = new HandleEvents() { };

    /** The layers given, chained in order, skipping nulls: {@link #NONE} when there is none. */
    static HandleEvents of(HandleEvents... layers) {
        HandleEvents chain = NONE;
        for (HandleEvents layer : layers) {
            if (layer != null) {
                chain = chain == NONE ? layer : new Chain(chain, layer);
            }
        }
        return chain;
    }

    /** The time an operation began, for layers that record spans; 0 when none does. */
    long now() {
        return 0;
    }

    /** Whether this layer records spans: then {@link #now} is its clock (at most one layer of a chain does). */
    boolean recordsSpans() {
        return false;
    }

    /** The owner acquired stage {@code stage} of round {@code round} for batch {@code batch}. */
    void acquired(int stage, long round, long batch, long start) {
    }

    /** The owner committed batch {@code batch}, in stage {@code stage}. */
    void committed(int stage, long batch, long start) {
    }

    /**
     * The owner is about to issue a copy into {@code dst}, part of batch {@code batch} in stage {@code stage} of
     * round {@code round}, whose arrival {@code landing} makes (the stage's barrier, or what a layer before wrapped
     * around it).
     *
     * @return where the copy lands: {@code landing}, or a landing that does more and then calls it
     */
    CopyLanding copying(int stage, long round, long batch, long start, MemorySegment dst, CopyLanding landing) {
        return landing;
    }

    /** A copy into stage {@code stage} for batch {@code batch} ran on the owner and is done. */
    void copied(int stage, long batch, long start) {
    }

    /** The owner's wait found batch {@code batch} complete, in stage {@code stage}. */
    void waited(int stage, long batch, long start) {
    }

    /** The owner released batch {@code batch}, stage {@code stage} of round {@code round}. */
    void released(int stage, long round, long batch, long start) {
    }

    /** A count partition's owner took its side: a producer or not, member {@code member} of it. */
    void sideTaken(boolean producer, int member) {
    }

    /**
     * The handle is leaving, {@code how}: whether it may (a region slot may say that a survivor left for it
     * already). Called after the handle claimed its own departure.
     */
    boolean leaving(Departure how) {
        return true;
    }

    /**
     * The handle leaves, {@code how}, after {@link #leaving} allowed it and before its arrivals are dropped: from
     * now on it never commits batch {@code nextCommit} or any later one, and never releases batch
     * {@code nextRelease} or any later one. Arrivals it owes are dropped by the protocol, which libcu++'s
     * {@code quit()} never does (its barriers go on expecting them).
     *
     * @param who         the handle and its owner, as messages name them
     * @param nextCommit  the first batch it will not commit (an acquired one included), or -1 when it commits
     *                    nothing (a consumer, or a count partition's member that never took a side)
     * @param nextRelease the first batch it will not release, or -1 when it releases nothing
     */
    void departing(Departure how, String who, long nextCommit, long nextRelease) {
    }

    /** Why a handle leaves. */
    enum Departure {
        /** Its owner called quit(). */
        QUIT,
        /** Its owner ended without quit(); another thread leaves for it. */
        ENDED,
        /** The region it is mapped in was closed by its owner without quit(). */
        CLOSED
    }

    /** Two layers, {@code first}'s hooks before {@code second}'s; a copy lands through second's, then first's. */
    private static final class Chain extends HandleEvents {
        private final HandleEvents first;
        private final HandleEvents second;
        /** The layer whose clock starts an operation: the one that records spans, if either does. */
        private final HandleEvents clock;

        Chain(HandleEvents first, HandleEvents second) {
            this.first = first;
            this.second = second;
            this.clock = second.recordsSpans() ? second : first;
        }

        @Override
        long now() {
            return clock.now();
        }

        @Override
        boolean recordsSpans() {
            return clock.recordsSpans();
        }

        @Override
        void acquired(int stage, long round, long batch, long start) {
            first.acquired(stage, round, batch, start);
            second.acquired(stage, round, batch, start);
        }

        @Override
        void committed(int stage, long batch, long start) {
            first.committed(stage, batch, start);
            second.committed(stage, batch, start);
        }

        @Override
        CopyLanding copying(int stage, long round, long batch, long start, MemorySegment dst, CopyLanding landing) {
            return second.copying(stage, round, batch, start, dst, first.copying(stage, round, batch, start, dst,
                landing));
        }

        @Override
        void copied(int stage, long batch, long start) {
            first.copied(stage, batch, start);
            second.copied(stage, batch, start);
        }

        @Override
        void waited(int stage, long batch, long start) {
            first.waited(stage, batch, start);
            second.waited(stage, batch, start);
        }

        @Override
        void released(int stage, long round, long batch, long start) {
            first.released(stage, round, batch, start);
            second.released(stage, round, batch, start);
        }

        @Override
        void sideTaken(boolean producer, int member) {
            first.sideTaken(producer, member);
            second.sideTaken(producer, member);
        }

        @Override
        boolean leaving(Departure how) {
            return first.leaving(how) && second.leaving(how);
        }

        @Override
        void departing(Departure how, String who, long nextCommit, long nextRelease) {
            first.departing(how, who, nextCommit, nextRelease);
            second.departing(how, who, nextCommit, nextRelease);
        }
    }
}
