package dev.jpipeline;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.time.Instant;

/**
 * A thread-scope pipeline ({@code cuda::pipeline<cuda::thread_scope_thread>}): the calling thread's own queue
 * of committed batches, with no shared state and no other thread to wait for.
 *
 * <pre>
 *   head = batches committed, tail = batches released; batches [tail, head) are outstanding.
 *   producerAcquire : never waits (unbounded stages, as in CUDA)
 *   producerCommit  : head++
 *   consumerWait    : the oldest outstanding batch (tail) is complete; idempotent until the release
 *   consumerRelease : tail++
 *   consumerWaitPrior(n): every batch below head - n is complete and released: tail = max(tail, head - n)
 * </pre>
 *
 * Copies submitted through this pipeline land before {@code memcpyAsync} returns, so every committed batch is
 * complete and no operation ever blocks. Differences from CUDA: {@code consumer_wait} is idempotent until
 * {@code consumer_release} (as for shared pipelines; CUDA's thread-scope wait advances the tail itself), and
 * the same rules as for shared pipelines are enforced (commit needs an acquire, release needs a wait, nothing
 * after quit); {@code quit()} returns {@code true} every time, as in CUDA.
 */
final class ThreadScopePipeline extends Pipeline {

    /** CUDA's {@code cp.async.wait_group} takes at most 8: larger priors wait as 8 (stricter, still correct). */
    static final int MAX_PRIOR = 8;

    private final Thread owner = Thread.currentThread();
    private long head;
    private long tail;
    private boolean acquired;
    private boolean waited;
    /** Set by consumerWaitPrior: the next release is the one that CUDA code writes after it; it does nothing. */
    private boolean releaseCoveredByPrior;
    private boolean active = true;

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
        head++;
    }

    @Override
    AsyncContractFulfillment copy(MemorySegment dst, MemorySegment src) {
        enter("memcpy_async");
        if (!acquired) {
            throw new IllegalStateException("memcpy_async into a thread-scope pipeline without producer_acquire "
                + "(batch " + head + ")");
        }
        MemorySegment.copy(src, 0, dst, 0, dst.byteSize());
        return AsyncContractFulfillment.NONE;
    }

    @Override
    public void consumerWait() {
        enter("consumer_wait");
        if (tail < head) {
            waited = true;
            releaseCoveredByPrior = false;
        }
    }

    @Override
    public void consumerWaitInterruptibly() {
        consumerWait();
    }

    /** Never waits: every committed batch is complete. Returns {@code true} as CUDA's thread scope does. */
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
        if (covered > tail) {
            tail = covered;
            waited = false;
            releaseCoveredByPrior = true;
        }
    }

    /** Every copy of this thread has landed already: there is nothing to tie to the barrier's phase. */
    void attachCopiesTo(Barrier barrier) {
        enter("pipeline_producer_commit");
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
