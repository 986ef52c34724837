package dev.jpipeline;

import dev.jpipeline.copy.CopyCompletion;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The asynchronous copies one thread has submitted for one batch, and what happens when they land: the
 * host-side equivalent of a {@code cp.async} group tied to a barrier with {@code cp.async.mbarrier.arrive}.
 *
 * <pre>
 * pending = copies in flight (low 20 bits) + SEAL_TOKEN while the batch is open (not committed yet)
 *   attach()   owner, before submitting a copy: +1 (+SEAL_TOKEN as well for the batch's first copy)
 *   copyDone() worker, when a copy lands or fails: -1
 *   seal()     owner, at commit: -SEAL_TOKEN
 * When the copies in flight reach 0, drained() runs (the copies have landed, committed or not); when pending
 * reaches 0, landed() runs too (the batch is committed and complete, never before its last copy). The thread
 * that makes the transition runs the hook. An object is reused for a later batch only after landed() has run;
 * the pipeline protocol guarantees that (a batch is re-acquired only after the previous one was consumed).
 * </pre>
 */
abstract class PendingCopies implements CopyCompletion {

    private static final int SEAL_TOKEN = 1 << 20;
    private static final int COPY_MASK = SEAL_TOKEN - 1;

    /** Copies in flight plus the seal token, updated only by atomic adds. */
    private volatile int pending;
    /**
     * The first failure of this batch's copies: written before the pending decrement that reports it, and kept
     * until the owner starts a new batch, so a thread that sees pending reach 0 also sees the failure.
     */
    private volatile Throwable failure;
    /** Owner-confined: whether the current batch has attached a copy and is not sealed yet. */
    private boolean open;

    /** Owner: one more copy is about to be submitted for the current batch. */
    final void attach() {
        if (open) {
            PENDING.getAndAdd(this, 1);
        } else {
            failure = null;
            PENDING.getAndAdd(this, SEAL_TOKEN + 1);
            open = true;
        }
    }

    /** Owner: this object now stands for a batch without copies (complete, with no failure). */
    final void forget() {
        failure = null;
    }

    /** Owner: whether the current batch has copies attached and is not sealed. */
    final boolean isOpen() {
        return open;
    }

    /** Owner: the batch is committed; landed() runs now or when its last copy lands. */
    final void seal() {
        open = false;
        if ((int) PENDING.getAndAdd(this, -SEAL_TOKEN) == SEAL_TOKEN) {
            landed(failure);
        }
    }

    @Override
    public final void copyDone(Throwable copyFailure) {
        if (copyFailure != null) {
            FAILURE.compareAndSet(this, null, copyFailure);
        }
        int left = (int) PENDING.getAndAdd(this, -1) - 1;
        if ((left & COPY_MASK) == 0) {
            drained(failure);
        }
        if (left == 0) {
            landed(failure);
        }
    }

    /** Whether the batch is still open or has copies in flight. */
    final boolean inFlight() {
        return pending != 0;
    }

    /** Whether copies of the batch are in flight (whether or not it is committed). */
    final boolean copiesInFlight() {
        return (pending & COPY_MASK) != 0;
    }

    /** The first failure of the current (or last) batch's copies, or null. */
    final Throwable failure() {
        return failure;
    }

    /** Every copy submitted so far has landed ({@code failure}: the first failure, or null). */
    void drained(Throwable failure) {
    }

    /**
     * Every copy of the batch has landed (or failed: {@code failure} is the first failure) and the batch is
     * sealed. Runs in the thread that finished last: a copy worker or the committing thread.
     */
    abstract void landed(Throwable failure);

    private static final VarHandle PENDING;
    private static final VarHandle FAILURE;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            PENDING = lookup.findVarHandle(PendingCopies.class, "pending", int.class);
            FAILURE = lookup.findVarHandle(PendingCopies.class, "failure", Throwable.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
