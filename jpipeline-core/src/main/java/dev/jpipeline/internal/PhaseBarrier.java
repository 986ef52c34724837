package dev.jpipeline.internal;

import dev.jpipeline.WaitStrategy;
import dev.jpipeline.internal.copy.CopyLanding;
import dev.jpipeline.internal.copy.CopyWorkers;
import dev.jpipeline.internal.process.ProcessWaiting;
import dev.jpipeline.internal.wait.Deadlines;
import dev.jpipeline.internal.wait.StallWatch;
import dev.jpipeline.internal.wait.WaitStatus;
import dev.jpipeline.internal.wait.Waitable;
import dev.jpipeline.internal.wait.Waiter;
import dev.jpipeline.internal.wait.Waiting;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A split-phase barrier: the stage barrier of a pipeline ({@code produced} / {@code consumed}) and the engine
 * behind {@code dev.jpipeline.Barrier}.
 *
 * <pre>
 * Algorithm
 *
 * The whole barrier is one 64-bit word, updated by CAS, so every transition is atomic (the one exception, a
 * release store by a side's only thread that nothing else can race, is arriveAlone, below). Where the word lives,
 * how waiters sleep and wake, and where failures are kept is the BarrierWord seam's: in this process
 * (HeapBarrierWord) it is an element of a long[], an array of its own, padded on both sides, or (stage barriers) a
 * pipeline's word array, where the produced words of all stages sit side by side and so do the consumed words, so
 * that a consumer that reads one produced word has the next stages' words in the same cache line (JCTools' queues
 * get the same batching from adjacent slots; see StageRing); in a region several processes map, a SharedWord.
 *
 *     63          41  40  39            20 19             0
 *    +--------------+---+----------------+----------------+
 *    | phase (23)   | W | expected (20)  | arrived (20)   |
 *    +--------------+---+----------------+----------------+
 *
 *  - phase: the number of completed phases, modulo 2^23. A waiter for round k waits while phase == k.
 *    The pipeline never lets a barrier run more than one phase ahead of any waiter (libcu++ relies on the same
 *    invariant with a single parity bit), so 23 bits leave ample room to detect protocol violations.
 *  - W (withdrawn): the current phase had an arrival that a party's drop withdrew (see dropFromRound). When the
 *    last party then drops, the phase completes (it had real arrivals) instead of being abandoned. Cleared
 *    whenever a phase completes; kept by every other transition.
 *  - expected: arrivals needed per phase; at most 2^20 - 1, the limit CUDA reports for a block-scope barrier.
 *    Dropping a party lowers it for the current or the next phase (see dropFromRound).
 *  - arrived: arrivals in the current phase. The arrival that makes arrived == expected completes the phase:
 *    the same CAS advances phase and resets arrived to 0, so no other thread can observe a half-reset word.
 *
 * With a completion action the last arriver first CASes arrived up to expected (the "completing" state, in
 * which any further arrival is an over-arrival), runs the action, then publishes the next phase. The thread
 * running the action is recorded, so that an action waiting for its own phase (or tying a copy to it) is refused
 * instead of hanging.
 *
 * Copies (cp.async.mbarrier.arrive): tieCopy() adds one pending arrival to the current phase (expected + 1 for
 * this and every later phase); copyLanded() records the copy's failure, if any, for the current phase and makes
 * the pending arrival as an arrive-and-drop, which leaves later phases as they were. The phase cannot complete
 * before the copy lands, so the current phase at landing is the phase the copy was tied to. Failures are kept
 * per phase parity: a waiter asks failureOf(round) after its wait completed, and the phase after round cannot
 * complete before it (pipelines) or before its own arrival (barriers), so the record it reads is its own.
 *
 * Waiting is Waiting.await, the one wait routine (strategy, deadline, interrupts, park listener, stall watch), for
 * either kind of word; where waiters sleep is the word's (BarrierWord.enqueue, park, dequeue): in this process on a
 * Treiber stack (Waiter) that the thread completing a phase (or dropping the last party) detaches and unparks. Every transition a waiter may wait
 * for is a CAS followed by the word's signal, so no wake-up is lost (the word states its Dekker argument). The
 * exception is arriveAlone, a release store by a side's only thread when nothing else can write the word: its
 * signal may miss a push, so waiters of such barriers park in bounded slices (see arriveAlone).
 *
 * Memory consistency: an arrival is a volatile CAS (release), a wait ends with a volatile read (acquire) of
 * the completed state, so actions before any arrival of a phase happen-before actions after a wait that
 * observes the phase completed.
 *
 * Shared memory (a system-scope stage barrier in a region that several processes map, see SharedWord): the same
 * transitions run on its word with the same CASes, and its waits in the same routine. What cannot cross a process
 * is the word's: waiters count themselves and sleep in futex on a wake word beside it (ProcessWaiting), and
 * failures are recorded there as text. Such a barrier has no completion
 * action; its solo arrivals are release stores too, whose signal may miss a sleeper, so its futex sleeps are bounded.
 * </pre>
 */
public final class PhaseBarrier implements Waitable, CopyLanding {

    /** Largest number of parties (2^20 - 1): the same bound CUDA's block-scope {@code barrier::max()} reports. */
    public static final int MAX_PARTIES = (1 << 20) - 1;
    /** Phases are counted modulo 2^23. */
    public static final int PHASE_MASK = (1 << 23) - 1;

    private static final int EXPECTED_SHIFT = 20;
    private static final int PHASE_SHIFT = 41;
    /** The withdrawn flag (W): the current phase had an arrival withdrawn by a drop. */
    private static final long WITHDRAWN = 1L << 40;
    private static final long COUNT_MASK = MAX_PARTIES;

    /** Longs of padding on each side of a barrier word that has an array of its own: 128 bytes. */
    static final int WORD_PAD = 16;

    /** The word, its waiters and its failures: in this process, or in a shared region. */
    private final BarrierWord word;
    private final Runnable completion;
    /** The thread running the completion action, else null: written by it, read by its own waits (same thread). */
    private volatile Thread completer;
    /**
     * Copies tied and not landed yet (they are part of the expected count): lets a user's barrier tell its
     * parties' arrivals from the copies'. Raised after a tie's CAS and lowered before a landing's arrival, so a
     * racing check can only overestimate the parties' room (miss an over-arrival), never refuse a correct one.
     */
    private volatile int pendingCopies;
    /**
     * The copy engine that last had a copy tied to this barrier (written before its submission is queued, volatile):
     * where a waiter of a phase with copies pending looks for them to perform itself ({@link #helpProgress}).
     */
    private volatile CopyWorkers copies;

    /**
     * @param expected   arrivals per phase, 0 to {@link #MAX_PARTIES} (0 makes every wait report abandonment)
     * @param completion run by the last arriver before the phase completes, or {@code null}
     */
    public PhaseBarrier(int expected, Runnable completion) {
        this(new long[2 * WORD_PAD + 1], WORD_PAD, expected, completion, false);
    }

    /**
     * A barrier whose word is {@code words[index]}: a pipeline keeps the words of its stage barriers side by side
     * (see {@link StageRing}), the caller pads them from other data.
     *
     * @param soloArrivals whether its only party may arrive with {@link #arriveAlone} (a stage barrier of a side
     *                     with one thread)
     */
    PhaseBarrier(long[] words, int index, int expected, Runnable completion, boolean soloArrivals) {
        if (expected < 0 || expected > MAX_PARTIES) {
            throw new IllegalArgumentException(
                "barrier expected count must be in 0.." + MAX_PARTIES + ", got " + expected);
        }
        this.word = new HeapBarrierWord(words, index, initialState(expected), soloArrivals);
        this.completion = completion;
    }

    /**
     * A stage barrier whose word is in shared memory, formatted already ({@link #initialState}): attaching to it
     * writes nothing.
     */
    PhaseBarrier(SharedWord shared) {
        this.word = shared;
        this.completion = null;
    }

    /** Bytes a barrier in shared memory takes ({@link #formatShared}): its word and its wake word. */
    public static final int SHARED_BYTES = SharedWord.CELL_BYTES;
    /** Bytes of a shared barrier's failure records, when it has them ({@link #formatShared}). */
    public static final int SHARED_RECORD_BYTES = SharedWord.RECORDS_BYTES;

    /**
     * A barrier in shared memory, as a system-scope pipeline's stages have them: its word is at {@code offset} of
     * {@code segment} (native memory, a mapped file for one; 8-byte aligned), formatted here to expect
     * {@code expected} arrivals at phase 0. For tests of the algorithm on shared memory; a pipeline formats its
     * own. Its waiters sleep in futex on the wake word beside it (SharedWord), in the one wait routine.
     *
     * @param recordsAt where its {@link #SHARED_RECORD_BYTES} of failure records go, or -1 for none
     */
    public static PhaseBarrier formatShared(MemorySegment segment, long offset, int expected, long recordsAt) {
        if (expected < 0 || expected > MAX_PARTIES) {
            throw new IllegalArgumentException(
                "barrier expected count must be in 0.." + MAX_PARTIES + ", got " + expected);
        }
        SharedWord.format(segment, offset, recordsAt, initialState(expected));
        return new PhaseBarrier(new SharedWord(segment, offset, recordsAt));
    }

    /** The word of a fresh barrier: phase 0, {@code expected} arrivals expected, none arrived. */
    static long initialState(int expected) {
        return (long) expected << EXPECTED_SHIFT;
    }

    /** A stage barrier: {@code expected} arrivals per phase and no completion action. */
    public PhaseBarrier(int expected) {
        this(expected, null);
    }

    // ---------------------------------------------------------------------------------------------------------
    // State decoding

    static int phaseOf(long s) {
        return (int) (s >>> PHASE_SHIFT);
    }

    static int expectedOf(long s) {
        return (int) ((s >>> EXPECTED_SHIFT) & COUNT_MASK);
    }

    static int arrivedOf(long s) {
        return (int) (s & COUNT_MASK);
    }

    private static long pack(int phase, int expected, int arrived) {
        return ((long) (phase & PHASE_MASK) << PHASE_SHIFT) | ((long) expected << EXPECTED_SHIFT) | arrived;
    }

    /** The current phase (completed phases modulo 2^23). */
    public int phase() {
        return phaseOf(lvState());
    }

    /** The array that holds the word of a barrier of this process (layout tests). */
    long[] words() {
        return ((HeapBarrierWord) word).words();
    }

    /** Where the word is in {@link #words()} (layout tests). */
    int wordIndex() {
        return ((HeapBarrierWord) word).index();
    }

    /** Its word (tests' EngineProbe). */
    BarrierWord word() {
        return word;
    }

    /** Arrivals each phase currently needs. */
    public int expected() {
        return expectedOf(lvState());
    }

    /** Arrivals already counted in the current phase. */
    public int arrived() {
        return arrivedOf(lvState());
    }

    /** Whether phase {@code round} (counted from 0, taken modulo 2^23) has completed. */
    public boolean isComplete(int round) {
        return phaseOf(lvState()) != (round & PHASE_MASK);
    }

    // ---------------------------------------------------------------------------------------------------------
    // Arrivals

    /**
     * Counts {@code count} arrivals in the current phase, completing it when they are the last ones.
     *
     * @return the phase arrived at (the token a later wait uses)
     * @throws IllegalStateException when the phase would get more arrivals than it expects
     */
    public int arrive(int count) {
        return arrive(count, false);
    }

    /**
     * The arrival of the barrier's only party at phase {@code round}, when the caller knows that no other thread
     * writes the word meanwhile (nothing tied, nothing dropped: see StageHandle): a release store of the next
     * phase's word. Unlike a CAS, a store does not hold the thread until it owns the word's cache line (which a
     * spinning peer keeps pulling away), so a solo producer or consumer runs on while the line travels.
     *
     * <p>The price: a store followed by a read of the stack is not ordered (StoreLoad), so a waiter that pushes
     * its node and polls while the store is still on its way may miss the store while the store's read misses
     * the node. Waiters of such a barrier ({@link #signalsMayMissAPush()}) park for bounded times (100 us first,
     * then doubling), and the store reaches them by the end of the first: a missed signal costs that delay.
     */
    public void arriveAlone(int round) {
        assert completion == null : "a solo arrival at a barrier with a completion action";
        word.storeAlone(pack(round, 1, 0), pack(round + 1, 1, 0));
    }

    @Override
    public boolean signalsMayMissAPush() {
        return word.signalsMayMissAPush();
    }

    /**
     * {@link #arrive(int)} by a party of a user's barrier: besides the expected count, the arrivals must leave
     * room for the copies tied to the phase (their arrivals are not the parties' to make).
     *
     * @throws IllegalStateException when the parties' arrivals would exceed the parties
     */
    public int arriveAsParty(int count) {
        return arrive(count, true);
    }

    private int arrive(int count, boolean party) {
        for (;;) {
            long s = lvState();
            int expected = expectedOf(s);
            long arrivedAfter = (long) arrivedOf(s) + count;     // long: a huge count must not wrap around
            if (count < 1 || arrivedAfter > (party ? expected - pendingCopies : expected)) {
                throw overArrival(s, count);
            }
            int arrived = (int) arrivedAfter;
            int phase = phaseOf(s);
            if (arrived < expected) {
                if (casState(s, s + count)) {
                    return phase;
                }
            } else if (completion == null) {
                if (casState(s, pack(phase + 1, expected, 0))) {
                    signalAll();
                    return phase;
                }
            } else if (casState(s, s + count)) {
                runCompletionAndAdvance(phase, expected, false);
                return phase;
            }
        }
    }

    /**
     * Removes one party, starting with phase {@code round}: the party's next arrival would have been for that
     * phase, and it will not come. If the barrier is still in the phase before it (the party already arrived
     * there), that arrival is withdrawn together with the party, so the current phase still needs exactly the
     * arrivals it needed and every later phase needs one fewer. If the barrier is at {@code round}, the phase
     * completes when the arrivals it already has are now enough; when no party is left it completes if an
     * earlier drop withdrew one of its arrivals (it had real arrivals, and nobody else will come), else it never
     * completes and its waiters see {@link WaitStatus#ABANDONED}. (This is a pipeline's {@code quit}, not an
     * arrival.)
     *
     * @throws IllegalStateException when the barrier is neither at {@code round} nor one phase before it
     */
    public void dropFromRound(int round) {
        for (;;) {
            long s = lvState();
            int phase = phaseOf(s);
            int expected = expectedOf(s);
            int arrived = arrivedOf(s);
            int lag = (round - phase) & PHASE_MASK;
            if (expected == 0 || (lag != 0 && lag != 1) || (lag == 1 && arrived == 0)) {
                throw new IllegalStateException("cannot drop a party from phase " + (round & PHASE_MASK)
                    + " of a barrier at phase " + phase + " (expected " + expected + ", arrived " + arrived + ")");
            }
            boolean done = lag == 1
                ? casState(s, pack(phase, expected - 1, arrived - 1) | WITHDRAWN)
                : leave(s, (arrived > 0 && arrived == expected - 1) || (expected == 1 && (s & WITHDRAWN) != 0), false);
            if (done) {
                if (expected == 1) {
                    signalAll();   // nobody is left to complete this phase: waiters must find out
                }
                return;
            }
        }
    }

    /**
     * Completes phase {@code round} whatever arrivals it still lacks, leaving {@code parties} expected in later
     * phases: for a stage barrier whose every other writer is dead (a crashed process's barrier, whose tied copies
     * will never land). Does nothing when the barrier is past {@code round} already.
     *
     * @return whether this call completed the phase
     */
    boolean completeWithout(int round, int parties) {
        for (;;) {
            long s = lvState();
            if (phaseOf(s) != (round & PHASE_MASK)) {
                return false;
            }
            if (casState(s, pack(round + 1, parties, 0))) {
                signalAll();
                return true;
            }
        }
    }

    /**
     * Ties one asynchronous copy to the current phase: one more arrival is expected now and in every later phase,
     * and {@link #copyLanded} makes it and withdraws the extra party, so the current phase waits for the copy and
     * later phases stay as they were (how {@code cp.async.mbarrier.arrive} ties copies to a barrier).
     *
     * @throws IllegalStateException when the barrier already has {@link #MAX_PARTIES} parties, or when the
     *                               caller is running this barrier's completion action (the copy could never be
     *                               tied to the phase that is completing)
     */
    public void tieCopy() {
        for (int waited = 0; ; ) {
            long s = lvState();
            int expected = expectedOf(s);
            int arrived = arrivedOf(s);
            if (expected >= MAX_PARTIES) {
                throw new IllegalStateException("barrier cannot expect more than " + MAX_PARTIES + " arrivals");
            }
            if (expected > 0 && arrived == expected) {
                if (completion == null) {
                    throw corrupted(s, "tying a copy", word.where());  // full without an action to complete it
                }
                if (completer == Thread.currentThread()) {
                    throw new IllegalStateException("a barrier's completion action cannot tie a copy to the barrier "
                        + "it is completing (phase " + phaseOf(s) + "): that phase has all its arrivals");
                }
                // A completion action is running: the phase is about to advance, unless the action takes long
                // (it may block): spin briefly, then yield, then back off in short parks instead of burning a core.
                if (waited < 1 << 8) {
                    Thread.onSpinWait();
                } else if (waited < 1 << 10) {
                    Thread.yield();
                } else {
                    java.util.concurrent.locks.LockSupport.parkNanos(50_000);
                }
                waited++;
                continue;
            }
            if (casState(s, s + (1L << EXPECTED_SHIFT))) {
                PENDING_COPIES.getAndAdd(this, 1);      // after the CAS: a racing party check errs lenient
                return;
            }
        }
    }

    /** {@code engine} is about to queue a copy tied to this barrier: a waiter may look for it there. */
    public void copiesOn(CopyWorkers engine) {
        if (copies != engine) {
            copies = engine;
        }
    }

    /**
     * A waiter of this barrier performs the copies tied to it that no worker has started (see
     * {@link CopyWorkers#helpWith}): on a busy machine the thread that needs the data copies it instead of waiting
     * for a worker to be scheduled.
     */
    @Override
    public boolean helpProgress() {
        CopyWorkers engine = copies;
        return engine != null && pendingCopies > 0 && engine.helpWith(this);
    }

    /**
     * Refuses {@code op} when the caller is running this barrier's completion action, whatever the copy's size
     * (an inline copy would not hang, a handed-off one would: the outcome must not depend on the size).
     *
     * @throws IllegalStateException when the caller is running this barrier's completion action
     */
    public void checkNotCompleting(String op) {
        if (completer == Thread.currentThread()) {
            throw new IllegalStateException(op + " from a barrier's completion action into the barrier it is "
                + "completing (phase " + phase() + "): the phase has all its arrivals and cannot wait for a copy");
        }
    }

    /**
     * A copy tied by {@link #tieCopy()} has landed, or failed: records the failure (if any) for the current phase,
     * then makes the copy's pending arrival. If that arrival completes the phase and the completion action throws,
     * the exception is recorded as the phase's failure, so that the phase's waiters see it (the landing thread is
     * a copy worker: a completion action that runs there must not block).
     */
    @Override
    public void copyLanded(Throwable failure) {
        int phase = phase();                // stable: the phase cannot complete before this arrival
        if (failure != null) {
            recordFailure(phase, failure);
        }
        PENDING_COPIES.getAndAdd(this, -1);     // before the arrival: a racing party check errs lenient
        try {
            arriveAndDrop(false, true);
        } catch (RuntimeException | Error e) {
            // Nobody on a copy worker would see it: the phase's waiters get it. A completion action's exception was
            // recorded before the phase completed; anything else is recorded now.
            if (failureOf(phase) != e) {
                recordFailure(phase, e);
            }
        }
    }

    /**
     * Records {@code failure} for phase {@code round} without an arrival (a stage whose producer died holding it):
     * the next waiter of that phase sees it through {@link #failureOf}.
     */
    public void recordFailure(int round, Throwable failure) {
        word.recordFailure(round, failure);
    }

    /**
     * Forgets a failure recorded for an earlier phase of {@code round}'s parity, if any (a failure recorded for
     * {@code round} itself stays). Failures are kept per phase, counted modulo 2^23, so a record nobody replaces
     * would be read again as the failure of the phase 2^23 later: the pipeline calls this between those two (see
     * StageHandle.acquire), when no reader can still want the old record.
     */
    void clearStaleFailure(int round) {
        word.clearStaleFailure(round);
    }

    /** The failure recorded for phase {@code round} (a copy tied to it failed), or null. */
    public Throwable failureOf(int round) {
        return word.failureOf(round);
    }

    /**
     * Arrive-and-drop ({@code cuda::barrier::arrive_and_drop}): the caller arrives at the current phase and
     * is not expected in any later phase.
     *
     * @throws IllegalStateException when the barrier has no party left
     */
    public void arriveAndDrop() {
        arriveAndDrop(false, false);
    }

    /** {@link #arriveAndDrop()} by a party of a user's barrier: a party must be left besides the tied copies. */
    public void arriveAndDropAsParty() {
        arriveAndDrop(true, false);
    }

    /** @param landing whether a copy's landing arrives (a completion failure is then the phase's failure) */
    private void arriveAndDrop(boolean party, boolean landing) {
        for (;;) {
            long s = lvState();
            int expected = expectedOf(s);
            int parties = party ? expected - pendingCopies : expected;
            if (parties <= 0 || arrivedOf(s) >= parties) {
                throw overArrival(s, 1);
            }
            if (leave(s, arrivedOf(s) + 1 == expected, landing)) {
                return;
            }
        }
    }

    /**
     * One CAS attempt that lowers the expected count, completing the phase when {@code completes} ({@code landing}:
     * for a copy's landing).
     */
    private boolean leave(long s, boolean completes, boolean landing) {
        int phase = phaseOf(s);
        int expected = expectedOf(s) - 1;
        if (!completes) {
            return casState(s, pack(phase, expected, arrivedOf(s)) | (s & WITHDRAWN));
        }
        if (completion == null) {
            if (casState(s, pack(phase + 1, expected, 0))) {
                signalAll();
                return true;
            }
            return false;
        }
        // completing state: full with the old count, so that neither an arrival nor a waiter misreads it
        if (casState(s, pack(phase, expected + 1, expected + 1))) {
            runCompletionAndAdvance(phase, expected, landing);
            return true;
        }
        return false;
    }

    /**
     * Runs the completion action while the word is in the completing state (arrived == expected, so every
     * further arrival is refused as an over-arrival), then publishes the next phase. If the action throws,
     * the phase still completes, so that no waiter hangs, and the exception reaches the last arriver; when that is
     * a copy's landing ({@code recordFailure}), it is also recorded as the phase's failure before the phase is
     * published, so that every waiter that sees the phase complete sees the failure too.
     */
    private void runCompletionAndAdvance(int phase, int nextExpected, boolean recordFailure) {
        completer = Thread.currentThread();
        try {
            completion.run();
        } catch (RuntimeException | Error e) {
            if (recordFailure) {
                recordFailure(phase, e);
            }
            throw e;
        } finally {
            completer = null;
            word.publish(pack(phase + 1, nextExpected, 0));
            signalAll();
        }
    }

    /**
     * A shared word (in a region other processes write) that holds what the protocol never writes: the exception
     * names the word's value and what it found, so that a corrupted region fails cleanly instead of being
     * overwritten or spun on.
     */
    static IllegalStateException corrupted(long s, String op, String where) {
        return new IllegalStateException(op + " found the stage barrier's " + (where.isEmpty() ? "" : "shared ")
            + "word corrupted: 0x"
            + Long.toHexString(s) + " (phase " + phaseOf(s) + ", expected " + expectedOf(s) + ", arrived "
            + arrivedOf(s) + ")" + where);
    }

    private IllegalStateException overArrival(long s, int count) {
        return new IllegalStateException("barrier phase " + phaseOf(s) + " expects " + expectedOf(s)
            + " arrivals and already has " + arrivedOf(s) + "; arriving " + count + " more is not allowed");
    }

    // ---------------------------------------------------------------------------------------------------------
    // Waiting

    /** Deadline meaning "no deadline" (an alias of {@link Deadlines#NO_DEADLINE}). */
    public static final long NO_DEADLINE = Deadlines.NO_DEADLINE;
    /** Deadline meaning "look once, do not wait" (an alias of {@link Deadlines#POLL_ONCE}). */
    public static final long POLL_ONCE = Deadlines.POLL_ONCE;

    /** Waits until phase {@code round} completes, waiting adaptively, without a site or a watch. */
    public WaitStatus await(int round, long deadline, boolean interruptible) {
        return await(round, deadline, interruptible, WaitStrategy.ADAPTIVE, this, null);
    }

    /**
     * Waits until phase {@code round} completes: {@link Waiting#await} on this barrier.
     *
     * @throws IllegalStateException when the caller is running this barrier's completion action and waits for the
     *                               phase that is completing (it would wait for itself)
     */
    public WaitStatus await(int round, long deadline, boolean interruptible, WaitStrategy strategy, Object site,
                            StallWatch watch) {
        WaitStatus status = poll(round);
        if (status != null) {
            return status;
        }
        if (completer == Thread.currentThread()) {
            throw new IllegalStateException("a barrier's completion action cannot wait for the phase it is "
                + "completing (phase " + (round & PHASE_MASK) + "): it would wait for itself");
        }
        return Waiting.await(this, round, deadline, interruptible, strategy, site, watch);
    }

    /** The barrier word, for detecting that nothing has changed between two looks. */
    public long snapshot() {
        return lvState();
    }

    @Override
    public WaitStatus poll(long round) {
        return pollState(lvState(), round);
    }

    /** {@link #poll} of a barrier whose word holds {@code s}. */
    static WaitStatus pollState(long s, long round) {
        if (phaseOf(s) != ((int) round & PHASE_MASK)) {
            return WaitStatus.COMPLETE;
        }
        return expectedOf(s) == 0 ? WaitStatus.ABANDONED : null;
    }

    @Override
    public void enqueue(Waiter waiter) {
        word.enqueue(waiter);
    }

    @Override
    public void dequeue(Waiter waiter) {
        word.dequeue(waiter);
    }

    @Override
    public void park(long round, long limit) {
        word.park(this, round, limit);
    }

    @Override
    public long maxParkNanos() {
        return word.maxParkNanos();
    }

    @Override
    public boolean interruptEndsPark() {
        return word.interruptEndsPark();
    }

    private void signalAll() {
        word.signal();
    }

    @Override
    public String toString() {
        long s = lvState();
        return "phase " + phaseOf(s) + ", arrived " + arrivedOf(s) + "/" + expectedOf(s);
    }

    // ---------------------------------------------------------------------------------------------------------
    // VarHandle mechanics

    private static final VarHandle PENDING_COPIES;

    static {
        try {
            PENDING_COPIES = MethodHandles.lookup().findVarHandle(PhaseBarrier.class, "pendingCopies", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private long lvState() {
        return word.get();
    }

    private boolean casState(long expect, long update) {
        return word.cas(expect, update);
    }
}
