package dev.jpipeline.simt;

import dev.jpipeline.Barrier;
import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * The primitives API of {@code <cuda_pipeline_primitives.h>}: per-thread batches of small asynchronous copies.
 * Device code: callable only from a kernel thread. The batch sequence is the warp's, shared with thread-scope
 * pipelines ({@code Pipeline.make()} in a kernel), so commits and waits are entangled across the warp's lanes
 * as the CUDA documentation's "Warp Entanglement" section describes; see {@link KernelContext#diverge()} for the
 * convergence model and {@link #actualSequence()}, {@link #perceivedSequence()} to observe it.
 *
 * <p>The copies are 4, 8 or 16 bytes: far below any hand-off's cost, so they land before
 * {@code pipelineMemcpyAsync} returns (as on pre-SM80 GPUs); the waits still account for the batches they
 * cover. Under {@link CheckedExecution} they land late instead, at a seeded point no later than the
 * {@link #pipelineWaitPrior} that covers their batch, and their destinations hold poison until then. Visibility to other threads needs {@code __syncthreads} / {@code __syncwarp} after the wait, as in
 * CUDA.
 *
 * <p>Every method throws {@link IllegalStateException} when called from a thread that is not a kernel thread
 * (one started by {@link Kernel#launch} or {@link Kernel#launchCooperative}).
 */
public final class PipelinePrimitives {

    /** CUDA's {@code cp.async.wait_group} takes at most 8 groups. */
    static final int MAX_PRIOR = 8;

    private PipelinePrimitives() {
    }

    /**
     * {@code __pipeline_memcpy_async(dst, src, size_and_align)}: copies the first {@code sizeAndAlign} bytes of
     * {@code src} to {@code dst}; {@link #pipelineMemcpyAsync(MemorySegment, MemorySegment, int, int)} with a
     * {@code zfill} of 0. Unlike CUDA's, the copy has landed when this method returns.
     *
     * <p>Memory consistency effects: as the four-argument form.
     *
     * @param dst          the destination: writable, at least {@code sizeAndAlign} bytes, its address aligned to
     *                     {@code sizeAndAlign}; not null. Only its first {@code sizeAndAlign} bytes are written
     * @param src          the source: at least {@code sizeAndAlign} bytes, its address aligned to
     *                     {@code sizeAndAlign}; not null
     * @param sizeAndAlign the number of bytes to copy, which is also the alignment both addresses need: 4, 8 or
     *                     16
     * @throws NullPointerException     when {@code dst} or {@code src} is null
     * @throws IllegalArgumentException when {@code sizeAndAlign} is not 4, 8 or 16, either segment is too small or
     *                                  not aligned to {@code sizeAndAlign}, or {@code dst} is read-only (CUDA
     *                                  traps)
     * @throws IllegalStateException    when the caller is not a kernel thread (device code called from host
     *                                  code)
     */
    public static void pipelineMemcpyAsync(MemorySegment dst, MemorySegment src, int sizeAndAlign) {
        pipelineMemcpyAsync(dst, src, sizeAndAlign, 0);
    }

    /**
     * {@code __pipeline_memcpy_async(dst, src, size_and_align, zfill)}: copies the first
     * {@code sizeAndAlign - zfill} bytes of {@code src} to {@code dst} and zeroes the last {@code zfill} bytes
     * of {@code dst}'s {@code sizeAndAlign}.
     *
     * <p>Unlike CUDA's (on SM80 and later), the copy is not asynchronous: it has landed when this method returns,
     * and joins the batch that the next {@link #pipelineCommit()} closes only for the accounting of waits.
     *
     * <p>Memory consistency effects: the writes to {@code dst} are plain writes by the calling thread, ordered
     * before its later actions by program order. They establish no happens-before relation with other threads:
     * another thread may read {@code dst} only after a synchronization that orders the two, for example
     * {@link #pipelineWaitPrior} followed by {@link KernelContext#syncThreads()} or
     * {@link KernelContext#syncWarp()}, as in CUDA.
     *
     * @param dst          the destination: writable, at least {@code sizeAndAlign} bytes, its address aligned to
     *                     {@code sizeAndAlign}; not null. Only its first {@code sizeAndAlign} bytes are written
     * @param src          the source: at least {@code sizeAndAlign - zfill} bytes (only those are read), its
     *                     address aligned to {@code sizeAndAlign}; not null
     * @param sizeAndAlign the number of bytes of {@code dst} to fill, which is also the alignment both addresses
     *                     need: 4, 8 or 16
     * @param zfill        how many of those bytes, at the end, are zeroed instead of copied: 0 to
     *                     {@code sizeAndAlign}
     * @throws NullPointerException     when {@code dst} or {@code src} is null
     * @throws IllegalArgumentException when {@code sizeAndAlign} is not 4, 8 or 16, {@code zfill} is outside
     *                                  {@code 0..sizeAndAlign}, either segment is too small or not aligned to
     *                                  {@code sizeAndAlign}, or {@code dst} is read-only (CUDA traps)
     * @throws IllegalStateException    when the caller is not a kernel thread (device code called from host
     *                                  code)
     */
    public static void pipelineMemcpyAsync(MemorySegment dst, MemorySegment src, int sizeAndAlign, int zfill) {
        KernelThread kt = KernelContext.current("__pipeline_memcpy_async").thread();
        Objects.requireNonNull(dst, "dst");
        Objects.requireNonNull(src, "src");
        if (sizeAndAlign != 4 && sizeAndAlign != 8 && sizeAndAlign != 16) {
            throw new IllegalArgumentException("__pipeline_memcpy_async size_and_align must be 4, 8 or 16, got "
                + sizeAndAlign);
        }
        if (zfill < 0 || zfill > sizeAndAlign) {
            throw new IllegalArgumentException("__pipeline_memcpy_async zfill must be in 0.." + sizeAndAlign
                + ", got " + zfill);
        }
        int copied = sizeAndAlign - zfill;
        if (dst.byteSize() < sizeAndAlign || src.byteSize() < copied || dst.isReadOnly()) {
            throw new IllegalArgumentException("__pipeline_memcpy_async needs a writable destination of "
                + sizeAndAlign + " bytes and a source of " + copied + " bytes; got " + dst.byteSize()
                + (dst.isReadOnly() ? " read-only" : "") + " and " + src.byteSize());
        }
        if (dst.maxByteAlignment() < sizeAndAlign || src.maxByteAlignment() < sizeAndAlign) {
            throw new IllegalArgumentException("__pipeline_memcpy_async needs both addresses aligned to "
                + sizeAndAlign + " bytes; destination alignment " + dst.maxByteAlignment() + ", source alignment "
                + src.maxByteAlignment());
        }
        if (kt.checked != null) {
            kt.checked.primitiveCopy(kt, dst.asSlice(0, sizeAndAlign), src, zfill);     // lands late
            return;
        }
        MemorySegment.copy(src, 0, dst, 0, copied);
        dst.asSlice(copied, zfill).fill((byte) 0);
    }

    /**
     * {@code __pipeline_commit()}: closes this thread's copies into a batch of the warp's sequence. The batch's
     * index in the warp's actual sequence follows the convergence model of {@link KernelContext#diverge()}:
     * converged lanes' k-th commits since the last warp reconvergence share one batch.
     *
     * <p>Memory consistency effects: none between threads: a commit does not wait and does not publish the
     * batch's data to other lanes.
     *
     * @throws IllegalStateException when the caller is not a kernel thread (device code called from host code)
     */
    public static void pipelineCommit() {
        KernelContext ctx = KernelContext.current("__pipeline_commit");
        KernelThread kt = ctx.thread();
        if (kt.checked != null) {
            kt.scheduler.yieldPoint(kt, "__pipeline_commit");
        }
        long actual = ctx.lane().commit();
        if (kt.checked != null) {
            kt.checked.primitiveCommit(kt, actual);
        }
    }

    /**
     * {@code __pipeline_wait_prior(prior)}: waits until every batch of the warp's actual sequence except the
     * {@code prior} most recent ones is complete. Values above 8 behave as 8. Because the primitives' copies
     * land before {@link #pipelineMemcpyAsync} returns, this never blocks here (CUDA's does); it records which
     * batches the wait covers ({@link #lastWaitCoverage()}). A wait with nothing to cover (at most {@code prior}
     * batches in the warp's sequence) records nothing.
     *
     * <p>Memory consistency effects: this thread's own copies into the covered batches have landed, and happen
     * before its actions following the return (program order). The wait establishes no happens-before relation
     * with other threads, not even with the lanes whose copies joined the covered batches: to read data that
     * other lanes copied, follow the wait with {@link KernelContext#syncWarp()} or
     * {@link KernelContext#syncThreads()} in every lane, as in CUDA.
     *
     * @param prior how many of the most recent batches of the warp's actual sequence may still be pending: 0
     *              waits for every batch; at least 0, values above 8 count as 8
     * @throws IllegalArgumentException when {@code prior} is negative
     * @throws IllegalStateException    when the caller is not a kernel thread (device code called from host
     *                                  code); checked before {@code prior}
     */
    public static void pipelineWaitPrior(int prior) {
        KernelContext ctx = KernelContext.current("__pipeline_wait_prior");
        LaneSequence lane = ctx.lane();
        if (prior < 0) {
            throw new IllegalArgumentException("__pipeline_wait_prior needs prior >= 0, got " + prior);
        }
        long target = lane.latest() - Math.min(prior, MAX_PRIOR);
        if (target >= 0) {
            lane.waitThrough(target);
        }
        KernelThread kt = ctx.thread();
        if (kt.checked != null) {
            kt.checked.primitiveWait(kt, target);
        }
    }

    /**
     * {@code __pipeline_arrive_on(bar)}: ties this thread's copies in flight to {@code barrier}'s current phase
     * (net zero arrivals). The primitives' copies have always landed already, so there is nothing to tie: the
     * call only checks its caller and argument. Under checked execution, which holds copies back, this thread's
     * copies in flight land now, before its next arrival on the barrier can complete a phase.
     *
     * <p>Memory consistency effects: this thread's copies made before the call happen-before (program order) its
     * later arrival on {@code barrier}, and so, through the barrier, actions of any thread after a wait that
     * observes that arrival's phase complete: the guarantee CUDA's tie gives. The call itself does not block and
     * synchronizes with no thread.
     *
     * @param barrier the barrier ({@code cuda::barrier}) whose current phase the copies would be tied to; not
     *                null
     * @throws NullPointerException  when {@code barrier} is null
     * @throws IllegalStateException when the caller is not a kernel thread (device code called from host code)
     */
    public static void pipelineArriveOn(Barrier barrier) {
        Objects.requireNonNull(barrier, "barrier");
        KernelThread kt = KernelContext.current("__pipeline_arrive_on").thread();
        if (kt.checked != null) {
            kt.checked.primitiveArriveOn(kt);   // checked execution holds them back: they land by the arrival
        }
    }

    /**
     * The latest index of this thread's warp's actual batch sequence (the one that waits count against). No CUDA
     * counterpart: an observation of the warp entanglement model.
     *
     * @return the index of the warp's most recent batch, counted from 0 over the whole kernel; -1 before any lane
     *         of the warp has committed. Other lanes may commit concurrently, so it is a snapshot
     * @throws IllegalStateException when the caller is not a kernel thread
     */
    public static long actualSequence() {
        return KernelContext.current("actualSequence").lane().latest();
    }

    /**
     * This thread's perceived sequence length: its own commits (perceived sequence {0 .. n-1}). No CUDA
     * counterpart: an observation of the warp entanglement model.
     *
     * @return how many commits this thread has made (through the primitives or a thread-scope pipeline), at least
     *         0
     * @throws IllegalStateException when the caller is not a kernel thread
     */
    public static long perceivedSequence() {
        return KernelContext.current("perceivedSequence").lane().perceived();
    }

    /**
     * The actual index that this thread's latest commit joined. No CUDA counterpart: an observation of the warp
     * entanglement model.
     *
     * @return the index, in the warp's actual sequence, of the batch that this thread's latest commit joined; -1
     *         before its first commit
     * @throws IllegalStateException when the caller is not a kernel thread
     */
    public static long lastCommitActualIndex() {
        return KernelContext.current("lastCommitActualIndex").lane().lastActual();
    }

    /**
     * How many batches of the actual sequence this thread's latest wait newly covered. No CUDA counterpart: an
     * observation of the warp entanglement model.
     *
     * @return the number of batches of the warp's actual sequence that this thread's latest recorded wait
     *         (through the primitives or a thread-scope pipeline) covered and its earlier waits had not, at least
     *         0; 0 before its first wait. A {@link #pipelineWaitPrior} with nothing to cover is not recorded and
     *         leaves the value of the wait before it
     * @throws IllegalStateException when the caller is not a kernel thread
     */
    public static long lastWaitCoverage() {
        return KernelContext.current("lastWaitCoverage").lane().lastCoverage();
    }
}
