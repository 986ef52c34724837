package dev.jpipeline.simt;

import java.util.HashMap;

/**
 * Checked execution's data race detector: two accesses race when they come from different CUDA threads, touch the
 * same 4-byte word, at least one writes, and nothing orders them (DJIT+ vector clocks, FastTrack-style histories).
 *
 * <pre>
 * Clocks: each thread of the running block has a VectorClock. A synchronization (a phase of a __syncwarp or tile
 * sync, of a pipeline side's batch, of a cuda::barrier) has one clock per phase: a release joins the thread's clock
 * into it and ticks the thread's own entry; an acquire joins it into the thread's clock. A barrier's arrivals all
 * come before any of its waits end, so each wait sees every arrival of its phase. Phases further than WINDOW behind
 * the newest released are forgotten. The block's __syncthreads, which every thread of the block takes part in, is
 * counted instead (passedBlockBarrier): no clock of the block's size is joined at each of its phases.
 * Accesses: each accessor access is recorded in its word's WordHistory with the thread's epoch (block, rank, its
 * own clock entry) and its count of __syncthreads passed; an earlier access (u, c, k) happens-before the access of
 * thread t when they are the same thread, or of the same block with k below t's count or c <= t's clock[u].
 * Threads of different blocks are never ordered: checked execution runs blocks one after another, a GPU does not
 * (a launch has no grid sync: cooperative launches are not checked).
 * Two atomics never race; an atomic and a plain access do.
 * Copies: a memcpy_async writes its destination when it lands, as its issuer at the issue: its clock is the
 * issuer's clock then, and its epoch the issuer's. A wait that the issuer's later release orders (a commit, an
 * arrival) therefore orders the copy's writes too. That also orders threads that synchronized with the issuer after
 * the issue by other means, before the copy landed: reads of a copy that has not landed are poison findings anyway.
 * Its reads of its source are recorded alike as it lands (COPY_READ): a write of the source that nothing orders
 * with the issue races (another thread's, or another block's output copied in).
 * Words: shared memory's histories live in the running block's SharedShadows (a block's shared memory may reuse
 * the addresses of the one before, and starts with none); global memory's (any other segment: native ones by
 * address, heap ones by array and offset) here, for the whole launch. Copies into heap segments are not watched.
 * Sites: walking the stack at every access would cost more than the rest of checked execution, so an access's
 * site is not recorded; each access has a number (the thread's count of accesses in the launch). A race names its
 * second access's site at once (it is on the stack) and the first one's by that number: the run that found it
 * is run again under the same schedule, which makes the same accesses, and that run records the site of that
 * access (CheckedSession.sitesWanted). A copy's issue counts as its issuer's access, and names its site alike.
 * Confinement: one CUDA thread runs at a time (the turn of a checked launch), copies land under the scheduler's
 * lock, and the hand-offs order every call: plain fields.
 * </pre>
 */
final class RaceDetector {

    /**
     * The system property that switches the detector off when set to {@code false}: only for measuring its cost
     * (checked execution then finds no DATA_RACE).
     */
    static final String SWITCH = "jpipeline.simt.checked.races";

    /** How many phases of one synchronization keep their clocks: waits lag far less (a pipeline: its stages). */
    static final int WINDOW = 1024;

    private final Launch launch;
    private int block = -1;
    private VectorClock[] clocks;
    /** Each thread's count of accesses in the launch so far, by block rank. */
    private int[] accesses;
    /** How many of its block's __syncthreads each thread has passed, by block rank. */
    private int[] barriers;
    /** Global memory's words by address / 4 (shared memory's live in their SharedShadow). */
    private final HashMap<Long, WordHistory> globalWords = new HashMap<>();
    /** Heap segments' words: by array (identity), then by byte offset / 4. */
    private final java.util.IdentityHashMap<Object, HashMap<Long, WordHistory>> heapWords =
        new java.util.IdentityHashMap<>();
    private final HashMap<SyncPhase, VectorClock> syncs = new HashMap<>();

    private record SyncPhase(Object sync, long phase) {
        @Override
        public boolean equals(Object o) {
            return o instanceof SyncPhase p && p.sync == sync && p.phase == phase;
        }

        @Override
        public int hashCode() {
            return System.identityHashCode(sync) * 31 + Long.hashCode(phase);
        }
    }

    /**
     * Where an access was: word {@code word} of shared memory {@code shared} (its name), or of a global segment of
     * {@code bytes} bytes (shared null), the one an accessor was given or a copy's destination. Made for a
     * finding only.
     */
    record Place(String shared, long word, long bytes, boolean copy, boolean source) {
        Place(String shared, long word, long bytes, boolean copy) {
            this(shared, word, bytes, copy, false);
        }

        @Override
        public String toString() {
            return "word " + word + " (byte offset " + 4 * word + ") of " + (shared != null ? shared
                : "global memory (" + (copy ? "in the " + bytes + "-byte copy " + (source ? "source" : "destination")
                    + ")" : "element " + word + " of the " + bytes + "-byte segment accessed)"));
        }
    }

    /** Whether the detector is on (it is unless {@link #SWITCH} is {@code false}). */
    static boolean switchedOn() {
        return !"false".equals(System.getProperty(SWITCH));
    }

    RaceDetector(Launch launch) {
        this.launch = launch;
    }

    /** Block {@code linear} (of {@code size} threads) starts: fresh clocks; its shared memory has no history. */
    void blockStarts(int linear, int size) {
        block = linear;
        clocks = new VectorClock[size];
        accesses = new int[size];
        barriers = new int[size];
        for (int r = 0; r < size; r++) {
            clocks[r] = VectorClock.ofThread(size, r);
        }
        syncs.clear();
    }

    /** {@code kt} released phase {@code phase} of {@code sync}: its actions so far happen-before its acquirers'. */
    void release(KernelThread kt, Object sync, long phase) {
        VectorClock c = clocks[kt.rank];
        syncs.computeIfAbsent(new SyncPhase(sync, phase), k -> new VectorClock(c.size())).join(c);
        syncs.remove(new SyncPhase(sync, phase - WINDOW));
        c.tick(kt.rank);
    }

    /**
     * {@code kt} passed a __syncthreads of its block. Every thread of the block takes part in every phase (a
     * thread that left before one is a PARTIAL_BARRIER), so a thread that has passed k of them is ordered after
     * every access made before the k-th by any thread of the block, and after nothing else: counting them orders
     * those accesses without joining clocks of the block's size at every phase. A thread that learns of an access
     * through other syncs has passed every __syncthreads that the access's thread had passed (it arrived there too),
     * so the count and the clocks together give happens-before.
     */
    void passedBlockBarrier(KernelThread kt) {
        barriers[kt.rank]++;
    }

    /** How many __syncthreads {@code kt} has passed (a copy's issue carries it). */
    int barriers(KernelThread kt) {
        return barriers[kt.rank];
    }

    /** {@code kt} acquired phase {@code phase} of {@code sync}: every release of it happens-before what follows. */
    void acquire(KernelThread kt, Object sync, long phase) {
        VectorClock released = syncs.get(new SyncPhase(sync, phase));
        if (released != null) {
            clocks[kt.rank].join(released);
        }
    }

    /** A copy issued now by {@code kt}: its clock, which its writes carry when it lands. */
    VectorClock copyClock(KernelThread kt) {
        return clocks[kt.rank].copy();
    }

    /** {@code kt}'s epoch now. */
    int epoch(KernelThread kt) {
        return clocks[kt.rank].get(kt.rank);
    }

    /** The running block's linear index. */
    int block() {
        return block;
    }

    /** The number the next access of {@code kt} will have (its count of accesses so far). */
    int nextAccess(KernelThread kt) {
        return accesses[kt.rank];
    }

    /** Counts an access of {@code kt} that is not recorded here (a copy's issue): its number. */
    int countAccess(KernelThread kt) {
        return accesses[kt.rank]++;
    }

    /** A race: access {@code now} conflicts with the earlier access {@code before}. */
    record Race(WordHistory.Access now, WordHistory.Access before) {
    }

    /** The history of the global memory word at native {@code address}. */
    WordHistory globalWord(long address) {
        return globalWords.computeIfAbsent(address >>> 2, k -> new WordHistory());
    }

    /** The history of the word at byte offset {@code offset} of Java array {@code array} (a heap segment's). */
    WordHistory heapWord(Object array, long offset) {
        return heapWords.computeIfAbsent(array, k -> new HashMap<>())
            .computeIfAbsent(offset >>> 2, k -> new WordHistory());
    }

    /**
     * An accessor access by {@code kt} of the word whose history is {@code word}, from {@code site} if recorded
     * (else null): the race it makes, or null. The access is recorded either way.
     */
    Race access(KernelThread kt, WordHistory word, WordHistory.Kind kind, String site) {
        WordHistory.Access a = new WordHistory.Access(block, kt.rank, epoch(kt), barriers[kt.rank],
            accesses[kt.rank]++, kind, site);
        return record(a, clocks[kt.rank], word);
    }

    /**
     * A copy issued by {@code issuer} in epoch {@code epoch} after {@code barriers} __syncthreads, with clock
     * {@code clock}, its access number {@code seq},
     * from {@code site} (null when not recorded) lands on the word whose history is {@code word}: the race its
     * write makes, or null.
     */
    Race copyLands(int issuer, int epoch, int barriers, int seq, VectorClock clock, String site, WordHistory word) {
        return record(new WordHistory.Access(block, issuer, epoch, barriers, seq, WordHistory.Kind.COPY, site), clock,
            word);
    }

    /**
     * The same copy reads the word whose history is {@code word} of its source (as it lands, with the clock):
     * the race its read makes with an unordered write, or null.
     */
    Race copyReads(int issuer, int epoch, int barriers, int seq, VectorClock clock, String site, WordHistory word) {
        return record(new WordHistory.Access(block, issuer, epoch, barriers, seq, WordHistory.Kind.COPY_READ, site),
            clock, word);
    }

    private Race record(WordHistory.Access a, VectorClock clock, WordHistory h) {
        WordHistory.Access racing = null;
        if (h.write != null && !h.write.happensBefore(a, clock)) {
            racing = h.write;
        }
        if (racing == null && a.kind() != WordHistory.Kind.ATOMIC) {
            racing = firstUnordered(h.atomics, a, clock);
        }
        if (racing == null && a.kind().writes()) {
            racing = firstUnordered(h.reads, a, clock);
        }
        switch (a.kind()) {
            case READ, COPY_READ -> WordHistory.keep(h.reads, a, clock);
            case ATOMIC -> WordHistory.keep(h.atomics, a, clock);
            default -> {
                h.write = a;
                h.reads.clear();
                h.atomics.clear();
            }
        }
        return racing == null ? null : new Race(a, racing);
    }

    private static WordHistory.Access firstUnordered(java.util.List<WordHistory.Access> list, WordHistory.Access a,
                                                     VectorClock clock) {
        for (WordHistory.Access old : list) {
            if (!old.happensBefore(a, clock)) {
                return old;
            }
        }
        return null;
    }

    /** The finding's message: both threads, what each did where ({@code nowSite}, {@code beforeSite}), why. */
    String describe(Race race, Place place, String nowSite, String beforeSite) {
        WordHistory.Access a = race.now();
        WordHistory.Access old = race.before();
        String why = a.block() != old.block()
            ? "threads of different blocks are ordered by nothing (a GPU runs blocks at once; checked execution runs "
                + "them one after another)"
            : "nothing orders the two accesses (no __syncthreads, __syncwarp or tile sync of both, pipeline wait or "
                + "release, barrier phase or landed copy between them)";
        return thread(a) + " " + a.kind().present + " " + place + " at " + nowSite + ", and " + thread(old)
            + " " + old.kind().past + " it at " + beforeSite + ": " + why;
    }

    private String thread(WordHistory.Access a) {
        String who = "thread " + launch.threadIndex(a.rank()) + " of block " + launch.gridDim.index(a.block());
        return a.kind().byCopy() ? "a copy issued by " + who : who;
    }
}
