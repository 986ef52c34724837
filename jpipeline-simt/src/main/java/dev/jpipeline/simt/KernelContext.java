package dev.jpipeline.simt;

import dev.jpipeline.Group;
import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * One CUDA thread's view of its launch: the built-in variables ({@code threadIdx}, {@code blockIdx},
 * {@code blockDim}, {@code gridDim}), its groups (thread block, warp, tiled partitions, the grid of a
 * cooperative launch), {@code __shared__} memory and the execution barriers. Confined to its thread.
 */
public final class KernelContext {

    /** The context of the kernel thread running now: used by {@link PipelinePrimitives}. */
    static final ScopedValue<KernelContext> CURRENT = ScopedValue.newInstance();

    private final Launch launch;
    private final BlockState block;
    private final Dim3 threadIdx;
    private final int rank;
    private final WarpState warp;
    private final LaneSequence lane;
    private final ThreadBlock blockGroup;
    private final Group warpGroup;

    KernelContext(Launch launch, BlockState block, Dim3 threadIdx, int rank) {
        this.launch = launch;
        this.block = block;
        this.threadIdx = threadIdx;
        this.rank = rank;
        this.warp = block.warps[rank / Kernel.WARP_SIZE];
        this.lane = new LaneSequence(warp);
        this.blockGroup = new ThreadBlock(this);
        this.warpGroup = new SubGroup("warp " + warpId() + " of block " + block.blockIdx, warp.lanes, laneId(),
            warp.sync);
    }

    /** {@code threadIdx}. */
    public Dim3 threadIdx() {
        return threadIdx;
    }

    /** {@code blockIdx}. */
    public Dim3 blockIdx() {
        return block.blockIdx;
    }

    /** {@code blockDim}. */
    public Dim3 blockDim() {
        return launch.blockDim;
    }

    /** {@code gridDim}. */
    public Dim3 gridDim() {
        return launch.gridDim;
    }

    /** This thread's linear rank in its block (x fastest): {@code this_thread_block().thread_rank()}. */
    public int threadRank() {
        return rank;
    }

    /** The lane of this thread in its warp, 0..31. */
    public int laneId() {
        return rank % Kernel.WARP_SIZE;
    }

    /** The index of this thread's warp in its block. */
    public int warpId() {
        return rank / Kernel.WARP_SIZE;
    }

    /** {@code cooperative_groups::this_thread_block()}. */
    public ThreadBlock block() {
        return blockGroup;
    }

    /** This thread's warp as a group ({@code tiled_partition<32>(this_thread_block())}); {@code sync} is {@code __syncwarp}. */
    public Group warp() {
        return warpGroup;
    }

    /**
     * {@code cooperative_groups::tiled_partition(this_thread_block(), tileSize)}: the block cut into tiles of
     * {@code tileSize} consecutive threads (the last tile may be smaller); returns this thread's tile.
     *
     * @throws IllegalArgumentException when {@code tileSize} is not a power of two from 1 to the block size
     */
    public Group tiledPartition(int tileSize) {
        if (tileSize < 1 || Integer.bitCount(tileSize) != 1 || tileSize > block.size) {
            throw new IllegalArgumentException("tiled_partition size must be a power of two in 1.." + block.size
                + ", got " + tileSize);
        }
        int tile = rank / tileSize;
        return new SubGroup("tile " + tile + " of size " + tileSize + " of block " + block.blockIdx,
            Math.min(tileSize, block.size - tile * tileSize), rank % tileSize, block.tile(tileSize, rank));
    }

    /**
     * {@code cooperative_groups::this_grid()}: every thread of the launch, for {@code ThreadScope.DEVICE}
     * pipelines and grid-wide syncs.
     *
     * @throws IllegalStateException outside a cooperative launch ({@link Kernel#launchCooperative}), where the
     *                               blocks are not guaranteed to run at the same time, as in CUDA
     */
    public Group grid() {
        return launch.gridGroup(this);
    }

    /** This thread's linear rank in the grid: block rank × block size + thread rank. */
    public long globalRank() {
        return (long) launch.gridDim.linear(block.blockIdx) * block.size + rank;
    }

    /** {@code extern __shared__}: the block's dynamic shared memory (the launch's {@code dynamicSharedBytes}). */
    public MemorySegment dynamicShared() {
        return block.dynamicShared;
    }

    /**
     * {@code __shared__ T x}: one instance per block, made by the first thread that asks (for example a
     * {@code PipelineSharedState}).
     */
    public <T> T shared(Object key, Supplier<T> init) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(init, "init");
        return block.shared(key, init);
    }

    /** One instance per grid (device memory), made by the first thread that asks. */
    public <T> T global(Object key, Supplier<T> init) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(init, "init");
        return launch.global(key, init);
    }

    /** {@code __syncthreads()}: waits for every thread of the block; reconverges the block's warps. */
    public void syncThreads() {
        block.syncThreads.arriveAndWait();
    }

    /** {@code __syncwarp()}: waits for every lane of this thread's warp; reconverges the warp. */
    public void syncWarp() {
        warp.sync.arriveAndWait();
    }

    /**
     * Marks this lane as diverged until the next {@link #syncWarp()} or {@link #syncThreads()}: its pipeline
     * commits no longer coalesce with the other lanes' (see the warp convergence model in the SIMT
     * documentation). Use it where CUDA code branches on the lane.
     */
    public void diverge() {
        lane.diverge();
    }

    LaneSequence lane() {
        return lane;
    }

    /** The context of the kernel thread running now. */
    static KernelContext current(String what) {
        if (!CURRENT.isBound()) {
            throw new IllegalStateException(what + " is device code: call it from a kernel thread (Kernel.launch)");
        }
        return CURRENT.get();
    }

    @Override
    public String toString() {
        return "thread " + threadIdx + " of block " + block.blockIdx;
    }
}
