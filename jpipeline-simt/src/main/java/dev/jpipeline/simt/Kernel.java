package dev.jpipeline.simt;

import java.util.Objects;

/**
 * Kernel launches: mirrors {@code kernel<<<grid, block, dynamicSharedBytes>>>(args)} and
 * {@code cudaLaunchCooperativeKernel}.
 *
 * <p>Thread blocks are made resident a few at a time (as many as the machine has cores; all of them in a
 * cooperative launch) and each runs to completion, like blocks on a GPU's multiprocessors; resident blocks run in
 * parallel. Within a block, the CUDA threads run cooperatively, one at a time, and switch only where one blocks in a
 * jpipeline wait ({@code __syncthreads}, {@code __syncwarp}, tile and grid syncs, pipeline and barrier waits) or
 * finishes, as a multiprocessor interleaves a block's warps. A thread that never blocks runs as a plain call; one
 * that blocks keeps a virtual thread of its own until it finishes. {@code launch} returns when every thread has
 * finished (CUDA's launch is asynchronous; this one behaves like a launch followed by
 * {@code cudaDeviceSynchronize()}).
 *
 * <p>A kernel whose only waits are {@code syncThreads()} in its own body is compiled instead: each block runs as
 * loops over its threads between its syncs (see {@link #runs()} and the SIMT documentation, "Compiled kernels"). A
 * kernel that also waits elsewhere (a pipeline, a barrier, a group) is compiled to run thread by thread on its
 * block's scheduler: a thread gives its stack up at its syncs and at {@code producerAcquire} / {@code consumerWait},
 * and may go on on another Java thread behind them (a kernel whose own method names the Java thread runs on strands).
 *
 * <p>Two consequences for device code. A thread that waits for another thread of its own block by spinning on
 * memory, or in a JDK wait ({@code Thread.sleep}, a lock, a queue), keeps the block's turn for a while: a compiled
 * thread yields at a loop head after 16,384 passes, and on strands the block's turn is released when its holder
 * has kept it 50 ms with nothing else in the block moving (forward progress as on sm_70 and later), after which
 * the block's threads run concurrently. A jpipeline wait (a sync, a pipeline, a {@code Barrier}) is still the
 * cheap way to wait. And several CUDA threads may run on one Java thread, one after another:
 * {@code Thread.currentThread()} and {@code ThreadLocal}s do not tell CUDA threads apart (use
 * {@link KernelContext}).
 *
 * <p>Inside {@link CheckedExecution#replay} or {@link CheckedExecution#explore}, a launch runs checked: one thread
 * at a time under a seeded, replayable schedule, with late copies, poisoned shared memory and sync checks.
 *
 * <p>Kinder than CUDA: a thread that throws fails the launch with {@link KernelFailure} naming its thread and
 * block; a launch whose live threads are all blocked in jpipeline waits (pipelines, barriers,
 * {@code __syncthreads}, {@code __syncwarp}) with no copy in flight, for {@link #hangPatienceMillis()}, fails
 * with a report of where each thread waits instead of hanging.
 */
public final class Kernel {

    /** Threads per warp, as on every NVIDIA GPU. */
    public static final int WARP_SIZE = 32;
    /** The largest thread block CUDA allows. */
    public static final int MAX_BLOCK_THREADS = 1024;
    /** The largest dynamic shared memory per block that an H100 (sm_90) allows: 227 KiB. */
    public static final long MAX_DYNAMIC_SHARED_BYTES = 227 * 1024;

    private Kernel() {
    }

    /**
     * {@code kernel<<<grid, block, dynamicSharedBytes>>>}: runs {@code body} once per thread of the grid, and
     * waits for every thread to finish (unlike CUDA's asynchronous launch: as if it were followed by
     * {@code cudaDeviceSynchronize()}). Blocks become resident at most as many at a time as the machine has
     * cores, so threads of different blocks must not wait for each other (use
     * {@link #launchCooperative} for that).
     *
     * <p>When a thread throws, or the launch hangs, the launch is aborted: every thread parked in a jpipeline wait
     * (pipelines, barriers, {@code __syncthreads}, {@code __syncwarp}, tile syncs), and every thread that parks in
     * one later, unwinds with {@link KernelAbortedException}; blocks not yet resident, and threads of resident blocks
     * that have not started yet, are never started. This
     * method still returns, by throwing, only once every started thread has finished, so a thread that neither
     * finishes nor waits in a jpipeline wait (a spin loop, a JDK lock) keeps it waiting.
     *
     * <p>Interrupts: a kernel thread's Java interrupt status is its own and changes nothing in the runtime (a CUDA
     * thread has no interrupts). Each thread starts with it clear; jpipeline's uninterruptible waits
     * ({@code __syncthreads}, {@code __syncwarp}, tile and grid syncs, pipeline and barrier waits) and checked
     * execution's scheduling points behave as if it were not set and return with it still set; the
     * {@code *Interruptibly} waits throw {@link InterruptedException}; it ends with the thread, and no other thread
     * of the launch sees it.
     *
     * <p>Memory consistency effects: actions in the launching thread prior to calling {@code launch}
     * <i>happen-before</i> every action of every kernel thread (each runs on a thread started afterwards); every
     * action of {@code body} in every kernel thread happens-before the return
     * from {@code launch}, whether it returns normally or throws {@link KernelFailure}, except when the
     * launching thread was interrupted (see below), which ends the wait early.
     *
     * @param grid               the grid's extent in blocks ({@code gridDim}), not null; every component at
     *                           least 1
     * @param block              the block's extent in threads ({@code blockDim}), not null; every component at
     *                           least 1, at most {@link #MAX_BLOCK_THREADS} threads in all
     * @param dynamicSharedBytes the size in bytes of each block's {@code extern __shared__} memory
     *                           ({@link KernelContext#dynamicShared()}), 0 to {@link #MAX_DYNAMIC_SHARED_BYTES}
     * @param body               the kernel, run once by each thread of the grid with that thread's context; not
     *                           null
     * @throws NullPointerException     when {@code grid}, {@code block} or {@code body} is null
     * @throws IllegalArgumentException when a component of {@code grid} or {@code block} is below 1, the block
     *                                  has more than 1024 threads, the grid more than 2^31 - 1 threads in all,
     *                                  or the shared memory is negative or above 227 KiB
     * @throws KernelFailure            when a thread throws (the first such throwable is the cause, the message
     *                                  names the thread and its block), when the launch hangs (no cause; the
     *                                  message reports where each thread waits, see {@link #hangPatienceMillis()}),
     *                                  or when the launching thread is interrupted while it waits (the cause is an
     *                                  {@link InterruptedException}; the thread's interrupt status is set again,
     *                                  the launch is aborted and this method returns without waiting for the
     *                                  kernel threads to unwind)
     */
    public static void launch(Dim3 grid, Dim3 block, long dynamicSharedBytes, KernelBody body) {
        new Launch(checked(grid, block, dynamicSharedBytes), block, dynamicSharedBytes,
            Objects.requireNonNull(body, "body"), false).run();
    }

    /**
     * {@code cudaLaunchCooperativeKernel}: like {@link #launch}, with every block resident at once, so that
     * {@link KernelContext#grid()} can synchronize the whole grid (and a {@code ThreadScope.DEVICE} pipeline can
     * span blocks). Unlike CUDA, which bounds a cooperative grid by what fits on the device's multiprocessors,
     * the bound here is a fixed 65,536 threads (each may need a virtual thread of its own, all alive at once).
     *
     * <p>Failures, hangs and aborts behave as in {@link #launch}.
     *
     * <p>Memory consistency effects: as {@link #launch}: actions in the launching thread prior to calling
     * {@code launchCooperative} happen-before every action of every kernel thread, and every action of
     * {@code body} in every kernel thread happens-before the return from {@code launchCooperative}, normal or by
     * {@link KernelFailure}, unless the launching thread was interrupted.
     *
     * @param grid               the grid's extent in blocks ({@code gridDim}), not null; every component at
     *                           least 1
     * @param block              the block's extent in threads ({@code blockDim}), not null; every component at
     *                           least 1, at most {@link #MAX_BLOCK_THREADS} threads in all
     * @param dynamicSharedBytes the size in bytes of each block's {@code extern __shared__} memory, 0 to
     *                           {@link #MAX_DYNAMIC_SHARED_BYTES}
     * @param body               the kernel, run once by each thread of the grid with that thread's context; not
     *                           null
     * @throws NullPointerException     when {@code grid}, {@code block} or {@code body} is null
     * @throws IllegalArgumentException as {@link #launch}, or when the grid has more than 65,536 threads
     * @throws KernelFailure            as {@link #launch}: a thread threw, the launch hung, or the launching thread
     *                                  was interrupted
     */
    public static void launchCooperative(Dim3 grid, Dim3 block, long dynamicSharedBytes, KernelBody body) {
        Dim3 g = checked(grid, block, dynamicSharedBytes);
        if ((long) g.volume() * block.volume() > 65_536) {
            throw new IllegalArgumentException("a cooperative launch runs every thread at once: at most 65536 "
                + "threads, got " + g.volume() + " blocks of " + block.volume());
        }
        new Launch(g, block, dynamicSharedBytes, Objects.requireNonNull(body, "body"), true).run();
    }

    private static Dim3 checked(Dim3 grid, Dim3 block, long dynamicSharedBytes) {
        Objects.requireNonNull(grid, "grid");
        Objects.requireNonNull(block, "block");
        Dim3.of(grid.x(), grid.y(), grid.z());
        Dim3.of(block.x(), block.y(), block.z());
        long blockThreads = (long) block.x() * block.y() * block.z();     // in long: no overflow before the check
        if (blockThreads > MAX_BLOCK_THREADS) {
            throw new IllegalArgumentException("a thread block has at most " + MAX_BLOCK_THREADS + " threads, got "
                + block + " = " + blockThreads);
        }
        long blocks = (long) grid.x() * grid.y() * grid.z();
        if (blocks * blockThreads > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("a launch has at most " + Integer.MAX_VALUE + " threads in all, got "
                + grid + " blocks of " + block + " = " + blocks * blockThreads);
        }
        if (dynamicSharedBytes < 0 || dynamicSharedBytes > MAX_DYNAMIC_SHARED_BYTES) {
            throw new IllegalArgumentException("dynamic shared memory must be in 0.." + MAX_DYNAMIC_SHARED_BYTES
                + " bytes, got " + dynamicSharedBytes);
        }
        return grid;
    }

    /**
     * How long every live thread of a launch must stay blocked, with nothing waking up, before the launch is
     * declared hung: {@code -Djpipeline.simt.hangPatienceMillis} (default 500). No CUDA counterpart: a hung GPU
     * kernel never returns.
     *
     * @return the patience in milliseconds: the system property's value, read again at each call (each launch
     *         calls it once, when it starts), or 500 when the property is unset or not a decimal {@code long};
     *         the value is not range-checked
     */
    public static long hangPatienceMillis() {
        return Long.getLong("jpipeline.simt.hangPatienceMillis", 500);
    }

    /**
     * How this JVM's launches have run so far: blocks run compiled and on strands, and why each kernel that was
     * not compiled fell back. No CUDA counterpart (CUDA compiles every kernel ahead of time); compilation is
     * switched off for the whole JVM by {@code -Djpipeline.simt.compile=false}.
     *
     * @return a snapshot, never null
     */
    public static KernelRuns runs() {
        return new KernelRuns(Launch.COMPILED_BLOCKS.sum(), Launch.STRAND_BLOCKS.sum(), ResumptionScan.fallbacks());
    }
}
