package dev.jpipeline.internal;

import dev.jpipeline.AsyncContractFulfillment;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.WaitStrategy;
import dev.jpipeline.internal.checked.Interleaver;
import dev.jpipeline.internal.copy.CopyService;
import dev.jpipeline.internal.wait.Deadlines;
import dev.jpipeline.internal.wait.LogicalThread;
import dev.jpipeline.internal.wait.ParkListener;
import dev.jpipeline.internal.wait.StallWatch;
import dev.jpipeline.internal.wait.WaitStatus;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.time.Duration;
import java.time.Instant;

/**
 * One thread's handle on a pipeline, as the engine implements it: the public {@code Pipeline} delegates every
 * operation here. {@link StageHandle} implements block-, device- and system-scope pipelines over a
 * {@link StageRing}; {@link ThreadHandle} implements thread scope. The contracts are those of {@code Pipeline}.
 */
public abstract sealed class PipelineHandle permits StageHandle, ThreadHandle {

    /** The thread that made the handle: the only one allowed to use it. Compared on every operation. */
    final Thread owner = Thread.currentThread();
    /**
     * The logical thread that made the handle, when the owner runs several one after another (a SIMT strand), else
     * null: then it, not the Java thread, owns the handle, names it, and ends it.
     */
    final LogicalThread logicalOwner;
    /**
     * Checked execution's hold on this handle: the making thread's (a checked kernel launch), else the one given
     * (a checked shared state's or copy engine's), else null. Told of every operation, in {@link #checkOwner}, and
     * of every wait that does not return at once ({@link #awaitChecked}).
     */
    final Interleaver interleaver;

    /** @param interleaver the pipeline's own interleaver (a checked shared state's or copy engine's), or null */
    PipelineHandle(Interleaver interleaver) {
        ParkListener listener = ParkListener.current();
        this.logicalOwner = listener == null ? null : listener.logicalThread();
        Interleaver threads = listener == null ? null : listener.interleaver();
        this.interleaver = threads != null ? threads : interleaver;
    }

    /** The copy service this handle's copies use: {@code configured}, unless checked execution diverts them. */
    final CopyService copiesFor(CopyService configured) {
        return interleaver == null ? configured : interleaver.copies(configured);
    }

    /**
     * A checked handle's wait for phase {@code round} of {@code barrier}, which has not completed: the interleaver
     * is told before and after, so that it can land the copies the wait needs ({@link Interleaver#waitBegins}).
     * Only called when {@link #interleaver} is set; an unchecked handle awaits the barrier directly.
     */
    final WaitStatus awaitChecked(PhaseBarrier barrier, int round, long deadline, boolean interruptible,
                                  WaitStrategy strategy, Object site, StallWatch watch) {
        interleaver.waitBegins(barrier, round, deadline == Deadlines.POLL_ONCE);
        try {
            return barrier.await(round, deadline, interruptible, strategy, site, watch);
        } finally {
            interleaver.waitEnds(barrier, round);
        }
    }

    /** The owner's name, for messages: the logical thread's, else the Java thread's. */
    final String ownerName() {
        return logicalOwner != null ? logicalOwner.name() : owner.getName();
    }

    /** Whether the owner has ended: the logical thread, else the Java thread. */
    final boolean ownerHasEnded() {
        return logicalOwner != null ? logicalOwner.hasEnded() : !owner.isAlive();
    }

    /**
     * The exception for {@code fault}, an {@link InternalError} one of this handle's operations raised: a handle in
     * a shared region names the region's truncation (RegionFaults); any other rethrows it.
     */
    public RuntimeException faulted(InternalError fault) {
        throw fault;
    }

    public abstract void producerAcquire();

    public abstract void producerAcquireInterruptibly() throws InterruptedException;

    public abstract void producerCommit();

    public final void consumerWait() {
        waitForTail("consumer_wait", Deadlines.NO_DEADLINE, false);
    }

    public final void consumerWaitInterruptibly() throws InterruptedException {
        // an interrupt status set on entry throws, ready stage or not, as java.util.concurrent's waits do
        if (Thread.interrupted()
            || waitForTail("consumer_wait", Deadlines.NO_DEADLINE, true) == WaitStatus.INTERRUPTED) {
            throw new InterruptedException("interrupted in consumer_wait: " + this);
        }
    }

    public final boolean consumerWaitFor(Duration timeout) {
        return waitForTail("consumer_wait_for", Deadlines.fromTimeout(timeout), false) == WaitStatus.COMPLETE;
    }

    public final boolean consumerWaitUntil(Instant deadline) {
        return waitForTail("consumer_wait_until", Deadlines.fromInstant(deadline), false) == WaitStatus.COMPLETE;
    }

    /**
     * The one consumer wait of the handle: for the tail batch, until {@code deadline}; idempotent until the
     * release. COMPLETE, TIMED_OUT or INTERRUPTED; a failed copy throws StageFailedException after the batch
     * completed.
     */
    abstract WaitStatus waitForTail(String op, long deadline, boolean interruptible);

    public abstract void consumerRelease();

    public abstract boolean quit();

    public abstract boolean isActive();

    public abstract ThreadScope scope();

    /** This thread's part of a {@code memcpy_async} into the head stage; the arguments are validated. */
    public abstract AsyncContractFulfillment copy(MemorySegment dst, MemorySegment src);

    /** Like {@link #copy}, for a positional read of {@code dst.byteSize()} bytes of a file. */
    public abstract AsyncContractFulfillment read(MemorySegment dst, FileChannel channel, long position);

    /**
     * The owner check of every operation: one comparison on the fast path; under checked execution also the
     * operation's scheduling point.
     *
     * @throws IllegalStateException when the caller is not the owner
     */
    final void checkOwner(String op) {
        // a logical owner is the owner: a compiled SIMT thread may go on on another strand, and another CUDA
        // thread may run on the strand that made the handle while its owner is suspended (Strand.runCompiledThread)
        if (logicalOwner == null ? Thread.currentThread() != owner
            : logicalOwner.hasEnded() || !calledByLogicalOwner()) {
            throw foreignThread(op);
        }
        if (interleaver != null) {
            interleaver.operation(op);
        }
    }

    /**
     * Whether the caller is the logical thread that made this handle, on whichever Java thread: a compiled SIMT
     * thread goes on on whichever strand takes it up behind a sync (jpipeline-simt's Strand.runCompiledThread).
     */
    private boolean calledByLogicalOwner() {
        ParkListener listener = ParkListener.current();
        return listener != null && listener.logicalThread() == logicalOwner;
    }

    private IllegalStateException foreignThread(String op) {
        ParkListener listener = ParkListener.current();
        LogicalThread caller = listener == null ? null : listener.logicalThread();
        return new IllegalStateException(op + " on a pipeline handle of another thread: the handle belongs to thread '"
            + ownerName() + "', which made it, and was used by thread '"
            + (caller != null ? caller.name() : Thread.currentThread().getName())
            + "' (each thread makes and uses its own handle)");
    }
}
