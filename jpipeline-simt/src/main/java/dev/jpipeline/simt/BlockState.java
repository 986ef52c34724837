package dev.jpipeline.simt;

import dev.jpipeline.internal.PhaseBarrier;
import java.lang.foreign.Arena;
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
    /** The launch's checked execution, or null. */
    final CheckedLaunch checked;
    /**
     * Made on first use (most blocks of a compiled empty or register-only kernel never ask, and a block's set-up is
     * a fair part of such a launch): see {@link #sharedVariables()}. Read and set through SHARED_VARIABLES.
     */
    private volatile ConcurrentHashMap<Object, Object> sharedVariables;
    /** Tile barriers by tile size: one per tile. */
    private volatile ConcurrentHashMap<Integer, SyncSite[]> tiles;
    private static final java.lang.invoke.VarHandle SHARED_VARIABLES;
    private static final java.lang.invoke.VarHandle TILES;

    static {
        try {
            java.lang.invoke.MethodHandles.Lookup l = java.lang.invoke.MethodHandles.lookup();
            SHARED_VARIABLES = l.findVarHandle(BlockState.class, "sharedVariables", ConcurrentHashMap.class);
            TILES = l.findVarHandle(BlockState.class, "tiles", ConcurrentHashMap.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
    /** @param dynamicShared the block's slot's shared memory (see {@link Launch}) */
    BlockState(Dim3 blockIdx, int size, MemorySegment dynamicShared, CheckedLaunch checked) {
        this(blockIdx, size, dynamicShared, checked, false);
    }

    /**
     * @param plain whether the block runs as a plain loop (Strand.runPlainBlock): its kernel reaches no sync, so it
     *              gets no warps and no {@code __syncthreads} barrier (null), which were most of a block's set-up
     */
    BlockState(Dim3 blockIdx, int size, MemorySegment dynamicShared, CheckedLaunch checked, boolean plain) {
        this.checked = checked;
        this.blockIdx = blockIdx;
        this.size = size;
        this.dynamicShared = dynamicShared;
        if (plain) {
            this.warps = null;
            this.syncThreads = null;
            return;
        }
        int warpCount = (size + Kernel.WARP_SIZE - 1) / Kernel.WARP_SIZE;
        this.warps = new WarpState[warpCount];
        for (int w = 0; w < warpCount; w++) {
            warps[w] = new WarpState(w, blockIdx, Math.min(Kernel.WARP_SIZE, size - w * Kernel.WARP_SIZE), checked);
        }
        this.syncThreads = new SyncSite("__syncthreads of block " + blockIdx, new PhaseBarrier(size, () -> {
            for (WarpState w : warps) {
                w.reconverge();         // __syncthreads reconverges every warp of the block
            }
        }), checked == null ? null : new SyncCheck("__syncthreads", 0, size, 0, null, true), true);
    }

    /**
     * The latest shared variable asked for: a kernel asks for the same few keys (usually string constants, the
     * same object in every thread) once per thread, so the map is looked up once per block and key run. Racy and
     * safe: an entry's fields are final, and a stale entry only costs a map lookup.
     */
    private SharedEntry latest;

    @SuppressWarnings("unchecked")
    <T> T shared(Object key, java.util.function.Supplier<T> init) {
        SharedEntry entry = latest;
        if (entry != null && entry.key == key) {
            return (T) entry.value;
        }
        Object value = sharedVariables().computeIfAbsent(key, k -> init.get());
        latest = new SharedEntry(key, value);
        return (T) value;
    }

    /** A key and its shared variable (see {@link #latest}). */
    private record SharedEntry(Object key, Object value) {
    }

    /** The block's shared variables and arrays: the map is made by the first thread that asks (a CAS). */
    @SuppressWarnings("unchecked")
    private ConcurrentHashMap<Object, Object> sharedVariables() {
        ConcurrentHashMap<Object, Object> map = sharedVariables;
        if (map == null) {
            map = new ConcurrentHashMap<>();
            Object raced = SHARED_VARIABLES.compareAndExchange(this, null, map);
            map = raced == null ? map : (ConcurrentHashMap<Object, Object>) raced;
        }
        return map;
    }

    @SuppressWarnings("unchecked")
    private ConcurrentHashMap<Integer, SyncSite[]> tiles() {
        ConcurrentHashMap<Integer, SyncSite[]> map = tiles;
        if (map == null) {
            map = new ConcurrentHashMap<>();
            Object raced = TILES.compareAndExchange(this, null, map);
            map = raced == null ? map : (ConcurrentHashMap<Integer, SyncSite[]>) raced;
        }
        return map;
    }

    /** A {@code __shared__} array: made on first use, poisoned under checked execution. */
    MemorySegment sharedArray(Object key, long bytes) {
        MemorySegment array = (MemorySegment) sharedVariables().computeIfAbsent(new ArrayKey(key), k -> {
            MemorySegment made = Arena.ofAuto().allocate(bytes, 16);
            if (checked != null) {
                checked.sharedArray(key, made);
            }
            return made;
        });
        if (array.byteSize() != bytes) {
            throw new IllegalArgumentException("__shared__ array '" + key + "' has " + array.byteSize()
                + " bytes; asked again with " + bytes);
        }
        return array;
    }

    /** Keys of __shared__ arrays, apart from those of shared variables. */
    private record ArrayKey(Object key) {
    }

    /** The barrier of the tile of {@code tileSize} threads that holds block rank {@code rank}. */
    SyncSite tile(int tileSize, int rank) {
        SyncSite[] all = tiles().computeIfAbsent(tileSize, n -> {
            SyncSite[] sites = new SyncSite[(size + n - 1) / n];
            for (int t = 0; t < sites.length; t++) {
                int parties = Math.min(n, size - t * n);
                sites[t] = new SyncSite("sync of tile " + t + " (size " + n + ") of block " + blockIdx,
                    new PhaseBarrier(parties), checked == null ? null
                        : new SyncCheck("the sync of tile " + t + " (size " + n + ")", t * n, parties, 0, null, false));
            }
            return sites;
        });
        return all[rank / tileSize];
    }
}
