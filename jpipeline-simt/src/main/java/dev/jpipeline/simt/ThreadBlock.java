package dev.jpipeline.simt;

import dev.jpipeline.Group;

/**
 * One thread's view of its thread block: mirrors {@code cooperative_groups::thread_block}
 * ({@code this_thread_block()}). A {@link Group}, so it can make pipelines and cooperative copies.
 */
public final class ThreadBlock implements Group {

    private final KernelContext ctx;

    ThreadBlock(KernelContext ctx) {
        this.ctx = ctx;
    }

    /** {@code size()}: the number of threads in the block. */
    @Override
    public int size() {
        return ctx.blockDim().volume();
    }

    /** {@code thread_rank()}: this thread's linear rank in the block (x fastest). */
    @Override
    public int threadRank() {
        return ctx.threadRank();
    }

    /** {@code sync()}: {@code __syncthreads()}. */
    @Override
    public void sync() {
        ctx.syncThreads();
    }

    /** {@code group_index()}: {@code blockIdx}. */
    public Dim3 groupIndex() {
        return ctx.blockIdx();
    }

    /** {@code thread_index()}: {@code threadIdx}. */
    public Dim3 threadIndex() {
        return ctx.threadIdx();
    }

    /** {@code group_dim()}: {@code blockDim}. */
    public Dim3 groupDim() {
        return ctx.blockDim();
    }

    @Override
    public String toString() {
        return "thread_block " + ctx.blockIdx() + ", thread " + ctx.threadIdx();
    }
}
