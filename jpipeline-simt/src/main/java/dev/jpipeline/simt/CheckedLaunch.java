package dev.jpipeline.simt;

import dev.jpipeline.AsyncContractFulfillment;
import dev.jpipeline.internal.copy.CopyLanding;
import dev.jpipeline.internal.copy.CopyService;
import dev.jpipeline.internal.copy.CopySubmission;
import dev.jpipeline.internal.wait.Deadlines;
import dev.jpipeline.internal.checked.Interleaver;
import dev.jpipeline.internal.PhaseBarrier;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Set;

/**
 * One kernel launch under checked execution: the scheduling points of its threads, its deferred copies, its
 * poisoned shared memory and its sync checks (see {@link CheckedExecution}).
 *
 * <pre>
 * One thread of the launch runs at a time: the launch has one slot, its blocks run one after another in index
 * order, and each block's BlockScheduler takes its decisions from the session's seed. Every call here comes from
 * the thread holding the turn (or from the scheduler passing it, under its lock), so the state is confined to the
 * turn: plain fields, ordered by the hand-offs.
 *
 * Copies: every copy of the launch (pipelines, barriers, the primitives) is deferred. Issue poisons its
 * destination and queues it; the scheduler lands queued copies as candidates of its decisions (and every copy
 * left when nothing else can run), so a copy lands at any point between its issue and the wait that needs it.
 * Shared memory: the block's dynamic shared memory and its __shared__ arrays are poisoned when the block starts
 * and shadowed (SharedShadow); a stage's destinations are poisoned again when every consumer released it.
 * Races: every accessor access, to shared or global memory, and every landed copy goes to the RaceDetector, which
 * hears the syncs, pipeline and barrier phases through releases / acquires (Interleaver) and SyncSite.
 * </pre>
 */
final class CheckedLaunch implements Interleaver, CopyService {

    /**
     * The runtime's classes between a kernel's call and the check, skipped when naming a call site (with the core's
     * packages and the JDK's). By name, not by code source: a shaded jar holds the kernels and the runtime alike.
     */
    private static final Set<String> RUNTIME = Set.of(CheckedLaunch.class.getName(), SyncCheck.class.getName(),
        SyncSite.class.getName(), KernelContext.class.getName(), SubGroup.class.getName(),
        ThreadBlock.class.getName(), BlockScheduler.class.getName(), WarpState.class.getName(),
        BlockState.class.getName(), PipelinePrimitives.class.getName());

    final CheckedSession session;
    private final Launch launch;
    /** The data race detector: null only when switched off (RaceDetector.SWITCH, for measuring its cost). */
    final RaceDetector races;
    /** A compiled kernel's name as access sites show it ("Host.method"), or null. */
    private String compiledName;
    /** This launch's number in its run (an access's identity, CheckedSession.AccessId). */
    private final int ordinal;
    /** The current block's shared memory under watch. */
    private final List<SharedShadow> shadows = new ArrayList<>();
    /** Copies issued and not landed, oldest first. */
    private final List<PendingCopy> pending = new ArrayList<>();
    /**
     * The current block's threads' depth in code that holds a lock the other threads may need (a shared variable's
     * init, run under the map's lock), by rank: no scheduling point switches there, or the next thread to ask for
     * the variable would block on the lock, holding the turn.
     */
    private int[] noSwitchDepth;
    /** The current block's threads' deadlines, by rank: of the timed wait each is blocked in (virtual clock). */
    long[] deadlines;
    /** The current block's threads' primitives' copies not committed yet, by rank (lazily made). */
    private List<PendingCopy>[] openBatches;
    /** The current block's threads' primitives' committed batches with copies, oldest first, by rank. */
    private ArrayDeque<CommittedCopies>[] committedCopies;
    /** Destinations of the copies into each (ring, stage, round), for poisoning at its release. */
    private final HashMap<StageRound, List<MemorySegment>> stageDestinations = new HashMap<>();

    /** The arrivals departed owners will never make, which libcu++ would still wait for. */
    private final DroppedArrivals dropped = new DroppedArrivals();

    private record StageRound(Object ring, int stage, long round) {
    }

    CheckedLaunch(CheckedSession session, Launch launch) {
        this.session = session;
        this.launch = launch;
        this.races = RaceDetector.switchedOn() ? new RaceDetector(launch) : null;
        this.ordinal = session.launchStarts();
    }

    // ---------------------------------------------------------------------------------------------------------
    // Blocks and shared memory

    /** A block starts: its shared memory is poisoned, and the last block's is no longer watched. */
    @SuppressWarnings("unchecked")
    void blockStarts(BlockState block) {
        noSwitchDepth = new int[block.size];
        deadlines = new long[block.size];
        Arrays.fill(deadlines, Deadlines.NO_DEADLINE);
        @SuppressWarnings({"unchecked", "rawtypes"})   // arrays of a generic type: made raw, filled per thread
        List<PendingCopy>[] batches = new List[block.size];
        @SuppressWarnings({"unchecked", "rawtypes"})
        ArrayDeque<CommittedCopies>[] copies = new ArrayDeque[block.size];
        openBatches = batches;
        committedCopies = copies;
        shadows.clear();
        stageDestinations.clear();
        if (races != null) {
            races.blockStarts(launch.gridDim.linear(block.blockIdx), block.size);
        }
        if (block.dynamicShared.byteSize() > 0) {
            shadows.add(new SharedShadow("dynamic shared memory", block.dynamicShared));
        }
    }

    /** Runs {@code action} ({@code kt}'s, under a lock) with no scheduling point switching away from {@code kt}. */
    <T> T withoutSwitches(KernelThread kt, java.util.function.Supplier<T> action) {
        noSwitchDepth[kt.rank]++;
        try {
            return action.get();
        } finally {
            noSwitchDepth[kt.rank]--;
        }
    }

    /** Whether {@code kt}'s scheduling points switch now. */
    boolean switches(KernelThread kt) {
        return noSwitchDepth[kt.rank] == 0;
    }

    /** A __shared__ array was made: poisoned and watched. */
    void sharedArray(Object key, MemorySegment array) {
        shadows.add(new SharedShadow("__shared__ array '" + key + "'", array));
    }

    private SharedShadow shadowOf(long address) {
        for (SharedShadow s : shadows) {
            if (s.covers(address)) {
                return s;
            }
        }
        return null;
    }

    /** An accessor read of element {@code index} ({@code bytes} wide): a scheduling point, then the poison check. */
    void load(KernelThread kt, MemorySegment memory, long index, int bytes) {
        kt.scheduler.yieldPoint(kt, "load");
        checkPoison(kt, memory, index, bytes);
        race(kt, memory, index, WordHistory.Kind.READ);
    }

    private void checkPoison(KernelThread kt, MemorySegment memory, long index, int bytes) {
        if (!memory.isNative() || index < 0 || index >= memory.byteSize() / bytes) {
            return;                 // not shared memory, or the access itself throws
        }
        long address = memory.address() + index * bytes;
        SharedShadow shadow = shadowOf(address);
        if (shadow == null) {
            return;
        }
        long at = address - shadow.memory.address();
        int code = shadow.poisonAt(address, bytes);
        session.trace(kt, " loads ", shadow.name, " +", at, code == -1 ? "" : " (POISON)");
        if (code != -1) {
            throw violation(FindingKind.POISON_READ, kt + " read " + bytes + " bytes of " + shadow.name
                + " at offset " + at + " (0x" + Long.toHexString(at) + "), which hold poison: "
                + SharedShadow.describe(code, launch));
        }
    }

    /** An accessor write: a scheduling point; the thread becomes the words' last writer. */
    void store(KernelThread kt, MemorySegment memory, long index, int bytes) {
        kt.scheduler.yieldPoint(kt, "store");
        race(kt, memory, index, WordHistory.Kind.WRITE);
        markStored(kt, memory, index, bytes);
    }

    private void markStored(KernelThread kt, MemorySegment memory, long index, int bytes) {
        if (!memory.isNative() || index < 0 || index >= memory.byteSize() / bytes) {
            return;
        }
        long address = memory.address() + index * bytes;
        SharedShadow shadow = shadowOf(address);
        if (shadow != null) {
            shadow.mark(address, bytes, SharedShadow.STORED, kt.rank);
            session.trace(kt, " stores ", shadow.name, " +", address - shadow.memory.address());
        }
    }

    /**
     * An accessor atomic ({@code atomicAdd}, {@code atomicCAS}) on int {@code index}: a scheduling point, then the
     * poison check of a read, and the thread becomes the word's last writer.
     */
    void atomic(KernelThread kt, MemorySegment memory, long index) {
        kt.scheduler.yieldPoint(kt, "atomic");
        checkPoison(kt, memory, index, 4);
        race(kt, memory, index, WordHistory.Kind.ATOMIC);
        markStored(kt, memory, index, 4);
    }

    /**
     * Element {@code index} (4 bytes) of {@code memory}, accessed by {@code kt}, goes to the race detector: a race
     * fails the launch with DATA_RACE. Heap segments (a Java array's) are global memory too, except read-only views
     * of them, whose array Java does not give. Not watched: accesses
     * inside the init of a
     * {@code ctx.shared} or {@code ctx.global} variable, which happen-before every thread that asks for its key.
     */
    private void race(KernelThread kt, MemorySegment memory, long index, WordHistory.Kind kind) {
        if (races == null || index < 0 || index >= memory.byteSize() / 4 || noSwitchDepth[kt.rank] > 0) {
            return;     // (inside a shared or global init: ordered before every thread that asks for the key)
        }
        long address = memory.address() + index * 4;      // a heap segment's: the offset in its array
        Object array = memory.isNative() ? null : memory.heapBase().orElse(null);
        if (!memory.isNative() && array == null) {
            return;     // a read-only view of a Java array hides the array (heapBase() is empty): not watched
        }
        SharedShadow shadow = memory.isNative() ? shadowOf(address) : null;
        WordHistory word = shadow != null ? shadow.history(address) : memory.isNative() ? races.globalWord(address)
            : races.heapWord(array, address);
        String site = session.wantsSite(ordinal, races.block(), kt.rank, races.nextAccess(kt)) ? accessSite() : null;
        RaceDetector.Race race = races.access(kt, word, kind, site);
        if (race != null) {
            RaceDetector.Place place = shadow == null ? new RaceDetector.Place(null, index, memory.byteSize(), false)
                : new RaceDetector.Place(shadow.name, (address - shadow.memory.address()) / 4, 0, false);
            throw violation(FindingKind.DATA_RACE, raceMessage(race, place, site != null ? site : accessSite()));
        }
    }

    /**
     * A race's message: {@code nowSite} is where its second access is; the first one's site, if not recorded, is
     * asked of the session, which runs the schedule again to record it (CheckedExecution.replay).
     */
    private String raceMessage(RaceDetector.Race race, RaceDetector.Place place, String nowSite) {
        return races.describe(race, place, nowSite != null ? nowSite : siteOf(race.now()), siteOf(race.before()));
    }

    /** {@code a}'s site, or, where it was not recorded, a placeholder and a request to record it on a rerun. */
    private String siteOf(WordHistory.Access a) {
        if (a.site() != null) {
            return a.site();
        }
        session.needSite(new CheckedSession.AccessId(ordinal, a.block(), a.rank(), a.seq()));
        return "(a site recorded when the schedule runs again)";
    }

    /** Poisons {@code range} and marks it in its shadow, if it is shared memory. */
    private void poison(MemorySegment range, int kind, int rank) {
        SharedShadow.poison(range);
        if (range.isNative()) {
            SharedShadow shadow = shadowOf(range.address());
            if (shadow != null) {
                shadow.mark(range.address(), range.byteSize(), kind, rank);
            }
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // Scheduling points (Interleaver)

    @Override
    public void operation(String op) {
        KernelThread kt = current();
        kt.scheduler.yieldPoint(kt, op);
    }

    @Override
    public void releases(Object sync, long phase) {
        KernelThread kt = ownThread();
        if (kt != null) {
            races.release(kt, sync, phase);
        }
    }

    @Override
    public void acquires(Object sync, long phase) {
        KernelThread kt = ownThread();
        if (kt != null) {
            races.acquire(kt, sync, phase);
        }
    }

    /**
     * The kernel thread of this launch running now, for the race detector; null when it is off or the caller is
     * no thread of this launch (a barrier made in this launch and used later, by the host or another launch).
     */
    private KernelThread ownThread() {
        if (races == null || !KernelContext.CURRENT.isBound()) {
            return null;
        }
        KernelThread kt = KernelContext.CURRENT.get().thread();
        return kt != null && kt.checked == this ? kt : null;
    }

    @Override
    public CopyService copies(CopyService configured) {
        return this;
    }

    @Override
    public void stageCopy(Object ring, int stage, long round, MemorySegment dst) {
        stageDestinations.computeIfAbsent(new StageRound(ring, stage, round), k -> new ArrayList<>()).add(dst);
    }

    @Override
    public void stageFreed(Object ring, int stage, long round) {
        List<MemorySegment> freed = stageDestinations.remove(new StageRound(ring, stage, round));
        if (freed != null) {
            KernelThread kt = current();
            for (MemorySegment dst : freed) {
                if (dst.isNative() && shadowOf(dst.address()) != null) {   // a stage buffer; global memory is output
                    poison(dst, SharedShadow.RELEASED, kt.rank);
                }
            }
            session.trace(kt, " releases stage ", stage, " for every consumer: ", freed.size(),
                " destination(s) poisoned");
        }
    }

    @Override
    public void departs(Object ring, String who, long nextCommit, long nextRelease) {
        dropped.departs(ring, who, nextCommit, nextRelease);
    }

    /** A wait that ended only because a departed owner's arrivals were dropped fails its thread: HANGS_ON_GPU. */
    @Override
    public void needs(Object ring, boolean commits, int stage, long batch, String op) {
        failIfHangsOnGpu(ring, commits, stage, batch, op, false);
    }

    /**
     * A wait that jpipeline fails at once because every owner it needs has departed: on a GPU it never ends, when
     * the departures' dropped arrivals are why (HANGS_ON_GPU); otherwise the wait's own failure is the finding.
     */
    @Override
    public void abandoned(Object ring, boolean commits, int stage, long batch, String op) {
        failIfHangsOnGpu(ring, commits, stage, batch, op, true);
    }

    /** Throws the current thread's HANGS_ON_GPU finding when the departures' dropped arrivals decide its wait. */
    private void failIfHangsOnGpu(Object ring, boolean commits, int stage, long batch, String op, boolean abandoned) {
        String hang = dropped.hangOnGpu(ring, commits, stage, batch, op, current(), abandoned);
        if (hang != null && !launch.aborted()) {
            throw violation(FindingKind.HANGS_ON_GPU, hang);
        }
    }

    private static KernelThread current() {
        return KernelContext.current("a pipeline operation").thread();
    }

    // ---------------------------------------------------------------------------------------------------------
    // Deferred copies (CopyService)

    /** A copy issued and not landed: memory ({@code src}), a file ({@code channel}), or a primitive's. */
    static final class PendingCopy {
        final MemorySegment dst;
        final MemorySegment src;
        final FileChannel channel;
        final long position;
        final long zfill;
        final CopyLanding landing;
        final KernelThread issuer;
        /** The shared memory it writes and the offset there, for traces; null when not shared memory. */
        SharedShadow into;
        long offset;
        boolean landed;
        /** The issuer's clock and epoch at the issue, which its writes carry (RaceDetector); null when off. */
        VectorClock clock;
        int epoch;
        /** Its issue's access number (RaceDetector), and its site where recorded. */
        int seq;
        int barriers;
        String site;

        PendingCopy(MemorySegment dst, MemorySegment src, FileChannel channel, long position, long zfill,
                    CopyLanding landing, KernelThread issuer) {
            this.dst = dst;
            this.src = src;
            this.channel = channel;
            this.position = position;
            this.zfill = zfill;
            this.landing = landing;
            this.issuer = issuer;
        }

        @Override
        public String toString() {
            return "a copy of " + dst.byteSize() + " bytes" + (into == null ? "" : " to " + into.name + " +" + offset)
                + " (issued by " + issuer + ")";
        }
    }

    @Override
    public AsyncContractFulfillment copyInto(MemorySegment dst, MemorySegment src, PhaseBarrier target,
                                             CopyLanding landing, boolean onIssuer) {
        return defer(dst, src, null, 0, target, landing);
    }

    @Override
    public AsyncContractFulfillment readInto(MemorySegment dst, FileChannel channel, long position,
                                             PhaseBarrier target, CopyLanding landing, boolean onIssuer) {
        return defer(dst, null, channel, position, target, landing);          // held back like any copy
    }

    private AsyncContractFulfillment defer(MemorySegment dst, MemorySegment src, FileChannel channel, long position,
                                           PhaseBarrier target, CopyLanding landing) {
        KernelThread kt = current();
        target.tieCopy();
        landing.copyHandedOff();
        issue(new PendingCopy(dst, src, channel, position, 0, landing, kt));
        return AsyncContractFulfillment.ASYNC;
    }

    /** A thread's primitives' copies that joined batch {@code actual} of its warp's sequence. */
    record CommittedCopies(long actual, List<PendingCopy> copies) {
    }

    /** {@code __pipeline_memcpy_async}: deferred, landed by the scheduler or by the wait that covers it. */
    void primitiveCopy(KernelThread kt, MemorySegment dst, MemorySegment src, long zfill) {
        PendingCopy copy = new PendingCopy(dst, src, null, 0, zfill, null, kt);
        if (openBatches[kt.rank] == null) {
            openBatches[kt.rank] = new ArrayList<>();
        }
        openBatches[kt.rank].add(copy);
        issue(copy);
    }

    /** {@code __pipeline_commit}: the thread's open copies joined batch {@code actual}. */
    void primitiveCommit(KernelThread kt, long actual) {
        List<PendingCopy> open = openBatches[kt.rank];
        if (open != null) {
            if (committedCopies[kt.rank] == null) {
                committedCopies[kt.rank] = new ArrayDeque<>();
            }
            committedCopies[kt.rank].add(new CommittedCopies(actual, open));
            openBatches[kt.rank] = null;
        }
    }

    /**
     * {@code __pipeline_wait_prior}: every batch up to {@code target} is complete. A scheduling point first, where
     * the copies may land in any order; then the thread's own copies in covered batches land now (other lanes'
     * copies are theirs to wait for, as in CUDA).
     */
    void primitiveWait(KernelThread kt, long target) {
        kt.scheduler.yieldPoint(kt, "__pipeline_wait_prior");
        ArrayDeque<CommittedCopies> committed = committedCopies[kt.rank];
        while (committed != null && !committed.isEmpty() && committed.peekFirst().actual() <= target) {
            for (PendingCopy copy : committed.pollFirst().copies()) {
                landNow(copy);
            }
        }
    }

    /**
     * {@code __pipeline_arrive_on}: every copy this thread has issued with the primitives (committed or not) lands
     * now, so that the barrier phase its next arrival completes finds them landed, as CUDA's tie guarantees (the
     * copies land at the latest point that is still safe for every waiter of that phase: the tie itself).
     */
    void primitiveArriveOn(KernelThread kt) {
        List<PendingCopy> open = openBatches[kt.rank];
        if (open != null) {
            for (PendingCopy copy : open) {
                landNow(copy);
            }
        }
        ArrayDeque<CommittedCopies> committed = committedCopies[kt.rank];
        if (committed != null) {
            for (CommittedCopies batch : committed) {
                for (PendingCopy copy : batch.copies()) {
                    landNow(copy);
                }
            }
        }
    }

    private void issue(PendingCopy copy) {
        KernelThread kt = copy.issuer;
        poison(copy.dst, SharedShadow.PENDING, kt.rank);
        copy.into = copy.dst.isNative() ? shadowOf(copy.dst.address()) : null;
        copy.offset = copy.into == null ? 0 : copy.dst.address() - copy.into.memory.address();
        if (races != null) {
            copy.clock = races.copyClock(kt);
            copy.epoch = races.epoch(kt);
            copy.barriers = races.barriers(kt);
            copy.seq = races.countAccess(kt);
            copy.site = session.wantsSite(ordinal, races.block(), kt.rank, copy.seq) ? accessSite() : null;
        }
        pending.add(copy);
        session.trace(kt, " issues ", copy);
        kt.scheduler.yieldPoint(kt, "memcpy_async");
    }

    int pendingCopies() {
        return pending.size();
    }

    /** Lands pending copy {@code index} (the scheduler's choice, under its lock). */
    void land(int index) {
        land(pending.remove(index));
    }

    /** Lands {@code copy} now, unless it has landed: a wait that covers it needs it. */
    void landNow(PendingCopy copy) {
        if (!copy.landed) {
            pending.remove(copy);
            land(copy);
        }
    }

    private void land(PendingCopy copy) {
        copy.landed = true;
        long data = copy.dst.byteSize() - copy.zfill;
        Throwable failure = CopySubmission.perform(copy.dst.asSlice(0, data), copy.src, copy.channel, copy.position);
        if (failure == null) {
            copy.dst.asSlice(data).fill((byte) 0);
        }
        if (copy.dst.isNative()) {
            SharedShadow shadow = shadowOf(copy.dst.address());
            if (shadow != null) {
                shadow.mark(copy.dst.address(), copy.dst.byteSize(), SharedShadow.LANDED, copy.issuer.rank);
            }
        }
        session.trace(copy, " lands", failure == null ? "" : " (failed: " + failure + ")");
        if (copy.clock != null && copy.src != null && !launch.aborted() && copyReads(copy, data)) {
            // its source raced: the launch has failed
        } else if (copy.clock != null && copy.dst.isNative() && !launch.aborted()) {
            copyWrites(copy);
        }
        if (copy.landing != null) {
            copy.landing.copyLanded(failure);
        } else if (failure != null) {       // a primitive's copy: no stage to fail, so the launch fails, as at issue
            launch.fail(copy + " failed when it landed: " + failure, failure);
        }
    }

    /**
     * A landed copy's reads of its first {@code bytes} source bytes go to the race detector, word by word (shared
     * memory, native global memory, a Java array's): the first race fails the launch.
     *
     * @return whether a race failed it
     */
    private boolean copyReads(PendingCopy copy, long bytes) {
        MemorySegment src = copy.src;
        long from = src.address() & ~3L;
        long to = src.address() + Math.min(bytes, src.byteSize());
        SharedShadow shadow = src.isNative() ? shadowOf(src.address()) : null;
        Object array = src.isNative() ? null : src.heapBase().orElse(null);
        if (!src.isNative() && array == null) {
            return false;
        }
        for (long address = from; address < to; address += 4) {
            WordHistory word = shadow != null ? shadow.history(address)
                : array == null ? races.globalWord(address) : races.heapWord(array, address);
            RaceDetector.Race race = races.copyReads(copy.issuer.rank, copy.epoch, copy.barriers, copy.seq,
                copy.clock, copy.site, word);
            if (race != null) {
                RaceDetector.Place place = shadow == null
                    ? new RaceDetector.Place(null, (address - src.address()) / 4, src.byteSize(), true, true)
                    : new RaceDetector.Place(shadow.name, (address - shadow.memory.address()) / 4, 0, true, true);
                fail(FindingKind.DATA_RACE, raceMessage(race, place, null));
                return true;
            }
        }
        return false;
    }

    /** A landed copy's writes go to the race detector, word by word: the first race fails the launch. */
    private void copyWrites(PendingCopy copy) {
        long from = copy.dst.address() & ~3L;
        long to = copy.dst.address() + copy.dst.byteSize();
        SharedShadow shadow = shadowOf(copy.dst.address());     // a copy's destination lies in one piece of memory
        for (long address = from; address < to; address += 4) {
            RaceDetector.Race race = races.copyLands(copy.issuer.rank, copy.epoch, copy.barriers, copy.seq, copy.clock,
                copy.site,
                shadow != null ? shadow.history(address) : races.globalWord(address));
            if (race != null) {
                RaceDetector.Place place = shadow == null
                    ? new RaceDetector.Place(null, (address - copy.dst.address()) / 4, copy.dst.byteSize(), true)
                    : new RaceDetector.Place(shadow.name, (address - shadow.memory.address()) / 4, 0, true);
                fail(FindingKind.DATA_RACE, raceMessage(race, place, null));
                return;
            }
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // Findings

    /** The launching thread's watch: how long the turn's holder has waited outside jpipeline, in ms. */
    private long holderStuckMillis;
    private KernelThread holderSeen;

    /**
     * Called by the launching thread on each tick: whether the thread holding {@code block}'s turn has waited outside
     * jpipeline (a Java monitor or lock, a JDK wait without a timeout) for the hang patience; then reported as a hang,
     * with its stack, and the launch fails. Under checked execution only the holder runs, so a lock that a waiting
     * thread holds across a scheduling point can never be released: without this, the launch would never return.
     */
    boolean holderStuck(BlockScheduler block, long tickMillis) {
        KernelThread kt = block == null ? null : block.holderNow();
        Strand strand = kt == null ? null : kt.strand;
        Thread.State state = strand == null ? null : strand.thread().getState();
        boolean waiting = state == Thread.State.BLOCKED || state == Thread.State.WAITING;
        if (!waiting || kt != holderSeen) {
            holderSeen = waiting ? kt : null;
            holderStuckMillis = 0;
            return false;
        }
        holderStuckMillis += tickMillis;
        if (holderStuckMillis < Kernel.hangPatienceMillis()) {
            return false;
        }
        StringBuilder stack = new StringBuilder();
        for (StackTraceElement e : strand.thread().getStackTrace()) {
            stack.append("\n        at ").append(e);
        }
        fail(FindingKind.HANG, kt + " holds the turn but has waited outside jpipeline for " + holderStuckMillis
            + " ms (" + (state == Thread.State.BLOCKED ? "a Java monitor" : "a Java lock or a JDK wait") + "): under "
            + "checked execution only the thread holding the turn runs, so a lock held by a thread that waits for the "
            + "turn is never released; do not hold a lock across a scheduling point (a pipeline operation, a sync, an "
            + "accessor)" + stack);
        return true;
    }

    /** Records a finding raised in a kernel thread, and returns the exception that fails it. */
    CheckViolation violation(FindingKind kind, String message) {
        session.report(kind, message);
        return new CheckViolation(kind, message);
    }

    /** Records a finding that no kernel thread can throw (a hang, a thread that left a barrier): fails the launch. */
    void fail(FindingKind kind, String message) {
        session.report(kind, message);
        launch.fail(message, new CheckViolation(kind, message));
    }

    /**
     * Where the kernel called a sync: its frames from the innermost outside the runtime to where the runtime called
     * the kernel's body. A compiled kernel's frame (its hidden class's step, which runs the method's code) is named
     * by the kernel's method, as in {@link #accessSite}; without it the walk would run on into the runtime's
     * {@code Strand}, and the site would name that.
     */
    Site callSite() {
        return StackWalker.getInstance(StackWalker.Option.SHOW_HIDDEN_FRAMES).walk(frames -> {
            StringBuilder key = new StringBuilder();
            String shown = null;
            boolean inKernel = false;
            for (StackWalker.StackFrame f : (Iterable<StackWalker.StackFrame>) frames::iterator) {
                String name = f.getClassName();
                Frame kind = frame(name, inKernel);
                if (kind == Frame.END) {
                    break;                      // the kernel's frames end where the runtime called its body
                }
                if (kind == Frame.SKIP) {
                    continue;
                }
                inKernel = true;
                key.append(name).append('.').append(f.getMethodName()).append('@').append(f.getByteCodeIndex())
                    .append(';');
                String frame = frameName(name, f.getMethodName()) + "(" + f.getFileName() + ":" + f.getLineNumber()
                    + ")";
                if (shown == null) {
                    shown = frame;
                } else if (!shown.contains(" from ")) {
                    shown += " from " + frame;
                }
            }
            return new Site(key.toString(), shown == null ? "?" : shown);
        });
    }

    /**
     * Where a kernel called a sync: its whole chain of kernel frames, each by method and bytecode index (two calls
     * of one helper from different places, or two calls on one line, are different sites, as two inlined barriers
     * are on a GPU), shown by the innermost frame and its caller.
     */
    record Site(String key, String shown) {
        @Override
        public boolean equals(Object o) {
            return o instanceof Site s && s.key.equals(key);
        }

        @Override
        public int hashCode() {
            return key.hashCode();
        }

        @Override
        public String toString() {
            return shown;
        }
    }

    /** The runtime's classes that call a kernel's body: where its frames end. */
    private static final Set<String> CALLERS = Set.of(Strand.class.getName(), Launch.class.getName(),
        KernelThread.class.getName(), CompiledMake.class.getName());

    /**
     * Where the kernel made the access being checked: every kernel frame, innermost first, each by class, method,
     * file and line ("Kernels.scale(Kernels.java:42) from Kernels.lambda$main$0(Kernels.java:17)"). A compiled
     * kernel's frame (its hidden class's step) is named by the kernel's method; lambda proxies are left out.
     */
    String accessSite() {
        return StackWalker.getInstance(StackWalker.Option.SHOW_HIDDEN_FRAMES).walk(frames -> {
            StringBuilder shown = new StringBuilder();
            boolean inKernel = false;
            for (StackWalker.StackFrame f : (Iterable<StackWalker.StackFrame>) frames::iterator) {
                String name = f.getClassName();
                Frame kind = frame(name, inKernel);
                if (kind == Frame.END) {
                    break;                      // the runtime called the kernel's body here
                }
                if (kind == Frame.SKIP) {
                    continue;
                }
                inKernel = true;
                shown.append(shown.isEmpty() ? "" : " from ").append(frameName(name, f.getMethodName())).append('(')
                    .append(f.getFileName())
                    .append(':').append(f.getLineNumber()).append(')');
            }
            return shown.isEmpty() ? "?" : shown.toString();
        });
    }

    /** What a stack frame is to a site: the kernel's, one to pass over, or where the runtime called the kernel. */
    private enum Frame { KERNEL, SKIP, END }

    /**
     * A frame of class {@code name}, walking out from the innermost: the runtime's callers of a kernel's body end
     * the walk, as the rest of the runtime does once kernel frames were seen (a runtime call inside the kernel comes
     * before them); the JDK's frames are passed over wherever they are, so that a kernel's helper reached through a
     * MethodHandle (its LambdaForm frames) or a JDK method (Optional.ifPresent) keeps the kernel frames around it.
     */
    private static Frame frame(String name, boolean inKernel) {
        if (CALLERS.contains(name)) {
            return Frame.END;
        }
        if (name.startsWith("java.") || name.startsWith("jdk.") || name.startsWith("sun.")
            || name.contains("$$Lambda")) {
            return Frame.SKIP;
        }
        if (isRuntime(name)) {
            return inKernel ? Frame.END : Frame.SKIP;
        }
        return Frame.KERNEL;
    }

    /** A kernel frame's name: Class.method, or for a compiled kernel's step the kernel's class and method. */
    private String frameName(String className, String method) {
        int compiled = className.indexOf("$$KernelRegions");
        return compiled >= 0 ? compiledName(className.substring(0, compiled))
            : className.substring(className.lastIndexOf('.') + 1) + "." + method;
    }

    /** A compiled kernel's frame, named by the kernel's class and method (its step runs the method's code). */
    private String compiledName(String host) {
        String name = compiledName;
        if (name == null) {
            String simple = host.substring(host.lastIndexOf('.') + 1);
            String method = null;
            if (launch.compiled != null) {
                String whole = launch.compiled.lines().get(0);     // host.method(descriptor)
                String owner = whole.substring(0, whole.indexOf('('));
                method = owner.substring(owner.lastIndexOf('.') + 1);
            }
            name = simple + "." + (method == null ? "(compiled kernel)" : method);
            compiledName = name;
        }
        return name;
    }

    private static boolean isRuntime(String className) {
        String core = "dev.jpipeline.";
        boolean isCore = className.startsWith(core) && (className.indexOf('.', core.length()) < 0
            || className.startsWith("internal.", core.length()) || className.startsWith("copy.", core.length())
            || className.startsWith("trace.", core.length()));
        return isCore || RUNTIME.contains(className) || className.startsWith("java.") || className.startsWith("jdk.");
    }
}
