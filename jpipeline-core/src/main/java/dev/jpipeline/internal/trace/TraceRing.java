package dev.jpipeline.internal.trace;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A bounded ring of trace events that overwrites its oldest events when full and counts what it overwrote, read
 * by one reader at a time while its writers go on. A ring is written either by one thread
 * ({@link #writeOwned}: the owner of a pipeline handle) or by any number of threads ({@link #writeShared}: copy
 * workers), never both.
 */
final class TraceRing {

    /*
     * Overview
     *
     * Events are numbered 0, 1, 2, ... in the order their writers claim them. Event i lives in slot
     * i % capacity, so event i + capacity overwrites it: writers never wait for the reader, and the ring keeps the
     * newest `capacity` events. The reader hands out each event at most once and counts each event it can no
     * longer hand out as dropped, so that every claimed number is accounted for exactly once.
     *
     * Storage. Slots are grouped in chunks of CHUNK_EVENTS, allocated on first use (a lane that records a few
     * events costs a few KiB, not the whole capacity) and never replaced. A slot is WORDS longs:
     *
     *     [0] stamp     0: never written; 2i+1: event i being written; 2i+2: event i complete
     *     [1] operation ordinal | stage << 8
     *     [2] start (ns)   [3] duration (ns)   [4] batch
     *
     * Ordering stamps as numbers orders them by event: 2i+1 < 2i+2 < 2(i+capacity)+1. A slot's stamp only grows.
     *
     * Writing event i (a seqlock per slot):
     *   1. claim i. One writer: its own count. Several: getAndAdd on `claimed`.
     *   2. make the stamp odd, 2i+1, ordered before the field stores. One writer: an opaque store and a release
     *      fence. Several: a CAS from the previous stamp (a full fence). If the slot already holds a newer event
     *      (a writer stalled for a whole lap), event i is given up: it would have been overwritten anyway, and the
     *      reader counts it as dropped. If an older writer is still inside its four stores, wait for it (spin,
     *      then yield): taking the slot from it would let its late stores tear ours.
     *   3. store the four fields (plain).
     *   4. store the stamp 2i+2 with release semantics: the fields happen-before a read that sees it.
     *   5. one writer only: publish `claimed` = i+1 (release).
     *
     * Reading event i (StampedLock's optimistic read, per slot):
     *   s1 = stamp (acquire). If s1 == 2i+2: copy the fields, acquire fence, s2 = stamp again; the copy is
     *   event i iff s2 == s1. A writer that stored any field we copied had made the stamp odd before its field
     *   stores (step 2), and the fence keeps our field loads before the second stamp load, so we see its stamp
     *   (or a later one) and discard the copy. Values torn by a racing store (JLS 17.7 allows it for plain longs)
     *   are discarded the same way.
     *   If s1 is newer than event i, event i was overwritten (or given up): dropped. If s1 is older, or 2i+1,
     *   event i's writer has claimed it but not finished: a drain stops there, to resume from it next time (so a
     *   copy worker descheduled inside its write holds back the later events of its ring until it finishes or
     *   the ring laps it; a snapshot just leaves the event out).
     *
     * Why the owner needs no atomic instruction: it is the only writer, so claiming is a plain increment; the
     * release fence after the odd stamp is a store-store barrier (free on x86, dmb on Arm) and is all a seqlock
     * writer needs; publishing `claimed` after the even stamp means a reader never finds an owned event below
     * `claimed` unfinished, only overwritten.
     *
     * Accounting. The reader keeps `drained` (the next event a drain hands out) and `lost` (events it had to
     * skip). Everything below claimed - capacity has had its slot claimed by a newer event, so a drain skips
     * straight to it and adds the gap to lost; dropped() = lost + that gap not yet skipped. With no drain at
     * all, dropped() = claimed - capacity once the ring has wrapped: exactly the events no snapshot can show.
     *
     * Invariants: drained <= claimed; every event number below `drained` has been handed out once or counted in
     * `lost` once; a slot's stamp never decreases.
     */

    /**
     * Events per chunk: a power of two, so that a slot's chunk is a shift and its place a mask. 256 events are
     * 10 KiB: what a lane that records a few events costs (the unbounded tracer's first buffer was as large).
     */
    static final int CHUNK_EVENTS = 1 << 8;
    private static final int CHUNK_SHIFT = 8;
    private static final int CHUNK_MASK = CHUNK_EVENTS - 1;
    /** Longs per slot: stamp, operation and stage, start, duration, batch. */
    static final int WORDS = 5;
    /** A writer waiting for an older writer of its slot spins this often before it yields. */
    private static final int SPINS_BEFORE_YIELD = 64;

    /** Receives the events a read hands out. */
    @FunctionalInterface
    interface Visitor {
        /** One event. */
        void event(int operation, int stage, long start, long duration, long batch);
    }

    private final int capacity;
    /** The chunks, installed once each by CAS (a racing writer adopts the winner's); read with acquire. */
    private final long[][] chunks;
    /**
     * Events claimed so far. Owned ring: written by the owner with release after the event is complete (plain
     * reads by the owner itself). Shared ring: claimed by getAndAdd before the event is written. The reader
     * loads it with acquire: for an owned ring that makes every event below it visible.
     */
    private long claimed;

    // Owned ring, owner thread only (plain fields): where the next event goes.
    private int ownerSlot;
    private long[] ownerChunk;

    // Reader state, guarded by the reader's lock (the tracer serialises its reads).
    /** The next event a drain hands out. */
    private long drained;
    /** Events a drain skipped because they had been overwritten. */
    private long lost;

    TraceRing(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("trace ring capacity must be positive, got " + capacity);
        }
        this.capacity = capacity;
        this.chunks = new long[(capacity + CHUNK_EVENTS - 1) >>> CHUNK_SHIFT][];
    }

    // ---------------------------------------------------------------------------------------------------------
    // Writers

    /** Records an event; only ever called by the ring's one writer thread. No locks, no allocation but chunks. */
    void writeOwned(int operation, int stage, long start, long duration, long batch) {
        long i = claimed;                       // plain: this thread is the only one that writes it
        int slot = ownerSlot;
        int offset = slot & CHUNK_MASK;
        long[] chunk = offset == 0 ? chunk(slot >>> CHUNK_SHIFT) : ownerChunk;
        int base = offset * WORDS;
        LONGS.setOpaque(chunk, base, 2 * i + 1);
        VarHandle.releaseFence();               // the odd stamp before the field stores (step 2)
        store(chunk, base, operation, stage, start, duration, batch);
        LONGS.setRelease(chunk, base, 2 * i + 2);
        CLAIMED.setRelease(this, i + 1);
        ownerChunk = chunk;
        ownerSlot = slot + 1 == capacity ? 0 : slot + 1;
    }

    /**
     * Records an event from any thread. Lock-free except in one case: a writer whose slot is still being written
     * by a writer a whole lap older waits for that writer's four stores.
     */
    void writeShared(int operation, int stage, long start, long duration, long batch) {
        long i = (long) CLAIMED.getAndAdd(this, 1L);
        int slot = (int) (i % capacity);
        long[] chunk = chunk(slot >>> CHUNK_SHIFT);
        int base = (slot & CHUNK_MASK) * WORDS;
        long busy = 2 * i + 1;
        for (int tries = 1; ; tries++) {
            long stamp = (long) LONGS.getVolatile(chunk, base);
            if (stamp > busy) {
                return;                         // a newer event holds the slot: ours counts as dropped
            }
            if ((stamp & 1) != 0) {             // an older writer is inside its stores
                if (tries % SPINS_BEFORE_YIELD == 0) {
                    Thread.yield();
                } else {
                    Thread.onSpinWait();
                }
            } else if (LONGS.compareAndSet(chunk, base, stamp, busy)) {
                break;
            }
        }
        store(chunk, base, operation, stage, start, duration, batch);
        LONGS.setRelease(chunk, base, busy + 1);
    }

    private static void store(long[] chunk, int base, int operation, int stage, long start, long duration,
                              long batch) {
        chunk[base + 1] = operation | (long) stage << 8;
        chunk[base + 2] = start;
        chunk[base + 3] = duration;
        chunk[base + 4] = batch;
    }

    /** Chunk {@code index}, installed if this is its first use. */
    private long[] chunk(int index) {
        long[] chunk = (long[]) CHUNKS.getAcquire(chunks, index);
        if (chunk == null) {
            int events = Math.min(CHUNK_EVENTS, capacity - (index << CHUNK_SHIFT));
            long[] fresh = new long[events * WORDS];
            long[] witness = (long[]) CHUNKS.compareAndExchange(chunks, index, null, fresh);
            chunk = witness == null ? fresh : witness;
        }
        return chunk;
    }

    // ---------------------------------------------------------------------------------------------------------
    // The reader (one at a time; concurrent with the writers)

    /**
     * Hands out the events recorded since the previous drain, oldest first, and moves past them; events
     * overwritten before this drain reached them are counted as dropped.
     *
     * @return the number of events handed out
     */
    long drain(Visitor visitor) {
        long end = (long) CLAIMED.getAcquire(this);
        long i = drained;
        long oldest = end - capacity;
        if (i < oldest) {
            lost += oldest - i;
            i = oldest;
        }
        long handed = 0;
        for (; i < end; i++) {
            int read = read(i, visitor);
            if (read > 0) {
                handed++;
            } else if (read < 0) {
                lost++;
            } else {
                break;                          // event i is still being written: resume from it next time
            }
        }
        drained = i;
        return handed;
    }

    /** Hands out every event the ring still holds, oldest first, without moving the drain. */
    void retained(Visitor visitor) {
        long end = (long) CLAIMED.getAcquire(this);
        for (long i = Math.max(0, end - capacity); i < end; i++) {
            read(i, visitor);
        }
    }

    /** Events overwritten before a drain handed them out (including those the next drain will skip). */
    long dropped() {
        long end = (long) CLAIMED.getAcquire(this);
        return lost + Math.max(0, end - capacity - drained);
    }

    /** Reads event {@code i}: 1 when handed to the visitor, -1 when overwritten, 0 when not yet complete. */
    private int read(long i, Visitor visitor) {
        int slot = (int) (i % capacity);
        long[] chunk = (long[]) CHUNKS.getAcquire(chunks, slot >>> CHUNK_SHIFT);
        if (chunk == null) {
            return 0;                           // claimed, but its writer has not installed the chunk yet
        }
        int base = (slot & CHUNK_MASK) * WORDS;
        long complete = 2 * i + 2;
        long stamp = (long) LONGS.getAcquire(chunk, base);
        if (stamp != complete) {
            return stamp > complete ? -1 : 0;
        }
        long opStage = chunk[base + 1];
        long start = chunk[base + 2];
        long duration = chunk[base + 3];
        long batch = chunk[base + 4];
        VarHandle.acquireFence();               // the field loads before the re-check
        if ((long) LONGS.getOpaque(chunk, base) != complete) {
            return -1;                          // overwritten while we copied it
        }
        visitor.event((int) (opStage & 0xFF), (int) (opStage >> 8), start, duration, batch);
        return 1;
    }

    // ---------------------------------------------------------------------------------------------------------
    // VarHandle mechanics

    private static final VarHandle CLAIMED;
    private static final VarHandle CHUNKS = MethodHandles.arrayElementVarHandle(long[][].class);
    private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);

    static {
        try {
            CLAIMED = MethodHandles.lookup().findVarHandle(TraceRing.class, "claimed", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
