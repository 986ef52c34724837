package dev.jpipeline;

import dev.jpipeline.copy.CopyEngine;
import dev.jpipeline.internal.BatchSequence;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.time.Duration;
import java.time.Instant;

/**
 * A thread-scope pipeline ({@code cuda::pipeline<cuda::thread_scope_thread>}): the calling thread's own queue
 * of committed batches, with no shared state and no other thread to wait for.
 *
 * <pre>
 *   head = batches committed, tail = batches released; batches [tail, head) are outstanding, batch head is
 *   the one being filled. Each batch's asynchronous copies are tracked by a BatchCopies in a ring of slots
 *   (slot = batch mod capacity); the ring doubles before two batches in [tail, head] could share a slot.
 *   producerAcquire : never waits (unbounded stages, as in CUDA)
 *   producerCommit  : seals the head batch's copies; head++
 *   consumerWait    : waits until batch tail is complete (its copies landed); idempotent until the release
 *   consumerRelease : tail++
 *   consumerWaitPrior(n): waits until every batch below head - n is complete, and releases them
 * </pre>
 *
 * Copies no larger than the copy engine's inline threshold land before {@code memcpyAsync} returns; larger
 * ones run on the engine. Differences from CUDA: {@code consumer_wait} is idempotent until
 * {@code consumer_release} (as for shared pipelines; CUDA's thread-scope wait advances the tail itself), the
 * same rules as for shared pipelines are enforced (commit needs an acquire, release needs a wait, nothing
 * after quit), and a timed wait honours its time limit (CUDA ignores it here); {@code quit()} returns
 * {@code true} every time, as in CUDA.
 */
final class ThreadScopePipeline extends Pipeline {

    /** CUDA's {@code cp.async.wait_group} takes at most 8: larger priors wait as 8 (stricter, still correct). */
    static final int MAX_PRIOR = 8;

    private final Thread owner = Thread.currentThread();
    private final CopyEngine engine;
    /** The warp's shared sequence inside a SIMT kernel, else null (the pipeline's own count is the sequence). */
    private final BatchSequence sequence = BatchSequence.current();
    /** Inside a kernel: the actual-sequence index of each outstanding batch, by batch mod length. */
    private long[] actualOf = sequence == null ? null : new long[8];
    /** Per-batch copy trackers, indexed by batch mod length (a power of two); created on first use. */
    private BatchCopies[] slots = new BatchCopies[8];
    private long head;
    private long tail;
    private boolean acquired;
    private boolean waited;
    /** Set by consumerWaitPrior: the next release is the one that CUDA code writes after it; it does nothing. */
    private boolean releaseCoveredByPrior;
    private boolean active = true;

    ThreadScopePipeline(CopyEngine engine) {
        this.engine = engine;
    }

    @Override
    public void producerAcquire() {
        enter("producer_acquire");
        acquired = true;
    }

    @Override
    public void producerAcquireInterruptibly() {
        producerAcquire();
    }

    @Override
    public void producerCommit() {
        enter("producer_commit");
        if (!acquired) {
            throw new IllegalStateException("producer_commit without producer_acquire in a thread-scope pipeline "
                + "(batch " + head + ")");
        }
        acquired = false;
        if (head - tail >= slots.length) {
            grow();                             // every outstanding batch keeps a slot of its own
        }
        if (sequence != null) {
            recordActual(sequence.commit());
        }
        BatchCopies copies = slots[(int) (head & (slots.length - 1))];
        if (copies != null) {
            if (copies.isOpen()) {
                copies.seal();
            } else {
                copies.forget();                // this slot now stands for a batch without copies
            }
        }
        head++;
    }

    @Override
    AsyncContractFulfillment copy(MemorySegment dst, MemorySegment src) {
        enterCopy("memcpy_async");
        if (engine.runsInline(dst.byteSize())) {
            MemorySegment.copy(src, 0, dst, 0, dst.byteSize());
            return AsyncContractFulfillment.NONE;
        }
        engine.copy(dst, src, headCopies());
        return AsyncContractFulfillment.ASYNC;
    }

    @Override
    AsyncContractFulfillment read(MemorySegment dst, FileChannel channel, long position) {
        enterCopy("memcpy_async (file)");
        engine.read(dst, channel, position, headCopies());
        return AsyncContractFulfillment.ASYNC;
    }

    private void enterCopy(String op) {
        enter(op);
        if (!acquired) {
            throw new IllegalStateException(op + " into a thread-scope pipeline without producer_acquire "
                + "(batch " + head + ")");
        }
    }

    /** The head batch's tracker, with one more copy attached. */
    private BatchCopies headCopies() {
        if (head - tail >= slots.length) {
            grow();
        }
        int slot = (int) (head & (slots.length - 1));
        BatchCopies copies = slots[slot];
        if (copies == null) {
            copies = slots[slot] = new BatchCopies();
        }
        copies.attach();
        return copies;
    }

    /** Doubles the ring, keeping every outstanding batch's tracker at its new slot. */
    private void grow() {
        BatchCopies[] old = slots;
        BatchCopies[] bigger = new BatchCopies[old.length * 2];
        for (long b = tail; b <= head; b++) {
            bigger[(int) (b & (bigger.length - 1))] = old[(int) (b & (old.length - 1))];
        }
        slots = bigger;
    }

    /** Inside a kernel: remembers the actual index of batch {@code head} (the one being committed). */
    private void recordActual(long actual) {
        if (head - tail >= actualOf.length) {
            long[] bigger = new long[actualOf.length * 2];
            for (long b = tail; b < head; b++) {
                bigger[(int) (b & (bigger.length - 1))] = actualOf[(int) (b & (actualOf.length - 1))];
            }
            actualOf = bigger;
        }
        actualOf[(int) (head & (actualOf.length - 1))] = actual;
    }

    /**
     * Waits for outstanding batch {@code batch} to be complete; returns its copy failure or null. Inside a
     * kernel the wait also covers, in the warp's actual sequence, every batch up to this one's actual index
     * (other lanes' included: the documentation's over-waiting).
     */
    private Throwable awaitBatch(long batch) {
        if (sequence != null) {
            sequence.waitThrough(actualOf[(int) (batch & (actualOf.length - 1))]);
        }
        BatchCopies copies = slots[(int) (batch & (slots.length - 1))];
        return copies == null ? null : copies.await();
    }

    @Override
    public void consumerWait() {
        enter("consumer_wait");
        if (tail < head && !waited) {
            Throwable failure = awaitBatch(tail);
            waited = true;
            releaseCoveredByPrior = false;
            if (failure != null) {
                throw new StageFailedException(-1, tail, failure);
            }
        }
    }

    @Override
    public void consumerWaitInterruptibly() {
        consumerWait();
    }

    /**
     * Waits for the oldest batch. Its copies are already under way on the copy engine, so the wait is short and
     * bounded by the copy itself; it returns {@code true} once the batch is complete (CUDA's thread scope also
     * returns {@code true}, ignoring the limit).
     */
    @Override
    public boolean consumerWaitFor(Duration timeout) {
        consumerWait();
        return true;
    }

    @Override
    public boolean consumerWaitUntil(Instant deadline) {
        consumerWait();
        return true;
    }

    @Override
    public void consumerRelease() {
        enter("consumer_release");
        if (waited) {
            waited = false;
            tail++;
        } else if (releaseCoveredByPrior) {
            releaseCoveredByPrior = false;
        } else {
            throw new IllegalStateException("consumer_release without a completed consumer_wait in a thread-scope "
                + "pipeline (batch " + tail + ", " + (head - tail) + " outstanding)");
        }
    }

    void waitPrior(int prior) {
        enter("pipeline_consumer_wait_prior");
        if (prior < 0) {
            throw new IllegalArgumentException("pipeline_consumer_wait_prior needs prior >= 0, got " + prior);
        }
        long covered = head - Math.min(prior, MAX_PRIOR);
        if (covered <= tail) {
            return;
        }
        Throwable failure = null;
        long failedBatch = -1;
        for (long b = tail; b < covered; b++) {
            Throwable f = awaitBatch(b);
            if (f != null && failure == null) {
                failure = f;
                failedBatch = b;
            }
        }
        tail = covered;
        waited = false;
        releaseCoveredByPrior = true;
        if (failure != null) {
            throw new StageFailedException(-1, failedBatch, failure);
        }
    }

    /**
     * Ties this thread's copies in flight (of every outstanding batch and of the batch being filled) to
     * {@code barrier}'s current phase: the phase cannot complete before they land. Net zero arrivals.
     */
    void attachCopiesTo(Barrier barrier) {
        enter("pipeline_producer_commit");
        for (long b = tail; b <= head; b++) {
            BatchCopies copies = slots[(int) (b & (slots.length - 1))];
            if (copies != null) {
                copies.tie(barrier);
            }
        }
    }

    /** Outstanding (committed, unreleased) batches. */
    long outstanding() {
        return head - tail;
    }

    @Override
    public boolean quit() {
        active = false;
        return true;
    }

    @Override
    public boolean isActive() {
        return active;
    }

    @Override
    public ThreadScope scope() {
        return ThreadScope.THREAD;
    }

    private void enter(String op) {
        assert owner == Thread.currentThread() : "a pipeline handle belongs to the thread that made it";
        if (!active) {
            throw new IllegalStateException(op + " after quit on a thread-scope pipeline");
        }
    }

    @Override
    public String toString() {
        return "Pipeline[THREAD, committed " + head + ", released " + tail + (active ? "" : ", quit") + "]";
    }
}
