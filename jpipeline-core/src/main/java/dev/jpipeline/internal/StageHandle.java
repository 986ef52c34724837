package dev.jpipeline.internal;

import dev.jpipeline.AsyncContractFulfillment;
import dev.jpipeline.CopyPolicy;
import dev.jpipeline.StageFailedException;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.WaitStrategy;
import dev.jpipeline.internal.copy.CopyLanding;
import dev.jpipeline.internal.copy.CopyService;
import dev.jpipeline.internal.trace.TraceSink;
import dev.jpipeline.internal.wait.Deadlines;
import dev.jpipeline.internal.wait.StallWatch;
import dev.jpipeline.internal.wait.WaitSite;
import dev.jpipeline.internal.wait.WaitStatus;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.channels.FileChannel;

/**
 * A block-, device- or system-scope pipeline handle: one per participating thread, over a {@link StageRing}.
 *
 * <pre>
 * Algorithm (libcu++'s, with round counters in place of parity bits)
 *
 * Each side (StageSide) splits its members into groups, each with a barrier per stage; "wait side[s]" below waits
 * for every group's barrier of stage s (a deserted group, whose members all quit, is skipped; every group
 * deserted is abandonment), "arrive side[s]" arrives at this thread's group's barrier only.
 *
 *   producerAcquire : wait consumed[head] until phase headRound - 1 completed (round 0 is free); when
 *                     headRound mod 4096 is 0 or 1, forget this group's produced[head] failure records of earlier
 *                     phases of headRound's parity (failures are kept per phase mod 2^23: one that nobody replaces
 *                     would otherwise be read again 2^23 rounds later; every consumer has read it, see below)
 *   memcpyAsync     : small, or a producer-only thread under CopyPolicy ON_ISSUING_THREAD (or AUTO without cores
 *                     to spare): copy inline; else this group's produced[head].tieCopy(), the copy lands with
 *                     copyLanded()
 *   producerCommit  : arrive produced[head]; head++ (wrap: head = 0, headRound++)
 *   consumerWait    : wait produced[tail] until phase tailRound completed; a failure record, if any, throws
 *   consumerRelease : arrive consumed[tail]; tail++ (wrap: tail = 0, tailRound++)
 *   quit            : for every stage s, drop this thread from its group's produced[s] from the round of its next
 *                     commit there, and from its group's consumed[s] from the round of its next release there
 *
 * Fast paths (a hand-off should cost what an SPSC ring costs):
 *  - look-ahead: a consumer that finds batch t complete scans on and remembers how many batches it knows
 *    complete (readyKnown); a producer that finds batch b - S released remembers how many batches it knows
 *    released by every consumer (releasedKnown). Later waits within what is known read no shared line. Sound
 *    because phases only move forward, every consumer releases in batch order, and within S batches of a known
 *    one each word's phase is exactly the round asked about or the next (StageRing's invariant), so a scan never
 *    misreads a phase.
 *  - solo groups: when a thread is alone in its group (every thread is, on a side of up to 8), nothing but that
 *    thread writes its group's words, except copies it tied to the stage (they land with a CAS) and drops (by
 *    itself, or for a thread that ended). So its arrival is a release store (PhaseBarrier.arriveAlone), unless it
 *    tied a copy to the stage it commits: then it arrives with the CAS loop like everyone else.
 *
 * What else follows the handle (tracing, checked execution, a shared region's cursors) is told through one seam,
 * HandleEvents, after each operation; the handle holds only the protocol and its misuse messages. Checked
 * execution also hears of every wait that does not return at once (awaitChecked), so that it can land held-back
 * copies the wait needs. In a shared region, a run of timed waits that give up looks for dead processes every
 * SharedWord.CHECK_NANOS across the calls.
 *
 * Waits change no state, so they are idempotent; only commit and release move a cursor. The cursors are plain
 * fields confined to the owner; all cross-thread communication goes through the barriers. Two exceptions, both
 * off the fast path: the hang detector reads what a stalled handle waits for (volatile), and abandons a handle
 * whose owner has ended, reading its cursors after ownerEnded() returned true (the owner's end, a thread's
 * termination or a logical thread's volatile finish, happens-before that) and claiming it with a CAS on `active`,
 * as quit() does.
 * </pre>
 */
final class StageHandle extends PipelineHandle implements HangDetector.Participant, StallWatch, WaitSite {

    /** What this thread may do: a partitioned pipeline's producer or consumer, or a unified thread (both). */
    private enum Side {
        PRODUCER, CONSUMER, BOTH;

        boolean produces() {
            return this != CONSUMER;
        }

        boolean consumes() {
            return this != PRODUCER;
        }

        String label() {
            return this == BOTH ? "unified" : name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    final StageRing ring;               // package-private: tests' EngineProbe reads it
    /** The sides: waits read every group of the other side's stage. */
    final StageSide produced;           // package-private, as are the rounds below: EngineProbe
    final StageSide consumed;
    /** This thread's group's barriers on the side(s) it takes (one per stage): set with the side, else null. */
    private PhaseBarrier[] myProduced;
    private PhaseBarrier[] myConsumed;
    /** This thread's number on its side(s) (StageSide): set with the side. */
    private int member;
    /** Whether this thread is alone in its group on that side: its arrivals there are arriveAlone stores. */
    private boolean commitAlone;
    private boolean releaseAlone;
    private final int stages;
    private final int rank;
    private final WaitStrategy strategy;
    private final CopyService copies;
    /** What follows this handle's operations (HandleEvents.NONE when nothing does): set once, in the constructor. */
    private final HandleEvents events;
    /** What watches this handle's stalled waits and runs of polls (RingHome.stallWatch), or null: set once. */
    private final StallWatch watch;
    /** Fixed at creation, or (count partition) by the first operation: null until then. */
    private Side side;

    /** Where this thread's large copies run. */
    private final CopyPolicy copyPolicy;
    /** CopyPolicy.AUTO's test: whether the machine has no more processors than twice the pipeline's threads. */
    private final boolean fewCores;

    private int head;
    /**
     * Rounds completed by the head and the tail: long, so that they never wrap (2^31 rounds pass in minutes of a
     * fast single-stage pipeline, and a wrapped round would disable the waits and the look-ahead bounds). Barriers
     * get the round's low 32 bits, which they compare modulo 2^23.
     */
    long headRound;
    private int tail;
    long tailRound;
    /** Batches below this one are known released by every consumer (the producer's look-ahead). */
    private long releasedKnown;
    /** Batches below this one are known complete (the consumer's look-ahead). */
    private long readyKnown;
    private boolean acquired;
    /** Whether a copy was handed off for the acquired stage (its landing writes the word: no solo store then). */
    private boolean tiedHead;
    private boolean waited;
    /** Owner-written; CAS by quit() and abandon() so that exactly one of them leaves; read by the detector. */
    private volatile boolean active = true;
    /** The misuse exception this handle last threw, until its next operation (the hang detector reads it). */
    private volatile Throwable fault;
    /** What the owner waits for while a wait of its has stalled, else null (the hang detector reads it). */
    private volatile String stalledIn;
    /**
     * The barrier of the owner's latest wait that did not return at once: written on the slow path only, plain
     * (a hang report that reads it racily reads a whole reference, never a torn one; no fence on the wait path).
     */
    private PhaseBarrier waitingOn;
    /** The round of {@link #waitingOn} waited for: written with it. */
    private int waitingRound;
    /**
     * Owner-confined: when a run of timed waits that gave up began, or its watch last looked (pollTimedOut); 0 when
     * no run is under way.
     */
    private long pollingSince;

    /** Checked execution's layer of {@link #events}, or null: told which operation each completed wait was. */
    private final CheckedEvents checkedEvents;

    /**
     * @param producer for a role partition, whether this thread produces; null for unified and count partitions
     * @param member   the thread's number on its side: a role partition's count of lower ranks of the same role,
     *                 a unified pipeline's rank; ignored by a count partition (its first operation claims one)
     */
    StageHandle(StageRing ring, int rank, Boolean producer, int member) {
        super(ring.settings.interleaver());
        this.ring = ring;
        this.produced = ring.produced;
        this.consumed = ring.consumed;
        this.stages = ring.settings.stageCount();
        this.rank = rank;
        this.strategy = ring.settings.strategy();
        this.copies = copiesFor(ring.settings.copies());
        this.copyPolicy = ring.settings.copyPolicy();
        this.fewCores = Runtime.getRuntime().availableProcessors() <= 2 * ring.groupSize;
        this.side = switch (ring.kind) {
            case UNIFIED -> Side.BOTH;
            case BY_COUNT -> null;
            case BY_ROLE -> producer ? Side.PRODUCER : Side.CONSUMER;
        };
        if (side != null) {
            join(member);
        }
        TraceSink sink = ring.settings.trace();
        this.checkedEvents = interleaver == null ? null : new CheckedEvents(interleaver, ring);
        this.events = HandleEvents.of(
            checkedEvents,
            sink == null ? null : new TracedEvents(sink.lane(ownerName(), rank,
                side == null ? "partitioned" : side.label()), stages),
            ring.home.cursors(rank));
        this.watch = ring.home.stallWatch(this);
        ring.home.joined(this);
        if (logicalOwner != null) {
            logicalOwner.onEnd(this);              // its thread's end leaves for it, at once, every time
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // Producer side

    @Override
    public void producerAcquire() {
        acquire(false);
    }

    @Override
    public void producerAcquireInterruptibly() throws InterruptedException {
        // an interrupt status set on entry throws, free stage or not, as java.util.concurrent's acquireInterruptibly
        if (Thread.interrupted() || acquire(true) == WaitStatus.INTERRUPTED) {
            throw new InterruptedException("interrupted in producer_acquire: " + who() + " at stage " + head);
        }
    }

    private WaitStatus acquire(boolean interruptible) {
        enter("producer_acquire", Side.PRODUCER);
        if (acquired) {
            return WaitStatus.COMPLETE;
        }
        if (side == Side.BOTH && committed() - released() >= stages) {
            throw misuse("producer_acquire would wait forever: " + who() + " has committed " + stages
                + " batches it has not released itself, and stage " + head + " cannot be free before it releases "
                + "them (at most " + stages + " stages ahead)");
        }
        long start = events.now();
        if (headRound > 0 && committed() - stages >= releasedKnown) {
            WaitStatus status = awaitSide(consumed, head, headRound - 1, Deadlines.NO_DEADLINE, interruptible);
            if (status == WaitStatus.ABANDONED) {
                if (checkedEvents != null) {
                    checkedEvents.abandoned(false, head, committed() - stages, "producer_acquire");
                }
                throw new IllegalStateException("producer_acquire can never return: no consumer is left to "
                    + "release stage " + head + " (batch " + (committed() - stages) + "); " + who()
                    + ring.departures());
            }
            if (status != WaitStatus.COMPLETE) {
                return status;
            }
            long next = committed() - stages + 1;      // the first batch not known released
            // a unified thread's own releases bound what can be released: it looks no further than them
            releasedKnown = next + lookAhead(consumed, head, (int) (headRound - 1),
                side == Side.BOTH ? released() - next : stages - 1);
        }
        if ((headRound & STALE_FAILURES) < 2) {
            // Forget failures recorded 2 or more rounds ago, which every consumer has read (the stage was released
            // since) and which would be read again 2^23 rounds later: once in every 4096 rounds of each parity.
            myProduced[head].clearStaleFailure((int) headRound);
        }
        acquired = true;
        events.acquired(head, headRound, committed(), start);
        return WaitStatus.COMPLETE;
    }

    @Override
    public void producerCommit() {
        enter("producer_commit", Side.PRODUCER);
        if (!acquired) {
            throw misuse("producer_commit without producer_acquire: " + who() + " has not acquired stage " + head
                + " (batch " + committed() + ")");
        }
        acquired = false;
        long start = events.now();
        int stage = head;
        if (commitAlone && !tiedHead) {
            myProduced[head].arriveAlone((int) headRound);
        } else {
            myProduced[head].arrive(1);     // the phase also waits for the stage's tied copies
        }
        tiedHead = false;
        if (++head == stages) {
            head = 0;
            headRound++;
        }
        events.committed(stage, committed() - 1, start);
    }

    @Override
    public AsyncContractFulfillment copy(MemorySegment dst, MemorySegment src) {
        enterCopy("memcpy_async");
        long start = events.now();
        AsyncContractFulfillment done = copies.copyInto(dst, src, myProduced[head],
            events.copying(head, headRound, committed(), start, dst, myProduced[head]), copyOnIssuer());
        tiedHead |= done != AsyncContractFulfillment.NONE;
        if (done == AsyncContractFulfillment.NONE) {
            events.copied(head, committed(), start);
        }
        return done;
    }

    @Override
    public AsyncContractFulfillment read(MemorySegment dst, FileChannel channel, long position) {
        enterCopy("memcpy_async (file)");
        tiedHead = true;                        // set first: the tie happens before readInto can fail
        CopyLanding landing = events.copying(head, headRound, committed(), events.now(), dst, myProduced[head]);
        return copies.readInto(dst, channel, position, myProduced[head], landing,
            copyPolicy == CopyPolicy.ON_ISSUING_THREAD);     // AUTO: on the engine, which keeps several in flight
    }

    /** The pipeline's {@link CopyPolicy} for this thread: whether it copies itself whatever the size. */
    private boolean copyOnIssuer() {
        return switch (copyPolicy) {
            case ON_ISSUING_THREAD -> true;
            case ON_COPY_ENGINE -> false;
            case AUTO -> side == Side.PRODUCER && fewCores;     // it would only wait, and no core is spare
        };
    }

    private void enterCopy(String op) {
        enter(op, Side.PRODUCER);
        if (!acquired) {
            throw misuse(op + " into a stage that is not acquired: " + who() + " must call producer_acquire "
                + "before copying into stage " + head);
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // Consumer side

    @Override
    WaitStatus waitForTail(String op, long deadline, boolean interruptible) {
        enter(op, Side.CONSUMER);
        if (waited) {
            throwIfFailed();                    // a failed stage stays failed until its release
            return WaitStatus.COMPLETE;
        }
        if (side == Side.BOTH && released() == committed()) {
            throw misuse(op + " would wait forever: " + who() + " waits for batch " + released() + " in stage "
                + tail + ", which it has not committed itself (a unified thread commits every batch it waits for)");
        }
        long start = events.now();
        if (released() >= readyKnown) {
            WaitStatus status = awaitSide(produced, tail, tailRound, deadline, interruptible);
            if (status == WaitStatus.ABANDONED) {
                if (checkedEvents != null) {
                    checkedEvents.abandoned(true, tail, released(), op);
                }
                throw new IllegalStateException(op + " can never return: no producer is left to commit stage "
                    + tail + " (batch " + released() + "); " + who() + ring.departures());
            }
            if (status != WaitStatus.COMPLETE) {
                return status;
            }
            // a unified thread's own commits bound what can be complete: it looks no further than them
            readyKnown = released() + 1 + lookAhead(produced, tail, (int) tailRound,
                side == Side.BOTH ? committed() - released() - 1 : stages - 1);
        }
        waited = true;
        if (checkedEvents != null) {
            checkedEvents.waitOp = op;          // consumer_wait, or a timed wait, which times out on a GPU
        }
        events.waited(tail, released(), start);
        throwIfFailed();
        return WaitStatus.COMPLETE;
    }

    private void throwIfFailed() {
        Throwable failure = produced.failureOf(tail, tailRound);
        if (failure == null) {
            failure = ring.missingShare(tail, tailRound);
        }
        if (failure != null) {
            throw new StageFailedException(tail, released(), failure);
        }
    }

    @Override
    public void consumerRelease() {
        enter("consumer_release", Side.CONSUMER);
        if (!waited) {
            throw misuse("consumer_release without a completed consumer_wait: " + who() + " has not waited for "
                + "stage " + tail + " (batch " + released() + ")");
        }
        waited = false;
        long start = events.now();
        int stage = tail;
        long round = tailRound;
        if (releaseAlone) {
            myConsumed[tail].arriveAlone((int) tailRound);
        } else {
            myConsumed[tail].arrive(1);
        }
        if (++tail == stages) {
            tail = 0;
            tailRound++;
        }
        events.released(stage, round, released() - 1, start);
    }

    /**
     * Phase {@code round} of {@code barriers[stage]} has completed: how many of the following batches (at most
     * {@code limit}, itself at most S - 1: the stages after it in order) have completed too, each phase read once
     * and the scan stopping at the first one that has not.
     */
    private int lookAhead(StageSide side, int stage, int round, long limit) {
        int known = 0;
        for (int s = stage, r = round; known < limit; known++) {
            if (++s == stages) {
                s = 0;
                r++;
            }
            if (!side.isComplete(s, r)) {
                break;
            }
        }
        return known;
    }

    /**
     * Waits until stage {@code stage} of {@code side} has completed round {@code round}: every group's barrier has,
     * or its members all quit before delivering it. The fast path reads one word per group. Sound because this
     * thread has seen round {@code round - 1} of the stage delivered by some group (batches complete in order), and
     * a live group's barrier is never more than one phase ahead of it, so a group whose phase is not
     * {@code round} (mod 2^23) either delivered it or is deserted, and the group that delivered the round before
     * is at phase {@code round} unless it delivered this one too. Whether a deserted group delivered a round is
     * decided by the round its members left from (StageSide.deserted), never by its frozen phase, which a long run
     * wraps around.
     *
     * <p>The hang detector's polling clock runs across the whole side's wait: only the side's completion ends it.
     *
     * @return COMPLETE; ABANDONED when every group is deserted at {@code round}; TIMED_OUT or INTERRUPTED
     */
    private WaitStatus awaitSide(StageSide side, int stage, long round, long deadline, boolean interruptible) {
        WaitStatus status = side.isComplete(stage, (int) round) ? WaitStatus.COMPLETE
            : awaitGroups(side, stage, round, deadline, interruptible);
        if (status == WaitStatus.TIMED_OUT && watch != null) {
            pollTimedOut();
        } else if (pollingSince != 0) {
            endPolling();
        }
        return status;
    }

    /** awaitSide's slow path: each group in turn, in the one wait routine, watched by the hang detector if on. */
    private WaitStatus awaitGroups(StageSide side, int stage, long round, long deadline, boolean interruptible) {
        PhaseBarrier[][] groups = side.groups;
        int deserted = 0;
        for (int g = 0; g < groups.length; g++) {
            PhaseBarrier barrier = groups[g][stage];
            WaitStatus status = WaitStatus.COMPLETE;
            if (!barrier.isComplete((int) round)) {
                waitingOn = barrier;
                waitingRound = (int) round;
                status = interleaver == null
                    ? barrier.await((int) round, deadline, interruptible, strategy, this, watch)
                    : awaitChecked(barrier, (int) round, deadline, interruptible, strategy, this, watch);
            }
            if (status == WaitStatus.ABANDONED || side.deserted(g, stage, round)) {
                deserted++;
            } else if (status != WaitStatus.COMPLETE) {
                return status;
            }
        }
        return deserted == groups.length ? WaitStatus.ABANDONED : WaitStatus.COMPLETE;
    }

    /**
     * A timed wait gave up. A peer that polls with short timeouts never stalls inside one wait, so the stall clock
     * runs across its polls: every quarter of the watch's patience of polling, it looks as a stalled wait would
     * (the hang detector's check; in a region, a look for dead processes).
     */
    private void pollTimedOut() {
        long now = System.nanoTime();
        if (pollingSince == 0) {
            pollingSince = now;
        } else if (now - pollingSince >= Math.max(1, watch.patienceNanos() / 4)) {
            pollingSince = now;
            watch.stalled(this);
        }
    }

    private void endPolling() {
        pollingSince = 0;
        stalledIn = null;
    }

    // ---------------------------------------------------------------------------------------------------------
    // Leaving

    @Override
    public boolean quit() {
        checkOwner("quit");
        if (!active || !ACTIVE.compareAndSet(this, true, false)) {
            return false;
        }
        if (!events.leaving(HandleEvents.Departure.QUIT)) {
            return false;           // a survivor left for it already (its process was taken for dead)
        }
        departing(HandleEvents.Departure.QUIT);
        return leave("quit");
    }

    /** Tells the layers which batches this departing handle will never commit or release. */
    private void departing(HandleEvents.Departure how) {
        events.departing(how, name(), side != null && side.produces() ? committed() : -1,
            side != null && side.consumes() ? released() : -1);
    }

    /**
     * Drops this handle's future arrivals (and, if it never took a side, settles its side). Ownership is given up
     * first: a peer that a drop wakes (and that then quits) must find this handle gone, so that it is the last
     * owner to quit. A step that fails (a corrupted word in a region) does not stop the others: the handle leaves
     * everywhere it can, then the first failure is thrown, the others suppressed in it.
     */
    private boolean leave(String how) {
        ring.home.left(this);
        RuntimeException failure = null;
        if (acquired) {
            // The batch cannot be delivered whole: it fails. The failure is recorded, then this producer's share
            // is committed as failed, so the batch completes (as failed) even when no other producer is left;
            // the drops below then start from the next batch, as after any commit.
            acquired = false;
            try {
                myProduced[head].recordFailure((int) headRound, new IllegalStateException("producer " + who() + " "
                    + how + " after acquiring stage " + head + " (batch " + committed() + ") without committing it"));
                myProduced[head].arrive(1);
            } catch (RuntimeException e) {
                failure = e;            // a corrupted word: leave everywhere else all the same
            }
            if (++head == stages) {
                head = 0;
                headRound++;
            }
        }
        boolean last = ring.releaseOwner();
        Side leaving = side;
        if (leaving == null) {
            ring.drop(ring.sides.quitUndecided(), interleaver);
        } else {
            if (leaving.produces()) {
                failure = produced.dropAll(member, head, headRound, failure);
            }
            if (leaving.consumes()) {
                failure = consumed.dropAll(member, tail, tailRound, failure);
            }
        }
        if (failure != null) {
            throw failure;
        }
        return last;
    }

    @Override
    public boolean isActive() {
        return active;
    }

    @Override
    public ThreadScope scope() {
        return ring.settings.scope();
    }

    // ---------------------------------------------------------------------------------------------------------
    // Rule checks

    /** Checks that the owner may perform {@code op}, which belongs to {@code needed}'s side. */
    private void enter(String op, Side needed) {
        checkOwner(op);
        if (fault != null) {
            fault = null;               // used again: no longer idle after a misuse exception
        }
        if (!active) {
            throw misuse(op + " after quit: " + who() + " has left the pipeline");
        }
        if (side == null) {
            claimSide(needed == Side.PRODUCER);
        }
        boolean allowed = needed == Side.PRODUCER ? side.produces() : side.consumes();
        if (!allowed) {
            throw misuse(op + " is a " + needed.label() + " operation, but " + who() + " is a " + side.label()
                + " (stage " + (needed == Side.PRODUCER ? head : tail) + ")");
        }
    }

    private void claimSide(boolean producer) {
        SideLedger.Claim claim;
        try {
            claim = ring.sides.claim(producer, rank, ring.groupSize);
        } catch (IllegalStateException tooMany) {
            fault = tooMany;
            throw tooMany;
        }
        side = producer ? Side.PRODUCER : Side.CONSUMER;
        events.sideTaken(producer, claim.member());
        join(claim.member());
        ring.drop(claim.settled(), interleaver);
    }

    /** Takes member number {@code member}'s barriers on the side(s) of {@link #side}. */
    private void join(int member) {
        this.member = member;
        if (side.produces()) {
            myProduced = produced.of(member);
            commitAlone = produced.alone(member);
        }
        if (side.consumes()) {
            myConsumed = consumed.of(member);
            releaseAlone = consumed.alone(member);
        }
    }

    /** A misuse exception, remembered for the hang detector until the handle's next operation. */
    private IllegalStateException misuse(String message) {
        IllegalStateException e = new IllegalStateException(message);
        fault = e;
        return e;
    }

    private long committed() {
        return headRound * stages + head;
    }

    private long released() {
        return tailRound * stages + tail;
    }

    private String who() {
        return "rank " + rank + " (" + (side == null ? "role not yet taken" : side.label()) + ")";
    }

    // ---------------------------------------------------------------------------------------------------------
    // The hang detector's view (other threads)

    @Override
    public Thread thread() {
        return owner;
    }

    @Override
    public boolean ownerEnded() {
        return ownerHasEnded();
    }

    @Override
    public boolean isGone() {
        return !active;
    }

    @Override
    public String stalledIn() {
        String in = stalledIn;
        PhaseBarrier on = waitingOn;
        // a waiter whose phase has completed is about to run, whatever its stale mark says
        return in == null || on == null || on.isComplete(waitingRound) ? null : in;
    }

    @Override
    public Throwable fault() {
        return fault;
    }

    @Override
    public String name() {
        return who() + " on thread '" + ownerName() + "'";
    }

    /**
     * The owner's thread has ended without quit: quit on its behalf. A stage it acquired and did not commit fails
     * (its data may be partial), so that its consumers get a StageFailedException instead of the stage.
     */
    @Override
    public void abandon() {
        leaveFor(HandleEvents.Departure.ENDED, "(its thread '" + ownerName() + "' ended)");
    }

    /** Whether this handle's pipeline is in the region mapping whose memory is {@code scope}. */
    boolean mappedIn(MemorySegment.Scope scope) {
        return ring.home.mappedIn(scope);
    }

    /**
     * The region mapping this handle's pipeline is in is closing: if the caller owns it, or its owner has ended,
     * it leaves as quit would (its slot says CLOSED, or ENDED), so that its peers go on or are told.
     *
     * @return false when its owner is another live thread: it is left alone
     */
    boolean regionClosed() {
        if (ownerHasEnded()) {
            abandon();
        } else if (Thread.currentThread() == owner) {
            leaveFor(HandleEvents.Departure.CLOSED, "(its region was closed without quit())");
        } else {
            return !active;
        }
        return true;
    }

    /**
     * Leaves on behalf of an owner that did not quit: an ended thread (any caller), or the owner closing the
     * region. A region slot records why (HandleEvents.leaving); in one process the ring's departures do.
     */
    private void leaveFor(HandleEvents.Departure how, String why) {
        if (!ACTIVE.compareAndSet(this, true, false) || !events.leaving(how)) {
            return;
        }
        departing(how);
        ring.home.departed(who() + "'s thread '" + ownerName() + "' ended without quit()");
        leave(why);
    }

    @Override
    public long patienceNanos() {
        return ring.home.patienceNanos();
    }

    @Override
    public void stalled(Object site) {
        stalledIn = waitDescription();
        String report = ring.home.check();
        if (report != null) {
            throw new IllegalStateException(report);
        }
    }

    @Override
    public void resumed() {
        stalledIn = null;
    }

    /** What the owner waits for (read by other threads while it waits: hang reports). */
    @Override
    public String describeWait() {
        return who() + " " + waitDescription();
    }

    /** What the owner waits for, without who it is (the hang detector names the participant itself). */
    private String waitDescription() {
        boolean acquiring = consumed.owns(waitingOn);
        return (acquiring
            ? "waits in producer_acquire for stage " + head + " (batch " + committed() + "): consumed barrier at "
                + consumed.describeRound(head, (int) (headRound - 1))
            : "waits in consumer_wait for stage " + tail + " (batch " + released() + "): produced barrier at "
                + produced.describeRound(tail, (int) tailRound))
            + " (" + ring.producerCount + " producers, " + ring.consumerCount + " consumers)";
    }

    @Override
    public RuntimeException faulted(InternalError fault) {
        return ring.home.faulted(fault, toString());
    }

    @Override
    public String toString() {
        return "Pipeline[" + scope() + ", " + who() + ", head " + head + ", tail " + tail + (active ? "" : ", quit")
            + "]";
    }

    /** Acquires of rounds r with {@code (r & STALE_FAILURES) < 2} forget their stage's stale failure records. */
    private static final long STALE_FAILURES = 4095;

    private static final VarHandle ACTIVE;

    static {
        try {
            ACTIVE = MethodHandles.lookup().findVarHandle(StageHandle.class, "active", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
