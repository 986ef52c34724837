package dev.jpipeline.internal;

import dev.jpipeline.internal.process.ProcessIdentity;
import java.util.ArrayList;
import java.util.List;

/**
 * Leaves a shared-region pipeline on behalf of the ranks that cannot leave themselves: a rank whose process died,
 * and a rank of this process whose thread ended without quit. It is what the hang detector's abandon is for an
 * in-process pipeline, for threads it cannot see: every waiter of a region ring runs {@link #reap} every
 * {@link SharedWord#CHECK_NANOS} of waiting, so a crash is noticed within that time by whoever waits for it.
 *
 * <pre>
 * A dead rank is claimed by a CAS of its slot's state, ACTIVE to REAPED, so exactly one survivor leaves for it,
 * as the rank itself would have left with quit. Its cursors are in its slot, written after each of its operations;
 * they lag by one when it died between an arrival and the cursor's update. Every member of a region ring is alone
 * in its group, so its words tell what it did: its barrier of the batch after its last recorded commit (release)
 * is one phase past that batch's round, or at that round with its arrival counted, exactly when it committed
 * (released) that batch too (arrived). A producer's word may also be a phase before the round: it was waiting to
 * acquire the batch while the stage's batch of the round before still waited for its copies, and the arrival
 * counted there is that earlier commit (taken for this one, the count came out one too high: the pending batch
 * was never failed and the stage's drop, two phases ahead, threw). A consumer's word is never behind: it expects
 * its member alone, so each release completes its phase.
 *
 *   producer side   c = committed batches (corrected as above)
 *                   acquired batch c, not committed: the stage fails (a record naming the rank and pid), and its
 *                     phase completes without it and without the copies it tied (they died with their process)
 *                   each of the last S committed batches whose phase has not completed waits for copies that will
 *                     never land: it fails and completes the same way
 *                   then it is dropped from every stage from the round of its next commit there, as quit does
 *   consumer side   t = released batches (corrected); dropped from the round of its next release in each stage
 *   undecided       (a count partition's rank that took no side) settled through the ledger, as quit does
 * Then its ownership is given up. Peers waiting for its side see the side abandoned once nobody is left on it, and
 * their exception names every rank that died (deaths). A dead producer is counted in the state's header before its
 * drops; while other producers are left, each later batch completes without its share, and consumers fail it
 * (missingShare: the dead rank's word is deserted at the batch's round, and its slot says REAPED).
 *
 * Each look also checks the stage words (checkWords): a word expecting more than its member and the copies the
 * slots count, or with more arrivals than it expects, is corrupted, and the waiter fails naming it. A drop that
 * fails (a corrupted word) does not stop the others: the rank is left everywhere else, then the failure thrown.
 * </pre>
 */
final class RegionReaper {

    private final StageRing ring;
    private final RegionStages region;

    private final RegionLocals local;

    RegionReaper(StageRing ring, RegionStages region, RegionLocals local) {
        this.ring = ring;
        this.region = region;
        this.local = local;
    }

    /**
     * Leaves for this process's handles whose thread ended, and for every rank whose process died; then checks the
     * stage words (checkWords).
     */
    void reap() {
        local.abandonEnded();
        for (int rank = 0; rank < ring.groupSize; rank++) {
            if (region.state(rank) == RegionStages.ACTIVE) {
                ProcessIdentity maker = region.maker(rank);
                if (!maker.isAlive() && region.casState(rank, RegionStages.ACTIVE, RegionStages.REAPED)) {
                    leaveFor(rank, "rank " + rank + " (" + maker + ")");
                }
            }
        }
        checkWords();
    }

    /**
     * Throws, naming the word's offset and value, when a stage word holds counts the protocol never writes (a
     * corrupted region), so that a waiter fails within a check's time instead of waiting forever for a phase that
     * can never complete. Every member is alone in its group: a consumed word expects at most its member, a
     * produced word its member and the copies tied to it, which the ranks' slots count (plus one tie per rank not
     * yet counted: a tie precedes its count); arrivals never exceed what a word expects.
     */
    private void checkWords() {
        long ties = ring.groupSize;
        for (int rank = 0; rank < ring.groupSize; rank++) {
            ties += Math.max(0, region.copies(rank));
        }
        for (int m = 0; m < ring.producerCount; m++) {
            checkWords(true, m, 1 + ties);
        }
        for (int m = 0; m < ring.consumerCount; m++) {
            checkWords(false, m, 1);
        }
    }

    private void checkWords(boolean produced, int member, long most) {
        PhaseBarrier[] words = (produced ? ring.produced : ring.consumed).of(member);
        for (int s = 0; s < words.length; s++) {
            long word = words[s].snapshot();
            int expected = PhaseBarrier.expectedOf(word);
            if (expected > most || PhaseBarrier.arrivedOf(word) > expected) {
                throw new IllegalStateException(region.what + ": the stage word of " + (produced ? "producer "
                    : "consumer ") + member + " at stage " + s + " at offset " + (produced
                    ? region.producedCell(member, s) : region.consumedCell(member, s)) + " of the state's area is "
                    + "corrupted: 0x"
                    + Long.toHexString(word) + " (expected " + expected + ", arrived " + PhaseBarrier.arrivedOf(word)
                    + "; at most " + most + " expected)");
            }
        }
    }

    /**
     * The failure of round {@code round} of stage {@code stage} when a producer that died left before delivering its
     * share of it: the batch completes without that share (its word is deserted), but is not whole. Null when no
     * producer that died is deserted there. A dead producer's deserted word is told from a quitter's by its slot
     * (REAPED).
     */
    Throwable missingShare(int stage, long round) {
        for (int rank = 0; rank < ring.groupSize; rank++) {
            int side = region.side(rank);
            if (region.state(rank) == RegionStages.REAPED
                && (side == RegionStages.PRODUCER || side == RegionStages.BOTH)
                && ring.produced.deserted(region.member(rank), stage, round)) {
                return new IllegalStateException("producer rank " + rank + " (" + region.maker(rank) + ") died "
                    + "before batch " + (round * ring.settings.stageCount() + stage) + " of stage " + stage
                    + ": the batch lacks its share");
            }
        }
        return null;
    }

    /**
     * "; rank 1 (pid 4711 ...) died without quit" for each rank a survivor left for, "; rank 0 (pid ...): its thread
     * ended without quit()" for each rank its own process left for, or "".
     */
    String deaths() {
        List<String> dead = new ArrayList<>();
        for (int rank = 0; rank < ring.groupSize; rank++) {
            int state = region.state(rank);
            if (state == RegionStages.REAPED) {
                dead.add("rank " + rank + " (" + region.maker(rank) + ") died without quit");
            } else if (state == RegionStages.ENDED) {
                dead.add("rank " + rank + " (" + region.maker(rank) + "): its thread ended without quit()");
            } else if (state == RegionStages.CLOSED) {
                dead.add("rank " + rank + " (" + region.maker(rank) + "): its region was closed without quit()");
            }
        }
        return dead.isEmpty() ? "" : "; " + String.join("; ", dead);
    }

    /** Leaves for rank {@code rank}, named {@code who} in failure records, as its quit would have. */
    void leaveFor(int rank, String who) {
        int side = region.side(rank);
        int member = region.member(rank);
        boolean produces = side == RegionStages.PRODUCER || side == RegionStages.BOTH;
        boolean consumes = side == RegionStages.CONSUMER || side == RegionStages.BOTH;
        if (side < RegionStages.UNDECIDED || side > RegionStages.BOTH || member < 0
            || produces && member >= ring.producerCount || consumes && member >= ring.consumerCount) {
            throw new IllegalStateException(region.what + ": rank " + rank + "'s place is corrupted (side " + side
                + ", member " + member + " of " + ring.producerCount + " producers and " + ring.consumerCount
                + " consumers)");
        }
        if (side == RegionStages.UNDECIDED) {
            ring.drop(ring.sides.quitUndecided());
        }
        if (produces) {
            region.producerDied();      // before its drops: a consumer whose wait they complete sees the count
        }
        RuntimeException failure = produces ? leaveProducer(rank, member, who) : null;
        if (consumes) {
            failure = leaveConsumer(rank, member, failure);
        }
        ring.releaseOwner();
        if (failure != null) {
            throw failure;      // a corrupted word: the rank left everywhere else all the same
        }
    }

    /** @return the first drop that failed (the others suppressed in it), or null */
    private RuntimeException leaveProducer(int rank, int member, String who) {
        PhaseBarrier[] words = ring.produced.of(member);
        int stages = words.length;
        long committed = region.committed(rank);
        long acquired = region.acquired(rank);
        if (committed < 0 || acquired < 0) {
            throw new IllegalStateException(region.what + ": rank " + rank + "'s cursors are corrupted (committed "
                + committed + ", acquired " + acquired + ")");
        }
        if (arrived(words[(int) (committed % stages)], committed / stages)) {
            committed++;                // it died between its commit and the cursor's update
        }
        if (acquired == committed + 1) {
            int stage = (int) (committed % stages);
            fail(words[stage], committed / stages, "producer " + who + " died after acquiring stage " + stage
                + " (batch " + committed + ") without committing it");
            committed++;
        }
        for (long batch = Math.max(0, committed - stages); batch < committed; batch++) {
            int stage = (int) (batch % stages);
            if (!words[stage].isComplete((int) (batch / stages))) {
                fail(words[stage], batch / stages, "the copies that producer " + who + " tied to stage " + stage
                    + " (batch " + batch + ") never landed: its process died");
            }
        }
        return ring.produced.dropAll(member, (int) (committed % stages), committed / stages, null);
    }

    /** @return {@code failure}, or else the first drop that failed (the others suppressed in it), or null */
    private RuntimeException leaveConsumer(int rank, int member, RuntimeException failure) {
        PhaseBarrier[] words = ring.consumed.of(member);
        int stages = words.length;
        long released = region.released(rank);
        if (released < 0) {
            throw new IllegalStateException(region.what + ": rank " + rank + "'s release count is corrupted ("
                + released + ")");
        }
        if (arrived(words[(int) (released % stages)], released / stages)) {
            released++;                 // it died between its release and the cursor's update
        }
        return ring.consumed.dropAll(member, (int) (released % stages), released / stages, failure);
    }

    /**
     * Whether a lone member has arrived at phase {@code round} of its {@code word}: the word is one phase past it,
     * or at it with the arrival counted. The word may also be a phase before {@code round}: a producer that waits
     * to acquire batch {@code round} of the stage while the batch of the round before still waits for its copies.
     * The arrival counted there is that earlier round's commit, not one of {@code round} (isComplete alone cannot
     * tell: a phase before the round is "not at the round" too). One read of the word, so that the phase and the
     * arrivals are of one moment.
     */
    static boolean arrived(PhaseBarrier word, long round) {
        long s = word.snapshot();
        int ahead = (PhaseBarrier.phaseOf(s) - (int) round) & PhaseBarrier.PHASE_MASK;
        return ahead == 1 || ahead == 0 && PhaseBarrier.arrivedOf(s) > 0;
    }

    /** Fails phase {@code round} of a dead member's word and completes it without the arrivals it lacks. */
    private static void fail(PhaseBarrier word, long round, String why) {
        word.recordFailure((int) round, new IllegalStateException(why));
        word.completeWithout((int) round, 1);
    }
}
