package dev.jpipeline.simt;

import dev.jpipeline.Group;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * One CUDA thread's view of its launch: the built-in variables ({@code threadIdx}, {@code blockIdx},
 * {@code blockDim}, {@code gridDim}), its groups (thread block, warp, tiled partitions, the grid of a
 * cooperative launch), {@code __shared__} memory and the execution barriers. Confined to its thread, and valid
 * only until that thread's body returns: the runtime re-points the object at a later thread of the launch (so that a
 * thread costs no allocation), so do not keep it, or groups it returned, beyond that.
 *
 * <p>CUDA has no such object: device code reads the built-in variables and calls the intrinsics
 * ({@code __syncthreads()}, {@code cooperative_groups::this_thread_block()}, ...) directly. Here each kernel
 * thread gets its context as the argument of {@link KernelBody#run(KernelContext)}; the primitives API
 * ({@link PipelinePrimitives}) finds it implicitly, like CUDA's free functions. Instances are made only by
 * the runtime.
 */
public final class KernelContext {

    /** The context of the kernel thread running now: used by {@link PipelinePrimitives}. */
    static final ScopedValue<KernelContext> CURRENT = ScopedValue.newInstance();
    /** An int of a segment by byte offset, for the atomics: (MemorySegment, long offset). */
    private static final java.lang.invoke.VarHandle INT_ATOMIC = ValueLayout.JAVA_INT.varHandle();

    private final Launch launch;
    private final LaneSequence lane = new LaneSequence();
    private final ThreadBlock blockGroup = new ThreadBlock(this);
    // The thread this context stands for now: re-pointed by its strand at each thread it runs (see bind).
    private BlockState block;
    private KernelThread thread;
    private int rank;
    private WarpState warp;
    /** Made on the first warp() call of the current thread. */
    private Group warpGroup;

    KernelContext(Launch launch) {
        this.launch = launch;
    }

    /** Makes this context the one of {@code kt}, whose strand owns it: called before {@code kt}'s body runs. */
    void bind(KernelThread kt) {
        this.block = kt.scheduler.block;
        this.thread = kt;
        this.rank = kt.rank;
        this.warp = block.warps[rank / Kernel.WARP_SIZE];
        this.warpGroup = null;
        lane.reset(warp);
    }

    /**
     * Makes this context one of {@code first}'s block, in a plain run of the block (Strand.runPlainBlock), before
     * {@link #bindPlainRank} points it at each rank: the thread object stays {@code first}'s, and the warp and lane
     * sequence are not set, since a kernel that reaches no resumption point uses none of them (waits, groups,
     * pipeline handles, checked execution): the scan admits only the accessors that read the rank, the indices and
     * memory.
     */
    void bindPlainBlock(KernelThread first) {
        this.block = first.scheduler.block;     // a plain block: no warps (none of its threads syncs or commits)
        this.thread = first;
        this.warp = null;
        this.warpGroup = null;
    }

    /** The exception a compiled thread stopped at a sync unwinds with once its launch has failed or hung. */
    KernelAbortedException abortedAtSync() {
        return new KernelAbortedException(launch.monitor.abortReasonOr("the launch was aborted"));
    }

    /** Whether this context's launch has been aborted (a compiled kernel's loop looks at each warp). */
    boolean launchAborted() {
        return launch.aborted();
    }

    /**
     * Points this context, bound by {@link #bindPlainBlock}, at block rank {@code rank}. Only the rank is written
     * (threadIdx() looks its index up): a compiled block calls this for every CUDA thread, and a reference store
     * costs G1's write barrier each time (empty 16384 x 256 on 2 CPUs: 4.1 ms with G1, 2.5 ms with Serial GC).
     */
    void bindPlainRank(int rank) {
        this.rank = rank;
    }

    /**
     * {@code threadIdx}.
     *
     * @return this thread's index within its block, never null; each component in {@code 0} to the matching
     *         component of {@link #blockDim()} minus 1
     */
    public Dim3 threadIdx() {
        return launch.threadIndex(rank);
    }

    /**
     * {@code blockIdx}.
     *
     * @return the index of this thread's block within the grid, never null; each component in {@code 0} to the
     *         matching component of {@link #gridDim()} minus 1
     */
    public Dim3 blockIdx() {
        return block.blockIdx;
    }

    /**
     * {@code blockDim}.
     *
     * @return the extent of every block of the launch in threads (the launch's {@code block} argument), never
     *         null; at most {@link Kernel#MAX_BLOCK_THREADS} threads in all
     */
    public Dim3 blockDim() {
        return launch.blockDim;
    }

    /**
     * {@code gridDim}.
     *
     * @return the extent of the grid in blocks (the launch's {@code grid} argument), never null
     */
    public Dim3 gridDim() {
        return launch.gridDim;
    }

    /**
     * This thread's linear rank in its block (x fastest): {@code this_thread_block().thread_rank()}.
     *
     * @return {@code blockDim().linear(threadIdx())}, in {@code 0..blockDim().volume()-1}
     */
    public int threadRank() {
        return rank;
    }

    /**
     * The lane of this thread in its warp: CUDA's {@code %laneid}, or {@code threadRank() % 32}.
     *
     * @return {@code threadRank() % 32}, in {@code 0..31}; in a last warp of fewer than 32 threads (a block size
     *         that is not a multiple of 32) below that warp's size
     */
    public int laneId() {
        return rank % Kernel.WARP_SIZE;
    }

    /**
     * The index of this thread's warp in its block: {@code threadRank() / 32} (not CUDA's {@code %warpid},
     * which names a hardware slot and may change).
     *
     * @return {@code threadRank() / 32}, in {@code 0} to (block size + 31) / 32 - 1
     */
    public int warpId() {
        return rank / Kernel.WARP_SIZE;
    }

    /**
     * {@code cooperative_groups::this_thread_block()}.
     *
     * @return this thread's view of its block, never null; the same instance at every call
     */
    public ThreadBlock block() {
        return blockGroup;
    }

    /**
     * This thread's warp as a group ({@code tiled_partition<32>(this_thread_block())}); its {@link Group#sync()}
     * is {@link #syncWarp()} (the same barrier, and it reconverges the warp too).
     *
     * <p>Memory consistency effects of its {@code sync()}: as {@link #syncWarp()}.
     *
     * @return this thread's view of its warp, never null, the same instance at every call: its
     *         {@code size()} is 32, or fewer for the last warp of a block whose size is not a multiple of 32;
     *         its {@code threadRank()} is {@link #laneId()}
     */
    public Group warp() {
        Group g = warpGroup;
        if (g == null) {
            g = new SubGroup("warp " + warpId() + " of block " + block.blockIdx, warp.lanes, laneId(), warp.sync);
            warpGroup = g;
        }
        return g;
    }

    /**
     * {@code cooperative_groups::tiled_partition(this_thread_block(), tileSize)}: the block cut into tiles of
     * {@code tileSize} consecutive threads (the last tile may be smaller); returns this thread's tile.
     *
     * <p>Its {@link Group#sync()} waits for every thread of the tile (and only them) at a barrier that all the
     * views of that tile share, within this block, for this tile size. Unlike {@link #warp()}'s, a tile's sync does
     * not reconverge the warp, even for a tile size of 32: only {@link #syncWarp()}, {@code warp().sync()} and
     * {@link #syncThreads()} begin a new convergence epoch (see {@link #diverge()}).
     *
     * <p>Memory consistency effects of its {@code sync()}: actions of every thread of the tile prior to its call
     * to {@code sync()} happen-before actions of every thread of the tile following its return from the same
     * sync (the same phase of the tile's barrier). It throws {@link KernelAbortedException} as
     * {@link #syncThreads()} does.
     *
     * @param tileSize the number of threads per tile: a power of two, 1 to the block size
     * @return this thread's view of its tile, never null; a new view at every call. Its {@code size()} is
     *         {@code tileSize}, or fewer for the last tile when the block size is not a multiple of it; its
     *         {@code threadRank()} is {@code threadRank() % tileSize}
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
     * <p>Its {@link Group#sync()} ({@code grid.sync()}) waits for every thread of the grid. Memory consistency
     * effects: actions of every thread of the grid prior to its call to {@code sync()} happen-before actions of
     * every thread of the grid following its return from the same grid sync. It throws
     * {@link KernelAbortedException} as {@link #syncThreads()} does, and does not reconverge warps.
     *
     * @return this thread's view of the grid, never null; a new view at every call. Its {@code size()} is the
     *         launch's total thread count, its {@code threadRank()} is {@link #globalRank()}
     * @throws IllegalStateException outside a cooperative launch ({@link Kernel#launchCooperative}), where the
     *                               blocks are not guaranteed to run at the same time, as in CUDA
     */
    public Group grid() {
        return launch.gridGroup(this);
    }

    /**
     * This thread's linear rank in the grid: block rank × block size + thread rank (CUDA's
     * {@code this_grid().thread_rank()}; available in every launch, cooperative or not).
     *
     * @return {@code gridDim().linear(blockIdx()) * blockDim().volume() + threadRank()}, in
     *         {@code 0..gridDim().volume() * blockDim().volume() - 1}
     */
    public long globalRank() {
        return (long) launch.gridDim.linear(block.blockIdx) * block.size + rank;
    }

    /**
     * {@code extern __shared__}: the block's dynamic shared memory (the launch's {@code dynamicSharedBytes}).
     *
     * <p>Plain memory: as in CUDA, one thread's writes become visible to another only through a synchronization,
     * for example {@link #syncThreads()} or a pipeline wait.
     *
     * @return the same segment for every thread of the block, never null: {@code dynamicSharedBytes} long and
     *         aligned to 16 bytes, accessible from any thread; {@link MemorySegment#NULL} (zero bytes) when the
     *         launch asked for none. Do not rely on its initial contents (CUDA leaves shared memory
     *         uninitialized; as on a GPU's multiprocessor, a block may find what an earlier block of the launch
     *         left there; under {@link CheckedExecution} it starts poisoned). It is freed when the launch's last
     *         block finishes: an access after that throws
     *         {@link IllegalStateException}, so do not let it escape the kernel
     */
    public MemorySegment dynamicShared() {
        return block.dynamicShared;
    }

    /**
     * {@code __shared__ T x}: one instance per block, made by the first thread that asks (for example a
     * {@code PipelineSharedState}). Unlike CUDA, where a {@code __shared__} variable is declared statically and
     * starts uninitialized, the variable is named by a key and made on first use by {@code init}.
     *
     * <p>A thread that asks for a key while another thread of the block runs its {@code init} blocks until that
     * {@code init} returns. Memory consistency effects: actions of the thread that runs {@code init}, up to its
     * return, happen-before the return of {@code shared} for the same key in every thread of the block (so the
     * object is safely published); later changes to the object need their own synchronization.
     *
     * @param <T>  the variable's type; every call for one key must use the same type
     * @param key  names the variable within the block (compared with {@code equals}), not null; keys of
     *             {@code shared} and {@link #global} are separate
     * @param init makes the variable's value; run at most once per block and key, by the first thread that asks
     *             (again later only if it returned null); not null, and it must not call {@code shared} itself
     * @return the block's instance for {@code key}: what {@code init} returned in the thread that ran it; null
     *         only when that {@code init} returned null
     * @throws NullPointerException when {@code key} or {@code init} is null
     * @throws ClassCastException   (at the call site) when the variable was made with another type
     */
    public <T> T shared(Object key, Supplier<T> init) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(init, "init");
        return thread.checked == null ? block.shared(key, init)
            : thread.checked.withoutSwitches(thread, () -> block.shared(key, init));
    }

    /**
     * One instance per grid (device memory), made by the first thread that asks: a {@code __device__}
     * variable, named by a key and made on first use by {@code init} rather than declared statically.
     *
     * <p>A thread that asks for a key while another thread of the launch runs its {@code init} blocks until that
     * {@code init} returns. Memory consistency effects: actions of the thread that runs {@code init}, up to its
     * return, happen-before the return of {@code global} for the same key in every thread of the launch; later
     * changes to the object need their own synchronization.
     *
     * @param <T>  the variable's type; every call for one key must use the same type
     * @param key  names the variable within the launch (compared with {@code equals}), not null; keys of
     *             {@code global} and {@link #shared} are separate
     * @param init makes the variable's value; run at most once per launch and key, by the first thread that
     *             asks (again later only if it returned null); not null, and it must not call {@code global}
     *             itself
     * @return the launch's instance for {@code key}: what {@code init} returned in the thread that ran it; null
     *         only when that {@code init} returned null
     * @throws NullPointerException when {@code key} or {@code init} is null
     * @throws ClassCastException   (at the call site) when the variable was made with another type
     */
    public <T> T global(Object key, Supplier<T> init) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(init, "init");
        return thread.checked == null ? launch.global(key, init)
            : thread.checked.withoutSwitches(thread, () -> launch.global(key, init));
    }

    /**
     * {@code __shared__ T name[n]}: a shared-memory array of the block, named by a key and allocated on first use
     * (CUDA declares it statically). Like {@link #dynamicShared()} it starts uninitialized; under checked execution
     * it starts poisoned.
     *
     * @param key   names the array within the block (compared with {@code equals}), not null; separate from the
     *              keys of {@link #shared}
     * @param bytes its size in bytes, 1 to {@link Kernel#MAX_DYNAMIC_SHARED_BYTES}
     * @return the block's array for {@code key}: the same segment for every thread of the block, aligned to 16
     *         bytes, {@code bytes} long; valid until the launch returns
     * @throws NullPointerException     when {@code key} is null
     * @throws IllegalArgumentException when {@code bytes} is out of range, or the array was made with another size
     */
    public MemorySegment sharedArray(Object key, long bytes) {
        Objects.requireNonNull(key, "key");
        if (bytes < 1 || bytes > Kernel.MAX_DYNAMIC_SHARED_BYTES) {
            throw new IllegalArgumentException("a __shared__ array has 1.." + Kernel.MAX_DYNAMIC_SHARED_BYTES
                + " bytes, got " + bytes + " for '" + key + "'");
        }
        return block.sharedArray(key, bytes);
    }

    /**
     * Reads float {@code index} of {@code memory}: {@code s[i]} or {@code g[i]} in CUDA. These accessors
     * ({@code loadFloat}, {@code storeFloat}, {@code loadInt}, {@code storeInt}, {@link #atomicAddInt},
     * {@link #atomicCasInt}) are how a kernel reads and writes shared memory ({@link #dynamicShared()},
     * {@link #sharedArray}, their slices) and global memory (any other segment: the kernel's arguments allocated by
     * the host, memory made by {@link #global}).
     *
     * <p>Outside checked execution it is {@code memory.getAtIndex(JAVA_FLOAT, index)}. Under
     * {@link CheckedExecution} each access is a scheduling point, a read of shared memory that holds poison (never
     * written, a copy that has not landed, a released stage) fails the launch with {@code POISON_READ}, and an
     * access to shared or global memory that conflicts with another thread's access with nothing ordering the two
     * (no {@code __syncthreads}, {@code __syncwarp}, pipeline wait or release, barrier phase or landed copy between
     * them) fails it with {@code DATA_RACE}. Accesses through the raw {@link MemorySegment} are not seen.
     *
     * @param memory the segment to read, not null
     * @param index  the element index
     * @return the float at byte offset {@code 4 * index}
     * @throws IndexOutOfBoundsException when {@code index} is outside {@code 0..memory.byteSize() / 4 - 1}
     * @throws CheckViolation            under checked execution, when the float is poison or the read races
     */
    public float loadFloat(MemorySegment memory, long index) {
        Objects.checkIndex(index, memory.byteSize() / 4);  // getAtIndex would wrap 4 * index around
        if (thread.checked != null) {
            thread.checked.load(thread, memory, index, 4);
        }
        return memory.getAtIndex(ValueLayout.JAVA_FLOAT, index);
    }

    /**
     * Writes float {@code index} of {@code memory}: {@code s[i] = v} or {@code g[i] = v} in CUDA, for shared and
     * global memory as {@link #loadFloat}. Under checked execution a scheduling point that records this thread as
     * the word's last writer, and a {@code DATA_RACE} finding when another thread's access to the word is not
     * ordered before it.
     *
     * @param memory the segment to write, not null
     * @param index  the element index
     * @param value  the value
     * @throws IndexOutOfBoundsException when {@code index} is outside {@code 0..memory.byteSize() / 4 - 1}
     * @throws CheckViolation            under checked execution, when the write races
     */
    public void storeFloat(MemorySegment memory, long index, float value) {
        Objects.checkIndex(index, memory.byteSize() / 4);
        if (thread.checked != null) {
            thread.checked.store(thread, memory, index, 4);
        }
        memory.setAtIndex(ValueLayout.JAVA_FLOAT, index, value);
    }

    /**
     * Reads int {@code index} of {@code memory}: {@link #loadFloat} for ints ({@code s[i]}, {@code g[i]}).
     *
     * @param memory the segment to read, not null
     * @param index  the element index
     * @return the int at byte offset {@code 4 * index}
     * @throws IndexOutOfBoundsException when {@code index} is outside {@code 0..memory.byteSize() / 4 - 1}
     * @throws CheckViolation            under checked execution, when the int is poison or the read races
     */
    public int loadInt(MemorySegment memory, long index) {
        Objects.checkIndex(index, memory.byteSize() / 4);  // getAtIndex would wrap 4 * index around
        if (thread.checked != null) {
            thread.checked.load(thread, memory, index, 4);
        }
        return memory.getAtIndex(ValueLayout.JAVA_INT, index);
    }

    /**
     * Writes int {@code index} of {@code memory}: {@link #storeFloat} for ints ({@code s[i] = v}, {@code g[i] = v}).
     *
     * @param memory the segment to write, not null
     * @param index  the element index
     * @param value  the value
     * @throws IndexOutOfBoundsException when {@code index} is outside {@code 0..memory.byteSize() / 4 - 1}
     * @throws CheckViolation            under checked execution, when the write races
     */
    public void storeInt(MemorySegment memory, long index, int value) {
        Objects.checkIndex(index, memory.byteSize() / 4);
        if (thread.checked != null) {
            thread.checked.store(thread, memory, index, 4);
        }
        memory.setAtIndex(ValueLayout.JAVA_INT, index, value);
    }

    /**
     * {@code atomicAdd(&s[i], delta)} on an int of shared or global memory: adds {@code delta} to int
     * {@code index} of {@code memory} atomically and returns the old value. Outside checked execution the
     * read-modify-write is atomic across every thread of the JVM (a volatile {@code getAndAdd} through a
     * {@code VarHandle}); like CUDA's it orders nothing else (relaxed). Under {@link CheckedExecution} it is a
     * scheduling point and is checked for poison like {@link #loadInt}; two atomics never race with each other,
     * but an atomic and a plain access ({@code loadInt}, {@code storeInt}, ...) of the same word race unless
     * something orders them ({@code DATA_RACE}).
     *
     * @param memory the segment, not null
     * @param index  the element index
     * @param delta  what to add (wrapping on overflow, as in CUDA)
     * @return the int at byte offset {@code 4 * index} before the addition
     * @throws IndexOutOfBoundsException when {@code index} is outside {@code 0..memory.byteSize() / 4 - 1}
     * @throws IllegalArgumentException  when the int is not 4-byte aligned (CUDA requires naturally aligned atomics)
     * @throws CheckViolation            under checked execution, when the int is poison or the access races
     */
    public int atomicAddInt(MemorySegment memory, long index, int delta) {
        long offset = atomicOffset("atomicAdd", memory, index);
        if (thread.checked != null) {
            thread.checked.atomic(thread, memory, index);
        }
        return (int) INT_ATOMIC.getAndAdd(memory, offset, delta);
    }

    /**
     * {@code atomicCAS(&s[i], expected, value)} on an int of shared or global memory: writes {@code value} to int
     * {@code index} of {@code memory} if it holds {@code expected}, atomically, and returns the old value (equal to
     * {@code expected} when the write happened). Atomicity, ordering and checks as {@link #atomicAddInt}.
     *
     * @param memory   the segment, not null
     * @param index    the element index
     * @param expected the value the int must hold for the write to happen
     * @param value    the value to write
     * @return the int at byte offset {@code 4 * index} before the call
     * @throws IndexOutOfBoundsException when {@code index} is outside {@code 0..memory.byteSize() / 4 - 1}
     * @throws IllegalArgumentException  when the int is not 4-byte aligned
     * @throws CheckViolation            under checked execution, when the int is poison or the access races
     */
    public int atomicCasInt(MemorySegment memory, long index, int expected, int value) {
        long offset = atomicOffset("atomicCAS", memory, index);
        if (thread.checked != null) {
            thread.checked.atomic(thread, memory, index);
        }
        return (int) INT_ATOMIC.compareAndExchange(memory, offset, expected, value);
    }

    /** The byte offset of int {@code index}, checked: in bounds and 4-byte aligned (a VarHandle atomic needs it). */
    private static long atomicOffset(String what, MemorySegment memory, long index) {
        Objects.checkIndex(index, memory.byteSize() / 4);
        long offset = 4 * index;
        if (memory.maxByteAlignment() < Integer.BYTES || (memory.address() + offset) % Integer.BYTES != 0) {
            throw new IllegalArgumentException(what + " needs a 4-byte aligned int, as in CUDA: element " + index
                + " of a segment at address 0x" + Long.toHexString(memory.address()) + " (aligned to "
                + memory.maxByteAlignment() + " bytes) is not");
        }
        return offset;
    }

    /**
     * {@code __syncthreads()}: waits until every thread of the block has called it; reconverges the block's warps
     * (a new convergence epoch for each, see {@link #diverge()}) before any thread returns.
     *
     * <p>Every thread of the block counts, including one that has already returned from the kernel: unlike a
     * GPU, where exited threads no longer take part, a block in which some thread has finished and the others
     * call {@code syncThreads()} hangs, and the launch fails with a hang report. The wait is not interruptible:
     * an interrupt is remembered and the thread's interrupt status set again on return.
     *
     * <p>Memory consistency effects: actions of every thread of the block prior to its call to
     * {@code syncThreads()} happen-before actions of every thread of the block following its return from the
     * same {@code __syncthreads} (the same phase of the block's barrier).
     *
     * @throws KernelAbortedException when the launch is aborted (another thread failed, or the launch hung)
     *                                before this wait could end: it unwinds the thread; do not catch it
     */
    public void syncThreads() {
        block.syncThreads.arriveAndWait();
    }

    /**
     * {@code __syncwarp()}: waits until every lane of this thread's warp has called it (or
     * {@code warp().sync()}); reconverges the warp (a new convergence epoch, see {@link #diverge()}) before any
     * lane returns. Unlike CUDA's {@code __syncwarp(mask)} there is no mask: it is always the full mask,
     * {@code 0xffffffff}, of the warp's lanes (fewer than 32 in a short last warp), and a lane that has
     * returned from the kernel still counts (the others hang, and the launch fails with a hang report). The
     * wait is not interruptible: an interrupt is remembered and the thread's interrupt status set again on
     * return.
     *
     * <p>Memory consistency effects: actions of every lane of the warp prior to its call to {@code syncWarp()}
     * happen-before actions of every lane of the warp following its return from the same {@code __syncwarp}
     * (the same phase of the warp's barrier).
     *
     * @throws KernelAbortedException when the launch is aborted (another thread failed, or the launch hung)
     *                                before this wait could end: it unwinds the thread; do not catch it
     */
    public void syncWarp() {
        warp.sync.arriveAndWait();
    }

    /**
     * {@code __syncwarp(mask)}: waits until every lane named in {@code mask} has called {@code syncWarp} with the
     * same mask. The full mask of the warp ({@code 0xffffffff}, or the low bits of a short last warp) is
     * {@link #syncWarp()}, which reconverges the warp; a partial mask synchronizes those lanes only and does not.
     * As in CUDA, every lane named must call it with the same mask: lanes that disagree hang (and the launch
     * fails with a hang report; under checked execution the disagreement is reported as it happens).
     *
     * <p>Memory consistency effects: actions of every lane named in {@code mask} prior to its call happen-before
     * actions of every such lane following its return from the same {@code __syncwarp}.
     *
     * @param mask the lanes that take part, bit {@code i} for lane {@code i}; it must name the calling lane and
     *             only lanes of the warp
     * @throws IllegalArgumentException when the mask leaves out the calling lane or names a lane beyond the warp
     * @throws KernelAbortedException   as {@link #syncWarp()}
     */
    public void syncWarp(int mask) {
        int lanes = warp.lanes;
        int full = warp.fullMask();
        if ((mask & (1 << laneId())) == 0 || (mask & ~full) != 0) {
            throw new IllegalArgumentException(String.format("__syncwarp mask must name the calling lane %d and only "
                + "lanes of its warp (%d lanes, full mask 0x%08x), got 0x%08x", laneId(), lanes, full, mask));
        }
        if (mask == full) {
            syncWarp();
        } else {
            warp.partialSync(mask).arriveAndWait();
        }
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

    /** The CUDA thread this context stands for now. */
    KernelThread thread() {
        return thread;
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
        return "thread " + threadIdx() + " of block " + block.blockIdx;
    }
}
