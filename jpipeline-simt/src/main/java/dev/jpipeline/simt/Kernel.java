package dev.jpipeline.simt;

import java.util.Objects;

/**
 * Kernel launches: mirrors {@code kernel<<<grid, block, dynamicSharedBytes>>>(args)} and
 * {@code cudaLaunchCooperativeKernel}.
 *
 * <p>Every CUDA thread runs as a virtual thread with its own {@link KernelContext}. Thread blocks are made
 * resident a few at a time (as many as the machine has cores; all of them in a cooperative launch) and each
 * runs to completion, like blocks on a GPU's multiprocessors. {@code launch} returns when every thread has
 * finished (CUDA's launch is asynchronous; this one behaves like a launch followed by
 * {@code cudaDeviceSynchronize()}).
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
     * {@code kernel<<<grid, block, dynamicSharedBytes>>>}: runs {@code body} once per thread of the grid.
     *
     * @throws IllegalArgumentException when the block has more than 1024 threads, or the shared memory is
     *                                  negative or above 227 KiB
     * @throws KernelFailure            when a thread throws or the launch hangs
     */
    public static void launch(Dim3 grid, Dim3 block, long dynamicSharedBytes, KernelBody body) {
        new Launch(checked(grid, block, dynamicSharedBytes), block, dynamicSharedBytes,
            Objects.requireNonNull(body, "body"), false).run();
    }

    /**
     * {@code cudaLaunchCooperativeKernel}: like {@link #launch}, with every block resident at once, so that
     * {@link KernelContext#grid()} can synchronize the whole grid (and a {@code ThreadScope.DEVICE} pipeline can
     * span blocks).
     *
     * @throws IllegalArgumentException as {@link #launch}, or when the grid has more than 65,536 threads
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
        if (block.volume() > MAX_BLOCK_THREADS) {
            throw new IllegalArgumentException("a thread block has at most " + MAX_BLOCK_THREADS + " threads, got "
                + block + " = " + block.volume());
        }
        if (dynamicSharedBytes < 0 || dynamicSharedBytes > MAX_DYNAMIC_SHARED_BYTES) {
            throw new IllegalArgumentException("dynamic shared memory must be in 0.." + MAX_DYNAMIC_SHARED_BYTES
                + " bytes, got " + dynamicSharedBytes);
        }
        return grid;
    }

    /**
     * How long every live thread of a launch must stay blocked, with nothing waking up, before the launch is
     * declared hung: {@code -Djpipeline.simt.hangPatienceMillis} (default 500).
     */
    public static long hangPatienceMillis() {
        return Long.getLong("jpipeline.simt.hangPatienceMillis", 500);
    }
}
