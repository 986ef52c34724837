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
 * cover. Visibility to other threads needs {@code __syncthreads} / {@code __syncwarp} after the wait, as in
 * CUDA.
 */
public final class PipelinePrimitives {

    /** CUDA's {@code cp.async.wait_group} takes at most 8 groups. */
    static final int MAX_PRIOR = 8;

    private PipelinePrimitives() {
    }

    /** {@code __pipeline_memcpy_async(dst, src, size_and_align)}. */
    public static void pipelineMemcpyAsync(MemorySegment dst, MemorySegment src, int sizeAndAlign) {
        pipelineMemcpyAsync(dst, src, sizeAndAlign, 0);
    }

    /**
     * {@code __pipeline_memcpy_async(dst, src, size_and_align, zfill)}: copies the first
     * {@code sizeAndAlign - zfill} bytes of {@code src} to {@code dst} and zeroes the last {@code zfill} bytes
     * of {@code dst}'s {@code sizeAndAlign}.
     *
     * @throws IllegalArgumentException when {@code sizeAndAlign} is not 4, 8 or 16, {@code zfill} is outside
     *                                  {@code 0..sizeAndAlign}, either segment is too small or not aligned to
     *                                  {@code sizeAndAlign}, or {@code dst} is read-only (CUDA traps)
     */
    public static void pipelineMemcpyAsync(MemorySegment dst, MemorySegment src, int sizeAndAlign, int zfill) {
        KernelContext.current("__pipeline_memcpy_async");
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
        MemorySegment.copy(src, 0, dst, 0, copied);
        dst.asSlice(copied, zfill).fill((byte) 0);
    }

    /** {@code __pipeline_commit()}: closes this thread's copies into a batch of the warp's sequence. */
    public static void pipelineCommit() {
        KernelContext.current("__pipeline_commit").lane().commit();
    }

    /**
     * {@code __pipeline_wait_prior(prior)}: waits until every batch of the warp's actual sequence except the
     * {@code prior} most recent ones is complete. Values above 8 behave as 8.
     *
     * @throws IllegalArgumentException when {@code prior} is negative
     */
    public static void pipelineWaitPrior(int prior) {
        LaneSequence lane = KernelContext.current("__pipeline_wait_prior").lane();
        if (prior < 0) {
            throw new IllegalArgumentException("__pipeline_wait_prior needs prior >= 0, got " + prior);
        }
        long target = lane.latest() - Math.min(prior, MAX_PRIOR);
        if (target >= 0) {
            lane.waitThrough(target);
        }
    }

    /**
     * {@code __pipeline_arrive_on(bar)}: ties this thread's copies in flight to {@code barrier}'s current phase
     * (net zero arrivals). The primitives' copies have always landed already, so there is nothing to tie.
     */
    public static void pipelineArriveOn(Barrier barrier) {
        Objects.requireNonNull(barrier, "barrier");
        KernelContext.current("__pipeline_arrive_on");
    }

    /** The latest index of this thread's warp's actual batch sequence, or -1 before the first commit. */
    public static long actualSequence() {
        return KernelContext.current("actualSequence").lane().latest();
    }

    /** This thread's perceived sequence length: its own commits (perceived sequence {0 .. n-1}). */
    public static long perceivedSequence() {
        return KernelContext.current("perceivedSequence").lane().perceived();
    }

    /** The actual index that this thread's latest commit joined, or -1. */
    public static long lastCommitActualIndex() {
        return KernelContext.current("lastCommitActualIndex").lane().lastActual();
    }

    /** How many batches of the actual sequence this thread's latest wait newly covered. */
    public static long lastWaitCoverage() {
        return KernelContext.current("lastWaitCoverage").lane().lastCoverage();
    }
}
