package dev.jpipeline.internal;

import dev.jpipeline.internal.wait.StallWatch;
import java.lang.foreign.MemorySegment;

/**
 * Where a {@link StageRing}'s state lives, and who watches its participants: the seam that keeps a ring one
 * algorithm whether its words are in this process's heap ({@link HeapHome}, {@link WatchedHeapHome} with a hang
 * detector) or in a shared region that several processes map ({@link RegionHome}), the way {@link BarrierWord}
 * keeps a barrier one algorithm over either kind of word.
 *
 * <pre>
 * A home builds the ring's two sides, its owner count and a count partition's ledger where its memory is, before
 * the ring exists; attach then gives it the ring, once, at the end of the ring's construction, for the watch that
 * needs the ring's view (a hang detector's signature, a reaper's sides). Every other method is a question the
 * ring's handles ask on a slow path (a wait that gave up or stalled, a departure, a failure message), or one they
 * ask once (joined, left, cursors).
 * </pre>
 */
abstract class RingHome {

    /** The producers' commits, per stage and group. */
    final StageSide produced;
    /** The consumers' releases, per stage and group. */
    final StageSide consumed;
    /** Handles that have not quit yet, a long at 0: the one that brings it to 0 is the last owner. */
    final MemorySegment owners;

    RingHome(StageSide produced, StageSide consumed, MemorySegment owners) {
        this.produced = produced;
        this.consumed = consumed;
        this.owners = owners;
    }

    /** A count partition's ledger of who took which side, kept where the ring's words are. */
    abstract SideLedger ledger(int producers, int consumers);

    /** The ring this home holds is built: called once, last in its constructor. */
    void attach(StageRing ring) {
    }

    /** A handle was made on the ring. */
    void joined(StageHandle handle) {
    }

    /** A handle leaves the ring. */
    void left(StageHandle handle) {
    }

    /**
     * What watches a stalled wait of {@code handle}, and a run of its timed waits that give up: the handle itself
     * when a hang detector is on, a look for dead processes in a region, else null (asked once, at the handle's
     * creation).
     */
    StallWatch stallWatch(StageHandle handle) {
        return null;
    }

    /** The hang detector's patience: only asked by a handle this home watches (stallWatch). */
    long patienceNanos() {
        throw new IllegalStateException("this ring has no hang detector");
    }

    /** The hang detector's report, or null: only asked by a handle this home watches (stallWatch). */
    String check() {
        throw new IllegalStateException("this ring has no hang detector");
    }

    /**
     * The layer that records rank {@code rank}'s cursors where survivors can read them ({@link RegionCursors}), or
     * null when the home has none.
     */
    HandleEvents cursors(int rank) {
        return null;
    }

    /**
     * The failure of round {@code round} of stage {@code stage} for lack of a dead producer's share, or null (in one
     * process, a producer whose thread ended is one that quit).
     */
    Throwable missingShare(int stage, long round) {
        return null;
    }

    /** A handle's thread ended without quit: {@code note} is named in {@link #departures} where the home keeps it. */
    abstract void departed(String note);

    /** "" or "; " followed by the participants that left without quit (threads that ended, processes that died). */
    abstract String departures();

    /** Whether the ring is in the region mapping whose memory is {@code scope}. */
    boolean mappedIn(MemorySegment.Scope scope) {
        return false;
    }

    /**
     * The exception for {@code fault}, an InternalError that an operation of the handle {@code handle} raised: a
     * region names its truncation; a heap ring rethrows it.
     */
    RuntimeException faulted(InternalError fault, String handle) {
        throw fault;
    }
}
