package dev.jpipeline.simt;

import dev.jpipeline.Group;
import dev.jpipeline.internal.PhaseBarrier;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * One kernel launch in progress.
 *
 * <pre>
 * Blocks run in slots: as many as the machine has cores (every block, in a cooperative launch). A slot runs one
 * resident block at a time, on its own BlockScheduler; the strand that finishes a block's last thread claims the
 * slot's next block (a shared counter) and runs its first thread itself, so the launching thread takes no part
 * once the slots are filled. Each slot's dynamic shared memory is allocated once per launch and reused by the
 * blocks it runs, as a multiprocessor reuses its shared memory; it is freed when the last block has finished.
 *
 * The launching thread waits for the blocks, and on each tick (TICK_MILLIS) asks the hang detector; on a hang or a
 * thread's failure it aborts: every block scheduler wakes its blocked threads, which unwind with
 * KernelAbortedException in their turn, and no further thread or block starts.
 * </pre>
 */
final class Launch {

    private static final long TICK_MILLIS = 20;

    final Dim3 gridDim;
    final Dim3 blockDim;
    final KernelBody body;
    final LaunchMonitor monitor;
    /** Checked execution's state for this launch, or null for a normal launch. */
    final CheckedLaunch checked;
    /**
     * Whether the launch is not checked and its kernel reaches no resumption point (ResumptionScan), or is compiled
     * into regions: then each block runs as a loop over its threads (Strand.runPlainBlock, Strand.runCompiledBlock),
     * which never waits.
     */
    final boolean plain;
    /**
     * The kernel compiled into regions (RegionCompiler), or null: then a plain launch runs the body's run calls in a
     * loop (Strand.runPlainBlock), and any other runs on strands. Set only with {@link #plain}.
     */
    final RegionCompiler.Compiled compiled;
    /** The values the compiled kernel takes before its context (ResumptionScan.captured), or null. */
    final Object[] captured;
    /** Blocks this JVM ran compiled (Strand.runCompiledBlock), for tests and diagnostics: one add per block. */
    static final java.util.concurrent.atomic.LongAdder COMPILED_BLOCKS = new java.util.concurrent.atomic.LongAdder();
    /** Blocks this JVM ran on strands (Kernel.runs): one add per block. */
    static final java.util.concurrent.atomic.LongAdder STRAND_BLOCKS = new java.util.concurrent.atomic.LongAdder();
    /** How many blocks a slot of a plain launch takes at a time (claimPlainBlock). */
    private final int plainChunk;
    /** Per slot of a plain launch: its range [next, end) of block indices, and its finished blocks not yet counted. */
    private final int[] slotCells;
    /** slotCells holds each slot's cells STRIDE ints (64 bytes) apart, so that no two slots share a cache line. */
    private static final int STRIDE = 16;
    private static final int NEXT = 0;
    private static final int END = 1;
    private static final int DONE = 2;
    private static final int COMPILED = 3;
    private static final int PLAIN = 4;
    private final int slots;
    /** Blocks this JVM ran as plain loops (Strand.runPlainBlock), for tests and diagnostics: one add per block. */
    static final java.util.concurrent.atomic.LongAdder PLAIN_BLOCKS = new java.util.concurrent.atomic.LongAdder();
    private final boolean cooperative;
    private final Dim3[] threadIndex;
    private final int blocks;
    /**
     * Each slot's block: set (volatile) before the block's threads run, so that an abort either finds the block or
     * its threads find the abort when they park.
     */
    private final AtomicReferenceArray<BlockScheduler> resident;
    private final MemorySegment[] slotShared;
    private final Arena sharedArena;
    private final AtomicInteger nextBlock = new AtomicInteger();
    /** Blocks not yet finished (or skipped by an abort): the one that brings it to 0 wakes the launching thread. */
    private final AtomicInteger blocksLeft;
    private final Thread launcher = Thread.currentThread();
    private final AtomicReference<KernelFailure> failure = new AtomicReference<>();
    private final ConcurrentHashMap<Object, Object> globals = new ConcurrentHashMap<>();
    private final SyncSite gridSync;
    private final int totalThreads;
    /** Strands with nothing to run, waiting for an assignment. Guarded by itself. */
    private final ArrayDeque<Strand> idle = new ArrayDeque<>();
    /** Set under idle's lock when the launch is over, so that idle strands end; volatile for their unlocked look. */
    private volatile boolean over;

    Launch(Dim3 grid, Dim3 block, long dynamicSharedBytes, KernelBody body, boolean cooperative) {
        this.gridDim = grid;
        this.blockDim = block;
        this.body = body;
        this.cooperative = cooperative;
        this.blocks = grid.volume();
        this.totalThreads = Math.multiplyExact(blocks, block.volume());
        this.monitor = new LaunchMonitor(Kernel.hangPatienceMillis() * 1_000_000L, grid + " x " + block,
            this::progress);
        this.blocksLeft = new AtomicInteger(blocks);
        CheckedSession session = CheckedExecution.SESSION.isBound() ? CheckedExecution.SESSION.get() : null;
        if (session != null && session.owner != Thread.currentThread()) {
            throw new IllegalStateException("a checked run's launches must be made by the thread that runs it ("
                + session.owner.getName() + "), not by " + Thread.currentThread().getName() + ": one schedule "
                + "orders one launch at a time");
        }
        if (session != null && cooperative) {
            throw new UnsupportedOperationException("checked execution runs the blocks of a launch one after another: "
                + "a cooperative launch (" + grid + " x " + block + ") cannot run checked");
        }
        this.checked = session == null ? null : new CheckedLaunch(session, this);
        ResumptionScan.Verdict verdict = ResumptionScan.scan(body);
        // checked: the variant whose scheduling points hand the turn on without a stack, run on the scheduler
        RegionCompiler.Compiled chosen = checked == null ? verdict.compiled() : verdict.checkedCompiled();
        if (checked != null && chosen == null) {
            ResumptionScan.checkedLaunch();
        }
        Object[] values = chosen == null ? null : ResumptionScan.captured(body, verdict);
        this.compiled = values == null ? null : chosen;
        this.captured = values;
        this.plain = checked == null && (compiled != null && !verdict.onScheduler() || verdict.plain());
        this.threadIndex = threadIndices(block);
        int slots = cooperative ? blocks : checked != null ? 1
            : Math.min(blocks, Math.max(1, Runtime.getRuntime().availableProcessors()));
        this.slots = slots;
        // one slot's reference per 16 (64 bytes or more): each strand writes its own at every block
        this.resident = new AtomicReferenceArray<>((slots + 1) * STRIDE);
        this.slotShared = new MemorySegment[slots];
        // closing a shared arena is a handshake with every thread: once per launch, and only when memory is asked for
        this.sharedArena = dynamicSharedBytes == 0 ? null : Arena.ofShared();
        for (int s = 0; s < slots; s++) {
            slotShared[s] = sharedArena == null ? MemorySegment.NULL : sharedArena.allocate(dynamicSharedBytes, 16);
        }
        this.gridSync = cooperative ? new SyncSite("grid sync", new PhaseBarrier(totalThreads)) : null;
        // a plain launch's slots take blocks in ranges: about 8 ranges a slot, at most 64 blocks each
        this.plainChunk = Math.max(1, Math.min(64, blocks / (8 * slots)));
        this.slotCells = new int[(slots + 2) * STRIDE];
    }

    void run() {
        for (int s = 0; s < slots; s++) {
            KernelThread first = claimBlock(s);
            if (first != null) {
                run(first);
            }
        }
        try {
            while (blocksLeft.get() > 0) {
                LockSupport.parkNanos(this, TICK_MILLIS * 1_000_000L);
                if (Thread.interrupted()) {
                    monitor.abort("the launching thread was interrupted");
                    abortBlocks();
                    Thread.currentThread().interrupt();
                    throw new KernelFailure("interrupted while waiting for the kernel", new InterruptedException());
                }
                watchForHang();
            }
            long compiledBlocks = 0;
            long plainBlocks = 0;
            for (int s = 0; s < slots; s++) {
                compiledBlocks += slotCells[cell(s, COMPILED)];
                plainBlocks += slotCells[cell(s, PLAIN)];
            }
            COMPILED_BLOCKS.add(compiledBlocks);
            PLAIN_BLOCKS.add(plainBlocks);
        } finally {
            synchronized (idle) {
                over = true;
                for (Strand s : idle) {
                    LockSupport.unpark(s.thread());
                }
            }
        }
        KernelFailure f = failure.get();
        if (f != null) {
            throw f;
        }
    }

    private static int cell(int slot, int field) {
        return (slot + 1) * STRIDE + field;
    }

    private static int residentIndex(int slot) {
        return (slot + 1) * STRIDE;
    }

    /**
     * A block of {@code slot} ran as a loop (compiled, or a plain loop of run calls): counted in the slot's cells,
     * which the launching thread adds to COMPILED_BLOCKS and PLAIN_BLOCKS once the launch is over (two shared adders
     * touched per block cost more than an empty block's threads). Confined to the slot's strand.
     *
     * @param compiled whether it ran compiled
     * @param plain    whether its kernel reaches no sync
     */
    void loopBlockRan(int slot, boolean compiled, boolean plain) {
        if (compiled) {
            slotCells[cell(slot, COMPILED)]++;
        }
        if (plain) {
            slotCells[cell(slot, PLAIN)]++;
        }
    }

    /**
     * Each block shape's thread indices by rank, made once: a launch of a 1024-thread block made 1024 of them, most
     * of a short launch's cost. Shared read-only between launches (Dim3 is immutable); dropped wholesale past 64
     * shapes.
     */
    private static final ConcurrentHashMap<Dim3, Dim3[]> THREAD_INDICES = new ConcurrentHashMap<>();

    private static Dim3[] threadIndices(Dim3 block) {
        Dim3[] known = THREAD_INDICES.get(block);
        if (known != null) {
            return known;
        }
        Dim3[] made = new Dim3[block.volume()];
        for (int r = 0; r < made.length; r++) {
            made[r] = block.index(r);
        }
        if (THREAD_INDICES.size() >= 64) {
            THREAD_INDICES.clear();
        }
        THREAD_INDICES.putIfAbsent(block, made);
        return made;
    }

    /** The CUDA index of block rank {@code rank}'s thread. */
    Dim3 threadIndex(int rank) {
        return threadIndex[rank];
    }

    /** Runs {@code kt}, which has just taken its block's turn: on its own strand, or on an idle or a new one. */
    void run(KernelThread kt) {
        Strand own = kt.strand;
        if (own != null) {
            LockSupport.unpark(own.thread());
            return;
        }
        Strand s;
        synchronized (idle) {
            s = idle.pollFirst();
        }
        if (s != null) {
            s.assign(kt);
        } else {
            new Strand(this, kt).start();
        }
    }

    /** Starts {@code kt}, which has no strand yet, on a new platform-thread strand (BlockScheduler.releaseTurn). */
    void runOnPlatformStrand(KernelThread kt) {
        new Strand(this, kt, true).start();
    }

    /**
     * Called by a strand with nothing to run: waits for an assignment; null once the launch is over. An idle strand
     * runs no CUDA thread, so an interrupt that reaches it (from a thread that kept a finished kernel thread's
     * {@code Thread}) belongs to nobody: it is dropped, never left set, since {@code LockSupport.park} returns at once
     * while it is set and the strand would spin on its carrier until the launch ended (which, with every carrier so
     * held, it never does).
     */
    KernelThread idle(Strand s) {
        synchronized (idle) {
            if (over) {
                return null;
            }
            idle.addFirst(s);               // most recently used first: its stack is warm
        }
        for (;;) {
            KernelThread kt = s.takeAssigned();
            if (kt != null) {
                return kt;
            }
            if (over) {
                return null;
            }
            LockSupport.park(this);
            Thread.interrupted();
        }
    }

    /** The first thread of slot {@code slot}'s next block, holding its turn; null when no block is left to run. */
    private KernelThread claimBlock(int slot) {
        if (plain) {
            return claimPlainBlock(slot);
        }
        for (;;) {
            int b = nextBlock.get();
            if (b >= blocks) {
                return null;
            }
            if (monitor.aborted()) {
                if (nextBlock.compareAndSet(b, blocks)) {
                    blocksDone(blocks - b);         // never started: the abort ends them here
                    return null;
                }
            } else if (nextBlock.compareAndSet(b, b + 1)) {
                return startBlock(slot, b);
            }
        }
    }

    /** Makes block {@code b} resident in {@code slot}: returns its first thread, or what follows it if aborted. */
    private KernelThread startBlock(int slot, int b) {
        BlockState block = new BlockState(gridDim.index(b), blockDim.volume(), slotShared[slot], checked, plain);
        if (checked != null) {
            checked.blockStarts(block);
        }
        BlockScheduler scheduler = new BlockScheduler(this, block, slot);
        resident.set(residentIndex(slot), scheduler);
        if (!plain) {
            monitor.resident(scheduler);    // a plain block never waits: nothing of it can hang
            (compiled != null ? COMPILED_BLOCKS : STRAND_BLOCKS).increment();
        }
        KernelThread first = scheduler.begin();
        if (first == null) {                // aborted meanwhile
            return blockFinished(scheduler);
        }
        return first;
    }

    /** {@code scheduler}'s block has finished: returns the first thread of its slot's next block, or null. */
    KernelThread blockFinished(BlockScheduler scheduler) {
        if (plain) {
            slotCells[cell(scheduler.slot, DONE)]++;    // counted when the slot's range is used up (claimPlainBlock)
        } else {
            blocksDone(1);
        }
        return claimBlock(scheduler.slot);
    }

    /**
     * A plain launch's next block for {@code slot}: from the slot's range of block indices, taken from the launch's
     * counter {@link #plainChunk} at a time, so that the slots share two contended atomics per range instead of per
     * block (the counter, and the count of blocks left, to which a slot adds its finished blocks once its range is
     * used up). Confined to the strand that runs the slot (a plain block never hands its slot on). On an abort the
     * slot's unstarted blocks, and every block not yet taken, are counted done here.
     */
    private KernelThread claimPlainBlock(int slot) {
        for (;;) {
            if (monitor.aborted()) {
                int skipped = slotCells[cell(slot, END)] - slotCells[cell(slot, NEXT)];
                slotCells[cell(slot, NEXT)] = slotCells[cell(slot, END)];
                int untaken = nextBlock.getAndSet(blocks);
                blocksDone(slotCells[cell(slot, DONE)] + skipped + Math.max(0, blocks - untaken));
                slotCells[cell(slot, DONE)] = 0;
                return null;
            }
            if (slotCells[cell(slot, NEXT)] < slotCells[cell(slot, END)]) {
                return startBlock(slot, slotCells[cell(slot, NEXT)]++);
            }
            if (slotCells[cell(slot, DONE)] > 0) {
                int done = slotCells[cell(slot, DONE)];
                slotCells[cell(slot, DONE)] = 0;
                blocksDone(done);
            }
            int from = nextBlock.getAndAdd(plainChunk);
            if (from >= blocks) {
                return null;
            }
            slotCells[cell(slot, NEXT)] = from;
            slotCells[cell(slot, END)] = Math.min(blocks, from + plainChunk);
        }
    }

    private void blocksDone(int n) {
        if (blocksLeft.addAndGet(-n) == 0) {
            if (sharedArena != null) {
                sharedArena.close();            // every thread has finished: nothing touches shared memory now
            }
            LockSupport.unpark(launcher);
        }
    }

    /** The hang detector's progress signature: moves when a wait ends, or a thread or block starts or ends. */
    private long progress() {
        long p = blocksLeft.get();
        for (int slot = 0; slot < slots; slot++) {
            BlockScheduler s = resident.get(residentIndex(slot));
            p = p * 31 + (s == null ? 0 : s.progress());
        }
        return p;
    }

    /** A kernel thread threw: the first failure fails the launch and aborts it. */
    void failed(KernelThread kt, Throwable t) {
        if (fail("thread " + threadIndex(kt.rank) + " of block " + kt.scheduler.block.blockIdx + " failed: " + t, t)) {
            abortBlocks();
        }
    }

    /**
     * A compiled block's round ended with threads stopped at syncs that cannot pass: some threads returned while
     * others wait at a {@code __syncthreads} (a thread that returned still counts, as KernelContext.syncThreads
     * says), or a warp's lanes wait at a {@code __syncwarp} for lanes that returned or wait at a __syncthreads.
     * {@code states} holds RegionCompiler.RETURNED or -(k + 1) for the sync k each stopped at (1..blockSyncs:
     * __syncthreads, beyond: __syncwarp). On strands the waiting threads would wait for ever: the launch fails at once
     * with the report a hang of strands gives (nothing could wake them).
     */
    void strandedAtSync(BlockScheduler scheduler, int[] states, int blockSyncs) {
        int size = scheduler.block.size;
        int atBlockSync = 0;
        int left = 0;
        for (int r = 0; r < size; r++) {
            left += states[r] == RegionCompiler.RETURNED ? 1 : 0;
            atBlockSync += states[r] != RegionCompiler.RETURNED && -states[r] - 1 <= blockSyncs ? 1 : 0;
        }
        StringBuilder report = new StringBuilder("kernel launch ").append(gridDim).append(" x ").append(blockDim)
            .append(" hung: every live thread is blocked with nothing left to wake it (a compiled block knows at "
                + "once):\n  block ")
            .append(scheduler.block.blockIdx).append(": every started thread is blocked");
        ThreadLines lines = new ThreadLines(report, this);
        for (int r = 0; r < size; r++) {
            if (states[r] == RegionCompiler.RETURNED) {
                continue;
            }
            if (-states[r] - 1 <= blockSyncs) {
                lines.add(r, "waits in __syncthreads of block " + scheduler.block.blockIdx + ": " + atBlockSync
                    + " of " + size + " threads arrived");
            } else {
                int warp = r / Kernel.WARP_SIZE;
                int first = warp * Kernel.WARP_SIZE;
                int lanes = Math.min(Kernel.WARP_SIZE, size - first);
                int atWarpSync = 0;
                for (int l = first; l < first + lanes; l++) {
                    atWarpSync += -states[l] - 1 > blockSyncs ? 1 : 0;
                }
                lines.add(r, "waits in __syncwarp of warp " + warp + " of block " + scheduler.block.blockIdx + ": "
                    + atWarpSync + " of " + lanes + " threads arrived");
            }
        }
        lines.flush();
        if (left > 0) {
            report.append("\n    (").append(left).append(left == 1 ? " has left)" : " have left)");
        }
        if (fail(report.toString(), null)) {
            abortBlocks();
        }
    }

    /**
     * Fails the launch, unless it has failed already, and marks it aborted. Takes no scheduler's lock (a scheduler
     * may call it under its own): the blocks are woken by the caller, or by the launching thread's next tick.
     *
     * @return whether this was the launch's first failure
     */
    boolean fail(String message, Throwable cause) {
        if (failure.compareAndSet(null, new KernelFailure(message, cause))) {
            monitor.abort(message);
            return true;
        }
        return false;
    }

    boolean aborted() {
        return monitor.aborted();
    }

    /** Aborts the launch when the hang detector reports that every live thread is stuck. */
    private void watchForHang() {
        if (monitor.aborted()) {
            abortBlocks();                      // again: a block that became resident, or parked, since the abort
            return;
        }
        if (checked != null && checked.holderStuck(resident.get(residentIndex(0)), TICK_MILLIS)) {
            abortBlocks();
            return;
        }
        if (checked == null && !plain) {
            long now = System.nanoTime();
            for (int slot = 0; slot < slots; slot++) {
                BlockScheduler s = resident.get(residentIndex(slot));
                if (s != null) {
                    s.watchTurn(now);
                }
            }
        }
        String report = monitor.hang();
        if (report != null) {
            fail(report, null);
            abortBlocks();
        }
    }

    private void abortBlocks() {
        for (int slot = 0; slot < slots; slot++) {
            BlockScheduler s = resident.get(residentIndex(slot));
            if (s != null) {
                s.abort();
            }
        }
    }

    Group gridGroup(KernelContext ctx) {
        if (!cooperative) {
            throw new IllegalStateException("this_grid() needs a cooperative launch (Kernel.launchCooperative): "
                + "the blocks of an ordinary launch need not run at the same time");
        }
        return new SubGroup("grid", totalThreads, (int) ctx.globalRank(), gridSync);
    }

    @SuppressWarnings("unchecked")
    <T> T global(Object key, Supplier<T> init) {
        return (T) globals.computeIfAbsent(key, k -> init.get());
    }
}
