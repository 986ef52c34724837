package dev.jpipeline.simt;

import dev.jpipeline.Group;

/**
 * One thread's view of its thread block: mirrors {@code cooperative_groups::thread_block}
 * ({@code this_thread_block()}). A {@link Group}, so it can make pipelines and cooperative copies. Obtained from
 * {@link KernelContext#block()}; each thread has its own view, confined to it.
 */
public final class ThreadBlock implements Group {

    private final KernelContext ctx;

    ThreadBlock(KernelContext ctx) {
        this.ctx = ctx;
    }

    /**
     * {@code size()}: the number of threads in the block.
     *
     * @return {@code blockDim.x * blockDim.y * blockDim.z}, 1 to {@link Kernel#MAX_BLOCK_THREADS}
     */
    @Override
    public int size() {
        return ctx.blockDim().volume();
    }

    /**
     * {@code thread_rank()}: this thread's linear rank in the block (x fastest).
     *
     * @return {@link KernelContext#threadRank()}, in {@code 0..size()-1}
     */
    @Override
    public int threadRank() {
        return ctx.threadRank();
    }

    /**
     * {@code sync()}: {@code __syncthreads()}, exactly {@link KernelContext#syncThreads()} (the same barrier: the
     * two can be mixed). Waits until every thread of the block has called it, reconverges the block's warps; not
     * interruptible (an interrupt is remembered and the interrupt status set again on return).
     *
     * <p>Memory consistency effects: actions of every thread of the block prior to its call to {@code sync()}
     * happen-before actions of every thread of the block following its return from the same sync.
     *
     * @throws KernelAbortedException when the launch is aborted (another thread failed, or the launch hung)
     *                                before this wait could end: it unwinds the thread; do not catch it
     */
    @Override
    public void sync() {
        ctx.syncThreads();
    }

    /**
     * {@code group_index()}: {@code blockIdx}.
     *
     * @return the block's index within the grid, never null; each component below the matching component of
     *         {@code gridDim}
     */
    public Dim3 groupIndex() {
        return ctx.blockIdx();
    }

    /**
     * {@code thread_index()}: {@code threadIdx}.
     *
     * @return this thread's index within the block, never null; each component below the matching component of
     *         {@link #groupDim()}
     */
    public Dim3 threadIndex() {
        return ctx.threadIdx();
    }

    /**
     * {@code group_dim()}: {@code blockDim}.
     *
     * @return the block's extent in threads, never null; every component at least 1
     */
    public Dim3 groupDim() {
        return ctx.blockDim();
    }

    /**
     * Names the block and the thread, for messages.
     *
     * @return {@code "thread_block (bx, by, bz), thread (tx, ty, tz)"}
     */
    @Override
    public String toString() {
        return "thread_block " + ctx.blockIdx() + ", thread " + ctx.threadIdx();
    }
}
