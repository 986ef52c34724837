package dev.jpipeline.internal.checked;

import dev.jpipeline.AsyncContractFulfillment;
import dev.jpipeline.internal.PhaseBarrier;
import dev.jpipeline.internal.copy.CopyLanding;
import dev.jpipeline.internal.copy.CopyService;
import dev.jpipeline.internal.copy.CopySubmission;
import dev.jpipeline.internal.copy.CopyWorkers;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Checked execution for pipelines of Java threads: the interleaver and copy service of a checked
 * {@code PipelineSharedState} (its pipelines) or of a checked {@code CopyEngine} (the thread-scope pipelines made
 * with it). It holds every copy back until a wait needs it, poisons ({@link Poison}) what holds no data, and
 * shakes the threads at every pipeline operation, so that a missing wait reads poison every time instead of
 * passing by luck.
 *
 * <pre>
 * Copies: every copy is deferred, whatever its size and the copy policy. Issue ties it to its target's current
 * phase (tieCopy: the phase cannot complete before the copy lands), tells its landing (copyHandedOff), poisons the
 * destination and queues the copy under (target, phase). It lands, performed by the thread that needs it, when
 *   (1) a wait for that phase begins (waitBegins: a stage's consumer_wait*, a thread-scope consumer_wait* or
 *       pipeline_consumer_wait_prior), on the waiting thread, before it waits;
 *   (2) it is issued while such a wait is under way (between waitBegins and waitEnds), on the issuing thread,
 *       before memcpy_async returns;
 *   (3) pipeline_producer_commit(pipe, barrier) ties it to a user's barrier (landNow), on the issuing thread:
 *       a barrier's waits are not pipeline operations, so no later point is sure to come;
 * and at no other point. A wait needs exactly the copies tied to the phase it waits for, so a read that no wait
 * has covered reads poison, whatever the seed and the interleaving. A poll (a wait with a zero timeout) may leave
 * the copies it needs queued, by a coin of the polling thread's stream, at most MAX_POLLS_PASSED times per copy:
 * a copy engine may be slower than a poll, and a polling consumer must cope. A copy that no wait ever needs never
 * lands, and its destination keeps the poison.
 *
 * No copy is missed, none lands twice: issue (queue it, or see a wait registered and land it) and waitBegins
 * (register, take the queue) each hold the lock, so a copy is either queued before the wait looks, and taken by
 * it, or sees the wait registered. A copy leaves the queue under the lock and lands outside it (its landing may
 * complete a phase and run a barrier's completion action). Landing clears the thread's interrupt status for the
 * copy (an interrupted FileChannel read closes the user's channel) and restores it.
 *
 * Stage poison: the destinations of round r's copies into a stage (stageCopy) are poisoned once every consumer has
 * released round r (stageFreed): the record is taken and poisoned under the lock. Both the last releaser and
 * every producer's acquire of round r + 1 (before it returns) call stageFreed, and whichever comes first poisons,
 * so the poison is complete before any producer can write the stage again, and never covers a later round.
 * Thread-scope batches are not poisoned on release (pipeline_consumer_wait_prior releases the very batches its
 * caller is about to read).
 *
 * Yields: at every pipeline operation the thread draws once from its own stream, derived from the seed and the
 * thread's name: carry on (1/2), spin 1 to MAX_SPIN times (1/4), or Thread.yield (1/4). With real threads this
 * shakes the interleaving; it does not choose it, and a run does not replay. Where copies land relative to each
 * thread's own operations (rules 1 to 3) is the same in every run.
 * </pre>
 */
public final class SeededInterleaver implements Interleaver, CopyService {

    /** How many polls may pass a queued copy by before one lands it. */
    static final int MAX_POLLS_PASSED = 2;
    /** The longest brief spin at an operation, in Thread.onSpinWait() calls (about a microsecond). */
    private static final int MAX_SPIN = 256;

    private final long seed;
    /** The engine whose closing refuses further copies (a checked CopyEngine's), or null (a checked state's). */
    private final CopyWorkers engine;
    /** Each thread's stream of decisions: confined to its thread. */
    private final ThreadLocal<SplittableRandom> streams = ThreadLocal.withInitial(this::newStream);

    private final ReentrantLock lock = new ReentrantLock();
    /** Guarded by lock: copies issued and not landed, by the phase they are tied to. */
    private final HashMap<PhaseKey, List<Deferred>> queued = new HashMap<>();
    /** Guarded by lock: waits under way, by the phase they wait for (a count: several consumers may wait). */
    private final HashMap<PhaseKey, Integer> waiting = new HashMap<>();
    /** Guarded by lock: destinations of the copies into each (ring, stage, round), until the round is freed. */
    private final HashMap<StageRound, List<MemorySegment>> destinations = new HashMap<>();

    /** A phase of a barrier: barriers compare by identity, phases modulo 2^23. */
    private record PhaseKey(PhaseBarrier barrier, int phase) {
    }

    private record StageRound(Object ring, int stage, long round) {
    }

    /** A copy issued and not landed: from memory ({@code src}) or from a file ({@code channel}). */
    private static final class Deferred {
        final MemorySegment dst;
        final MemorySegment src;
        final FileChannel channel;
        final long position;
        final CopyLanding landing;
        /** Guarded by the interleaver's lock: polls that left it queued. */
        int pollsPassed;

        Deferred(MemorySegment dst, MemorySegment src, FileChannel channel, long position, CopyLanding landing) {
            this.dst = dst;
            this.src = src;
            this.channel = channel;
            this.position = position;
            this.landing = landing;
        }
    }

    /**
     * @param seed   where every thread's stream of decisions comes from
     * @param engine the copy engine whose closing makes further copies fail, or null
     */
    public SeededInterleaver(long seed, CopyWorkers engine) {
        this.seed = seed;
        this.engine = engine;
    }

    /** The seed. */
    public long seed() {
        return seed;
    }

    private SplittableRandom newStream() {
        return new SplittableRandom(seed ^ Thread.currentThread().getName().hashCode() * 0x9E3779B97F4A7C15L);
    }

    // ---------------------------------------------------------------------------------------------------------
    // Scheduling points

    @Override
    public void operation(String op) {
        long draw = streams.get().nextLong();
        switch ((int) (draw & 3)) {
            case 2 -> {
                for (int spins = (int) ((draw >>> 2) & (MAX_SPIN - 1)); spins >= 0; spins--) {
                    Thread.onSpinWait();
                }
            }
            case 3 -> Thread.yield();
            default -> {
            }
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // Deferred copies

    @Override
    public CopyService copies(CopyService configured) {
        return this;
    }

    @Override
    public AsyncContractFulfillment copyInto(MemorySegment dst, MemorySegment src, PhaseBarrier target,
                                             CopyLanding landing, boolean onIssuer) {
        return defer(new Deferred(dst, src, null, 0, landing), target);
    }

    @Override
    public AsyncContractFulfillment readInto(MemorySegment dst, FileChannel channel, long position,
                                             PhaseBarrier target, CopyLanding landing, boolean onIssuer) {
        return defer(new Deferred(dst, null, channel, position, landing), target);     // held back like any copy
    }

    private AsyncContractFulfillment defer(Deferred copy, PhaseBarrier target) {
        if (engine != null && engine.isClosed()) {
            throw new IllegalStateException("copy engine is closed: no copy of any size can be submitted to it");
        }
        target.tieCopy();
        copy.landing.copyHandedOff();
        Poison.fillIfAlive(copy.dst);
        PhaseKey key = new PhaseKey(target, target.phase());       // stable: the phase waits for this copy
        boolean awaited;
        lock.lock();
        try {
            awaited = waiting.containsKey(key);
            if (!awaited) {
                queued.computeIfAbsent(key, k -> new ArrayList<>()).add(copy);
            }
        } finally {
            lock.unlock();
        }
        if (awaited) {
            land(copy);             // rule 2: a wait for its phase is under way
        }
        return AsyncContractFulfillment.ASYNC;
    }

    @Override
    public void waitBegins(PhaseBarrier barrier, int round, boolean poll) {
        PhaseKey key = new PhaseKey(barrier, round & PhaseBarrier.PHASE_MASK);
        List<Deferred> due;
        lock.lock();
        try {
            waiting.merge(key, 1, Integer::sum);
            due = queued.get(key);
            if (due == null || poll && passedByPoll(due)) {
                return;
            }
            queued.remove(key);
        } finally {
            lock.unlock();
        }
        landAll(due);               // rule 1
    }

    /** Under the lock: whether a poll leaves {@code due} queued (the polling thread's coin, within the bound). */
    private boolean passedByPoll(List<Deferred> due) {
        for (Deferred copy : due) {
            if (copy.pollsPassed >= MAX_POLLS_PASSED) {
                return false;
            }
        }
        if (!streams.get().nextBoolean()) {
            return false;
        }
        for (Deferred copy : due) {
            copy.pollsPassed++;
        }
        return true;
    }

    @Override
    public void waitEnds(PhaseBarrier barrier, int round) {
        PhaseKey key = new PhaseKey(barrier, round & PhaseBarrier.PHASE_MASK);
        lock.lock();
        try {
            waiting.computeIfPresent(key, (k, waits) -> waits == 1 ? null : waits - 1);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void landNow(PhaseBarrier barrier, int round) {
        List<Deferred> due;
        lock.lock();
        try {
            due = queued.remove(new PhaseKey(barrier, round & PhaseBarrier.PHASE_MASK));
        } finally {
            lock.unlock();
        }
        if (due != null) {
            landAll(due);           // rule 3
        }
    }

    /** Lands every copy of {@code due} (taken out of the queue), even when a landing throws. */
    private static void landAll(List<Deferred> due) {
        RuntimeException failed = null;
        for (Deferred copy : due) {
            try {
                land(copy);
            } catch (RuntimeException e) {
                if (failed == null) {
                    failed = e;
                } else {
                    failed.addSuppressed(e);
                }
            }
        }
        if (failed != null) {
            throw failed;
        }
    }

    /**
     * Performs {@code copy} on the calling thread, as one whole-copy chunk of the engine's own submission (so a
     * file read gets its care: windows, end of file, a source that makes no progress), then tells its landing. A
     * failure (a closed arena, an I/O error) goes to the landing: the copy's phase fails, the copy never vanishes.
     */
    private static void land(Deferred copy) {
        copy.landing.copyLanded(CopySubmission.perform(copy.dst, copy.src, copy.channel, copy.position));
    }

    // ---------------------------------------------------------------------------------------------------------
    // Stage poison

    @Override
    public void stageCopy(Object ring, int stage, long round, MemorySegment dst) {
        lock.lock();
        try {
            destinations.computeIfAbsent(new StageRound(ring, stage, round), k -> new ArrayList<>()).add(dst);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void stageFreed(Object ring, int stage, long round) {
        lock.lock();
        try {
            List<MemorySegment> freed = destinations.remove(new StageRound(ring, stage, round));
            if (freed != null) {
                for (MemorySegment dst : freed) {
                    Poison.fillIfAlive(dst);        // under the lock: a producer's acquire waits for it
                }
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public String toString() {
        return "checked execution (seed " + seed + ")";
    }
}
