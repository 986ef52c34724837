package dev.jpipeline;

import dev.jpipeline.internal.PhaseBarrier;
import dev.jpipeline.internal.TraceLane;
import dev.jpipeline.internal.WaitSite;
import dev.jpipeline.internal.WaitStatus;
import dev.jpipeline.trace.StageOperation;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * A block-, device- or system-scope pipeline handle: one per participating thread, over a {@link StageRing}.
 *
 * <pre>
 * Algorithm (libcu++'s, with round counters in place of parity bits)
 *
 *   producerAcquire : wait consumed[head] until phase headRound - 1 completed (round 0 is free)
 *   producerCommit  : arrive produced[head]; head++ (wrap: head = 0, headRound++)
 *   consumerWait    : wait produced[tail] until phase tailRound completed
 *   consumerRelease : arrive consumed[tail]; tail++ (wrap: tail = 0, tailRound++)
 *   quit            : for every stage s, drop this thread from produced[s] from the round of its next commit
 *                     there, and from consumed[s] from the round of its next release there
 *
 * Waits change no state, so they are idempotent; only commit and release move a cursor. The handle's fields
 * are confined to its thread (plain fields); all cross-thread communication goes through the barriers.
 * </pre>
 */
final class SharedStatePipeline extends Pipeline implements WaitSite {

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

    private final PipelineSharedState state;
    private final StageRing ring;
    private final PhaseBarrier[] produced;
    private final PhaseBarrier[] consumed;
    private final int stages;
    private final int rank;
    private final long spins;
    private final long yields;
    /** This handle's trace, or null when the pipeline is not traced (one null check per operation). */
    private final TraceLane trace;
    /** Per stage: this handle's asynchronous copies; created on the first asynchronous copy into the stage. */
    private StageCopies[] copies;
    /** Fixed at creation, or (count partition) by the first operation: null until then. */
    private Side side;
    private final Thread owner = Thread.currentThread();

    private int head;
    private int headRound;
    private int tail;
    private int tailRound;
    private boolean acquired;
    private boolean waited;
    private boolean active = true;
    /** What the thread waits for while it is in a wait: only read to describe a blocked thread. */
    private String waitOp;
    private PhaseBarrier waitBarrier;
    private int waitStage;
    private long waitBatch;

    private SharedStatePipeline(PipelineSharedState state, StageRing ring, int rank, Side side) {
        this.state = state;
        this.ring = ring;
        this.produced = ring.produced;
        this.consumed = ring.consumed;
        this.stages = produced.length;
        this.rank = rank;
        this.side = side;
        this.spins = ring.waitStrategy.spins();
        this.yields = ring.waitStrategy.yields();
        this.trace = ring.tracer == null ? null
            : ring.tracer.lane(owner.getName(), rank, side == null ? "partitioned" : side.label());
        if (ring.detector != null) {
            ring.detector.register(rank, owner);
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // Creation (collective)

    static Pipeline makeUnified(Group group, PipelineSharedState state) {
        int[] sizeRank = checkGroup(group, state);
        int n = sizeRank[0];
        if (sizeRank[1] == 0) {
            state.publish(new StageRing(StageRing.Kind.UNIFIED, state.stageCount(), n, n, n, state));
        }
        group.sync();
        StageRing ring = agreedRing(state, StageRing.Kind.UNIFIED, n, n);
        return new SharedStatePipeline(state, ring, sizeRank[1], Side.BOTH);
    }

    static Pipeline makeByCount(Group group, PipelineSharedState state, int producerCount) {
        int[] sizeRank = checkGroup(group, state);
        int n = sizeRank[0];
        checkProducerCount(producerCount, n, "producer count");
        if (sizeRank[1] == 0) {
            state.publish(new StageRing(StageRing.Kind.BY_COUNT, state.stageCount(), n, producerCount,
                n - producerCount, state));
        }
        group.sync();
        StageRing ring = agreedRing(state, StageRing.Kind.BY_COUNT, n, producerCount);
        // As in CUDA the caller decides which threads produce: the side is fixed by the thread's first
        // operation, and the ring refuses more than producerCount producers (or consumers beyond the rest).
        return new SharedStatePipeline(state, ring, sizeRank[1], null);
    }

    static Pipeline makeByRole(Group group, PipelineSharedState state, PipelineRole role) {
        Objects.requireNonNull(role, "role");
        int[] sizeRank = checkGroup(group, state);
        int n = sizeRank[0];
        int rank = sizeRank[1];
        if (rank == 0) {
            state.publish(null);
            state.resetCensus();
        }
        group.sync();                                   // #1: the census is reset
        if (role == PipelineRole.PRODUCER) {
            state.countProducer();
        }
        group.sync();                                   // #2: every producer is counted
        int producers = state.census();
        if (rank == 0 && producers >= 1 && producers < n) {
            state.publish(new StageRing(StageRing.Kind.BY_ROLE, state.stageCount(), n, producers, n - producers,
                state));
        }
        group.sync();                                   // #3: the ring is published
        checkProducerCount(producers, n, "number of threads with role PRODUCER");
        StageRing ring = agreedRing(state, StageRing.Kind.BY_ROLE, n, producers);
        return new SharedStatePipeline(state, ring, rank,
            role == PipelineRole.PRODUCER ? Side.PRODUCER : Side.CONSUMER);
    }

    private static int[] checkGroup(Group group, PipelineSharedState state) {
        Objects.requireNonNull(group, "group");
        Objects.requireNonNull(state, "state");
        int n = group.size();
        int rank = group.threadRank();
        if (n < 1 || n > PhaseBarrier.MAX_PARTIES) {
            throw new IllegalArgumentException(
                "group size must be in 1.." + PhaseBarrier.MAX_PARTIES + ", got " + n);
        }
        if (rank < 0 || rank >= n) {
            throw new IllegalArgumentException("thread rank must be in 0.." + (n - 1) + ", got " + rank);
        }
        return new int[] {n, rank};
    }

    private static void checkProducerCount(int producers, int n, String what) {
        if (producers < 1 || producers > n - 1) {
            throw new IllegalArgumentException("a partitioned pipeline needs 1.." + (n - 1)
                + " producers in a group of " + n + " (at least one producer and one consumer); the "
                + what + " is " + producers);
        }
    }

    /** Best-effort check that every thread made the pipeline the same way (CUDA: undefined behaviour). */
    private static StageRing agreedRing(PipelineSharedState state, StageRing.Kind kind, int n, int producers) {
        StageRing ring = state.ring();
        if (ring == null || ring.kind != kind || ring.groupSize != n || ring.producerCount != producers) {
            throw new IllegalArgumentException("every thread of the group must make the pipeline the same way: "
                + "this thread asked for a " + kind + " pipeline of " + n + " threads with " + producers
                + " producers, but rank 0 made " + (ring == null ? "none" : "a " + ring.kind + " pipeline of "
                + ring.groupSize + " threads with " + ring.producerCount + " producers"));
        }
        return ring;
    }

    // ---------------------------------------------------------------------------------------------------------
    // Producer side

    @Override
    public void producerAcquire() {
        if (acquireStatus(false) != WaitStatus.COMPLETE) {
            throw new AssertionError("an uninterruptible acquire cannot end otherwise");
        }
    }

    @Override
    public void producerAcquireInterruptibly() throws InterruptedException {
        if (acquireStatus(true) == WaitStatus.INTERRUPTED) {
            throw new InterruptedException("interrupted in producer_acquire: " + who() + " at stage " + head);
        }
    }

    private WaitStatus acquireStatus(boolean interruptible) {
        enter("producer_acquire", Side.PRODUCER);
        if (acquired) {
            return WaitStatus.COMPLETE;
        }
        if (side == Side.BOTH && committed() - released() >= stages) {
            throw new IllegalStateException("producer_acquire would wait forever: " + who() + " has committed "
                + stages + " batches it has not released itself, and stage " + head
                + " cannot be free before it releases them (at most " + stages + " stages ahead)");
        }
        long start = trace == null ? 0 : trace.now();
        if (headRound > 0) {
            WaitStatus status = await(consumed[head], headRound - 1, PhaseBarrier.NO_DEADLINE, interruptible,
                "producer_acquire", head, committed());
            if (status == WaitStatus.ABANDONED) {
                throw new IllegalStateException("producer_acquire can never return: no consumer is left to "
                    + "release stage " + head + " (batch " + (committed() - stages) + "); " + who());
            }
            if (status != WaitStatus.COMPLETE) {
                return status;
            }
        }
        acquired = true;
        if (trace != null) {
            trace.record(StageOperation.ACQUIRE, start, head, committed());
        }
        return WaitStatus.COMPLETE;
    }

    @Override
    public void producerCommit() {
        enter("producer_commit", Side.PRODUCER);
        if (!acquired) {
            throw new IllegalStateException("producer_commit without producer_acquire: " + who()
                + " has not acquired stage " + head + " (batch " + committed() + ")");
        }
        acquired = false;
        if (trace != null) {
            trace.record(StageOperation.COMMIT, trace.now(), head, committed());
        }
        StageCopies inFlight = copies == null ? null : copies[head];
        if (inFlight != null && inFlight.isOpen()) {
            inFlight.commit();          // the stage also waits for the copies to land (maybe they have)
        } else {
            produced[head].arrive(1);
        }
        if (++head == stages) {
            head = 0;
            headRound++;
        }
    }

    @Override
    AsyncContractFulfillment copy(MemorySegment dst, MemorySegment src) {
        enterCopy("memcpy_async");
        if (ring.copyEngine.runsInline(dst.byteSize())) {
            long start = trace == null ? 0 : trace.now();
            MemorySegment.copy(src, 0, dst, 0, dst.byteSize());
            if (trace != null) {
                trace.record(StageOperation.COPY, start, head, committed());
            }
            return AsyncContractFulfillment.NONE;
        }
        ring.copyEngine.copy(dst, src, headCopies());
        return AsyncContractFulfillment.ASYNC;
    }

    @Override
    AsyncContractFulfillment read(MemorySegment dst, FileChannel channel, long position) {
        enterCopy("memcpy_async (file)");
        ring.copyEngine.read(dst, channel, position, headCopies());
        return AsyncContractFulfillment.ASYNC;
    }

    private void enterCopy(String op) {
        enter(op, Side.PRODUCER);
        if (!acquired) {
            throw new IllegalStateException(op + " into a stage that is not acquired: " + who()
                + " must call producer_acquire before copying into stage " + head);
        }
    }

    /** The head stage's copy tracker, with one more copy attached. */
    private StageCopies headCopies() {
        if (copies == null) {
            copies = new StageCopies[stages];
        }
        StageCopies c = copies[head];
        if (c == null) {
            c = copies[head] = new StageCopies(ring, head, trace);
        }
        c.attach(headRound);
        return c;
    }

    /** Waits for a stage barrier's phase; with deadlock detection on, reports stalls to the detector. */
    private WaitStatus await(PhaseBarrier barrier, int round, long deadline, boolean interruptible, String op,
                             int stage, long batch) {
        if (barrier.isComplete(round)) {
            return WaitStatus.COMPLETE;         // the fast path: no bookkeeping
        }
        waitOp = op;
        waitBarrier = barrier;
        waitStage = stage;
        waitBatch = batch;
        DeadlockDetector detector = ring.detector;
        if (detector == null) {
            return barrier.await(round, deadline, interruptible, 0, spins, yields, this);
        }
        boolean reported = false;
        long[] lastLook = null;
        try {
            for (;;) {
                WaitStatus status = barrier.await(round, deadline, interruptible, detector.patienceNanos(), spins,
                    yields, this);
                if (status != WaitStatus.STALLED) {
                    return status;
                }
                if (!reported) {
                    detector.stalled(rank, who() + " waits in " + op + " for stage " + stage + " (batch " + batch + ")");
                    reported = true;
                }
                lastLook = detector.check(ring, lastLook);
            }
        } finally {
            if (reported) {
                detector.resumed(rank);
            }
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // Consumer side

    @Override
    public void consumerWait() {
        waitStatus("consumer_wait", PhaseBarrier.NO_DEADLINE, false);
    }

    @Override
    public void consumerWaitInterruptibly() throws InterruptedException {
        if (waitStatus("consumer_wait", PhaseBarrier.NO_DEADLINE, true) == WaitStatus.INTERRUPTED) {
            throw new InterruptedException("interrupted in consumer_wait: " + who() + " at stage " + tail);
        }
    }

    @Override
    public boolean consumerWaitFor(Duration timeout) {
        return waitStatus("consumer_wait_for", Deadlines.fromTimeout(timeout), false) == WaitStatus.COMPLETE;
    }

    @Override
    public boolean consumerWaitUntil(Instant deadline) {
        return waitStatus("consumer_wait_until", Deadlines.fromInstant(deadline), false) == WaitStatus.COMPLETE;
    }

    private WaitStatus waitStatus(String op, long deadline, boolean interruptible) {
        enter(op, Side.CONSUMER);
        if (waited) {
            return WaitStatus.COMPLETE;
        }
        if (side == Side.BOTH && released() == committed() && deadline == PhaseBarrier.NO_DEADLINE) {
            throw new IllegalStateException(op + " would wait forever: " + who() + " waits for batch "
                + released() + " in stage " + tail + ", which it has not committed itself");
        }
        long start = trace == null ? 0 : trace.now();
        WaitStatus status = await(produced[tail], tailRound, deadline, interruptible, op, tail, released());
        if (status == WaitStatus.ABANDONED) {
            throw new IllegalStateException(op + " can never return: no producer is left to commit stage "
                + tail + " (batch " + released() + "); " + who());
        }
        waited = status == WaitStatus.COMPLETE;
        if (waited && trace != null) {
            trace.record(StageOperation.WAIT, start, tail, released());
        }
        if (waited) {
            Throwable failure = ring.failure(tail, tailRound);
            if (failure != null) {
                throw new StageFailedException(tail, released(), failure);
            }
        }
        return status;
    }

    @Override
    public void consumerRelease() {
        enter("consumer_release", Side.CONSUMER);
        if (!waited) {
            throw new IllegalStateException("consumer_release without a completed consumer_wait: " + who()
                + " has not waited for stage " + tail + " (batch " + released() + ")");
        }
        waited = false;
        if (trace != null) {
            trace.record(StageOperation.RELEASE, trace.now(), tail, released());
        }
        consumed[tail].arrive(1);
        if (++tail == stages) {
            tail = 0;
            tailRound++;
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // Leaving

    @Override
    public boolean quit() {
        assert owner == Thread.currentThread() : "a pipeline handle belongs to the thread that made it";
        if (!active) {
            return false;
        }
        active = false;
        Side leaving = side;
        if (leaving == null) {
            StageRing.QuitSide claimed = ring.claimForQuit();
            leaving = claimed == StageRing.QuitSide.PRODUCER ? Side.PRODUCER
                : claimed == StageRing.QuitSide.CONSUMER ? Side.CONSUMER : null;
        }
        for (int s = 0; s < stages && leaving != null; s++) {
            if (leaving.produces()) {
                produced[s].dropFromRound(s < head ? headRound + 1 : headRound);
            }
            if (leaving.consumes()) {
                consumed[s].dropFromRound(s < tail ? tailRound + 1 : tailRound);
            }
        }
        if (ring.detector != null) {
            ring.detector.quit(rank);
        }
        return ring.releaseOwner();
    }

    @Override
    public boolean isActive() {
        return active;
    }

    @Override
    public ThreadScope scope() {
        return state.scope();
    }

    // ---------------------------------------------------------------------------------------------------------
    // Rule checks

    /** Checks that this handle may perform {@code op}, which belongs to {@code needed}'s side. */
    private void enter(String op, Side needed) {
        assert owner == Thread.currentThread() : "a pipeline handle belongs to the thread that made it";
        if (!active) {
            throw new IllegalStateException(op + " after quit: " + who() + " has left the pipeline");
        }
        if (side == null) {
            side = ring.claim(needed == Side.PRODUCER, rank) ? Side.PRODUCER : Side.CONSUMER;
        }
        boolean allowed = needed == Side.PRODUCER ? side.produces() : side.consumes();
        if (!allowed) {
            throw new IllegalStateException(op + " is a " + needed.label() + " operation, but " + who()
                + " is a " + side.label() + " (stage " + (needed == Side.PRODUCER ? head : tail) + ")");
        }
    }

    private long committed() {
        return (long) headRound * stages + head;
    }

    private long released() {
        return (long) tailRound * stages + tail;
    }

    private String who() {
        return "rank " + rank + " (" + (side == null ? "role not yet taken" : side.label()) + ")";
    }

    @Override
    public String describeWait() {
        boolean forRelease = waitBarrier != produced[waitStage];
        return who() + " waits in " + waitOp + " for stage " + waitStage + " (batch " + waitBatch + "): "
            + (forRelease ? "consumed" : "produced") + " barrier at " + waitBarrier + " (" + ring.producerCount
            + " producers, " + ring.consumerCount + " consumers)";
    }

    @Override
    public String toString() {
        return "Pipeline[" + state.scope() + ", " + who() + ", head " + head + ", tail " + tail
            + (active ? "" : ", quit") + "]";
    }
}
