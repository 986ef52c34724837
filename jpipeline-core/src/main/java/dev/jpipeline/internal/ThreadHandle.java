package dev.jpipeline.internal;

import dev.jpipeline.AsyncContractFulfillment;
import dev.jpipeline.StageFailedException;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.WaitStrategy;
import dev.jpipeline.internal.checked.SeededInterleaver;
import dev.jpipeline.internal.copy.CopyService;
import dev.jpipeline.internal.wait.Deadlines;
import dev.jpipeline.internal.wait.WaitSite;
import dev.jpipeline.internal.wait.WaitStatus;
import dev.jpipeline.internal.wait.Waiting;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;

/**
 * A thread-scope pipeline ({@code cuda::pipeline<cuda::thread_scope_thread>}): the calling thread's own queue
 * of committed batches, with no shared state and no other thread to wait for.
 *
 * <pre>
 *   head = batches committed, tail = batches released; batches [tail, head) are outstanding, batch head is the
 *   one being filled. A batch with asynchronous copies has a BatchSlot (slot = batch mod capacity); the slots
 *   double before two batches in [tail, head] could share one.
 *   producerAcquire : never waits (unbounded stages, as in CUDA)
 *   memcpyAsync     : small: inline; large: tied to the head batch's slot barrier
 *   producerCommit  : the head batch's slot barrier gets its commit arrival (if it has copies); head++
 *   consumerWait    : waits for batch tail's slot phase (if it has copies); idempotent until the release
 *   consumerRelease : tail++
 *   consumerWaitPrior(n): waits until every batch below head - n is complete, and releases them
 * </pre>
 *
 * Every wait is the one wait routine on a slot barrier, so deadlines, interrupts and the park listener work as
 * for shared pipelines. With a checked copy engine ({@link SeededInterleaver}) every copy is held back until a
 * wait for its batch begins, or until {@code pipeline_producer_commit(pipe, barrier)} ties it to a barrier. Inside
 * a SIMT kernel the handle commits into its warp's {@link BatchSequence} and waits through it too (warp
 * entanglement).
 */
public final class ThreadHandle extends PipelineHandle implements WaitSite {

    /** CUDA's {@code cp.async.wait_group} takes at most 8: larger priors wait as 8 (stricter, still correct). */
    static final int MAX_PRIOR = 8;

    private final CopyService copies;
    /** The warp's shared sequence inside a SIMT kernel, else null (the pipeline's own count is the sequence). */
    private final BatchSequence sequence = BatchSequence.current();
    /** Inside a kernel: the actual-sequence index of each outstanding batch, by batch mod length. */
    private long[] actualOf = sequence == null ? null : new long[8];
    /** Slots of batches with asynchronous copies, indexed by batch mod length (a power of two). */
    private BatchSlot[] slots = new BatchSlot[8];
    private long head;
    private long tail;
    private boolean acquired;
    private boolean waited;
    /** Set by consumerWaitPrior: the next release is the one that CUDA code writes after it; it does nothing. */
    private boolean releaseCoveredByPrior;
    private boolean active = true;
    /** The batch the owner waits for, for hang reports (written on the slow path only). */
    private volatile long waitingFor = -1;

    /** @param copies where the pipeline's copies run; a checked engine's service also checks the pipeline */
    public ThreadHandle(CopyService copies) {
        super(copies.interleaver());
        this.copies = copiesFor(copies);
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
        ensureCapacity();
        if (sequence != null) {
            recordActual(sequence.commit());
        }
        BatchSlot slot = slots[index(head)];
        if (slot != null && slot.batch == head && slot.async) {
            slot.barrier.arrive(1);     // completes once the batch's copies have landed
        }
        head++;
    }

    @Override
    public AsyncContractFulfillment copy(MemorySegment dst, MemorySegment src) {
        BatchSlot slot = headSlot("memcpy_async");
        return copies.copyInto(dst, src, slot.barrier, slot, false);    // the thread computes meanwhile
    }

    @Override
    public AsyncContractFulfillment read(MemorySegment dst, FileChannel channel, long position) {
        BatchSlot slot = headSlot("memcpy_async (file)");
        return copies.readInto(dst, channel, position, slot.barrier, slot, false);     // the thread computes meanwhile
    }

    /** The head batch's slot, prepared for one more copy. */
    private BatchSlot headSlot(String op) {
        enter(op);
        if (!acquired) {
            throw new IllegalStateException(op + " into a thread-scope pipeline without producer_acquire "
                + "(batch " + head + ")");
        }
        ensureCapacity();
        int i = index(head);
        BatchSlot slot = slots[i];
        if (slot == null) {
            slot = slots[i] = new BatchSlot();
        }
        slot.prepare(head);
        return slot;
    }

    private int index(long batch) {
        return (int) (batch & (slots.length - 1));
    }

    /** Doubles the slots when every one is taken by a batch in [tail, head], keeping each at its new index. */
    private void ensureCapacity() {
        if (head - tail < slots.length) {
            return;
        }
        BatchSlot[] old = slots;
        BatchSlot[] bigger = new BatchSlot[old.length * 2];
        for (long b = tail; b <= head; b++) {
            BatchSlot s = old[(int) (b & (old.length - 1))];
            if (s != null && s.batch == b) {
                bigger[(int) (b & (bigger.length - 1))] = s;
            }
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
     * Waits for outstanding batch {@code batch} to be complete. Inside a kernel the wait also covers, in the
     * warp's actual sequence, every batch up to this one's actual index (other lanes' included: the
     * documentation's over-waiting).
     *
     * @return the outcome; COMPLETE with the batch's copy failure thrown as StageFailedException
     */
    private WaitStatus awaitBatch(long batch, long deadline, boolean interruptible) {
        if (sequence != null) {
            sequence.waitThrough(actualOf[(int) (batch & (actualOf.length - 1))]);
        }
        BatchSlot slot = slots[index(batch)];
        if (slot == null || slot.batch != batch || !slot.async) {
            return WaitStatus.COMPLETE;
        }
        WaitStatus status = slot.barrier.poll(slot.round);
        if (status == null) {
            waitingFor = batch;
            status = interleaver == null
                ? Waiting.await(slot.barrier, slot.round, deadline, interruptible, WaitStrategy.ADAPTIVE, this, null)
                : awaitChecked(slot.barrier, slot.round, deadline, interruptible, WaitStrategy.ADAPTIVE, this, null);
        }
        if (status == WaitStatus.COMPLETE) {
            Throwable failure = slot.barrier.failureOf(slot.round);
            if (failure != null) {
                throw new StageFailedException(-1, batch, failure);
            }
        }
        return status;
    }

    /** Waits for the oldest outstanding batch; with none outstanding there is nothing to wait for. */
    @Override
    WaitStatus waitForTail(String op, long deadline, boolean interruptible) {
        enter(op);
        if (tail == head) {
            return WaitStatus.COMPLETE;
        }
        if (waited) {
            awaitBatch(tail, Deadlines.POLL_ONCE, false);   // complete: throws again if the batch failed
            return WaitStatus.COMPLETE;
        }
        WaitStatus status;
        try {
            status = awaitBatch(tail, deadline, interruptible);
        } catch (StageFailedException failed) {
            markWaited();
            throw failed;
        }
        if (status == WaitStatus.COMPLETE) {
            markWaited();
        }
        return status;
    }

    private void markWaited() {
        waited = true;
        releaseCoveredByPrior = false;
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

    /** {@code pipeline_consumer_wait_prior<prior>}. */
    public void waitPrior(int prior) {
        enter("pipeline_consumer_wait_prior");
        if (prior < 0) {
            throw new IllegalArgumentException("pipeline_consumer_wait_prior needs prior >= 0, got " + prior);
        }
        long covered = head - Math.min(prior, MAX_PRIOR);
        if (covered <= tail) {
            waited = false;
            releaseCoveredByPrior = true;   // nothing to cover: the release written after it still does nothing
            return;
        }
        StageFailedException failure = null;
        for (long b = tail; b < covered; b++) {
            try {
                awaitBatch(b, Deadlines.NO_DEADLINE, false);
            } catch (StageFailedException f) {
                failure = failure == null ? f : failure;
            }
        }
        tail = covered;
        waited = false;
        releaseCoveredByPrior = true;
        if (failure != null) {
            throw failure;
        }
    }

    /**
     * {@code pipeline_producer_commit(pipe, barrier)}: ties this thread's copies in flight (of every outstanding
     * batch and of the batch being filled) to {@code barrier}'s current phase. Net zero arrivals.
     */
    public void tieCopiesTo(PhaseBarrier barrier) {
        enter("pipeline_producer_commit");
        for (long b = tail; b <= head; b++) {
            BatchSlot slot = slots[index(b)];
            if (slot != null && slot.batch == b) {
                if (interleaver != null) {
                    interleaver.landNow(slot.barrier, slot.round);      // nothing it could see waits for them
                }
                slot.tie(barrier);
            }
        }
    }

    @Override
    public boolean quit() {
        checkOwner("quit");
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
        checkOwner(op);
        if (!active) {
            throw new IllegalStateException(op + " after quit on a thread-scope pipeline");
        }
    }

    @Override
    public String describeWait() {
        return "a thread-scope pipeline waits for the copies of its batch " + waitingFor + " (" + (head - tail)
            + " outstanding)";
    }

    @Override
    public String toString() {
        return "Pipeline[THREAD, committed " + head + ", released " + tail + (active ? "" : ", quit") + "]";
    }
}
