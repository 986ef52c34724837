package dev.jpipeline.simt;

import dev.jpipeline.internal.PhaseBarrier;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What the threads of one thread block share: {@code __shared__} memory (dynamic and keyed variables), the
 * {@code __syncthreads} barrier, the warps, and the barriers of tiled partitions.
 */
final class BlockState {

    final Dim3 blockIdx;
    final int size;
    final SyncSite syncThreads;
    final WarpState[] warps;
    final MemorySegment dynamicShared;
    private final ConcurrentHashMap<Object, Object> sharedVariables = new ConcurrentHashMap<>();
    /** Tile barriers by tile size: one per tile. */
    private final ConcurrentHashMap<Integer, SyncSite[]> tiles = new ConcurrentHashMap<>();
    /** @param dynamicShared the block's slot's shared memory (see {@link Launch}) */
    BlockState(Dim3 blockIdx, int size, MemorySegment dynamicShared) {
        this.blockIdx = blockIdx;
        this.size = size;
        this.dynamicShared = dynamicShared;
        int warpCount = (size + Kernel.WARP_SIZE - 1) / Kernel.WARP_SIZE;
        this.warps = new WarpState[warpCount];
        for (int w = 0; w < warpCount; w++) {
            warps[w] = new WarpState(w, blockIdx, Math.min(Kernel.WARP_SIZE, size - w * Kernel.WARP_SIZE));
        }
        this.syncThreads = new SyncSite("__syncthreads of block " + blockIdx, new PhaseBarrier(size, () -> {
            for (WarpState w : warps) {
                w.reconverge();         // __syncthreads reconverges every warp of the block
            }
        }));
    }

    @SuppressWarnings("unchecked")
    <T> T shared(Object key, java.util.function.Supplier<T> init) {
        return (T) sharedVariables.computeIfAbsent(key, k -> init.get());
    }

    /** The barrier of the tile of {@code tileSize} threads that holds block rank {@code rank}. */
    SyncSite tile(int tileSize, int rank) {
        SyncSite[] all = tiles.computeIfAbsent(tileSize, n -> {
            SyncSite[] sites = new SyncSite[(size + n - 1) / n];
            for (int t = 0; t < sites.length; t++) {
                sites[t] = new SyncSite("sync of tile " + t + " (size " + n + ") of block " + blockIdx,
                    new PhaseBarrier(Math.min(n, size - t * n)));
            }
            return sites;
        });
        return all[rank / tileSize];
    }
}
