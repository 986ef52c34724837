package dev.jpipeline.internal;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.jpipeline.internal.process.MappedAtomics;
import dev.jpipeline.internal.process.ProcessIdentity;
import dev.jpipeline.internal.process.ProcessWaiting;
import dev.jpipeline.internal.wait.Waiter;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * A {@link PhaseBarrier}'s word in memory that several processes map (a system-scope pipeline's stage barrier in a
 * shared region), with what the barrier keeps beside it there: the wake word its waiters sleep on, and the records
 * of its phases' failures. The barrier runs its one algorithm on this word exactly as on a word of a {@code long[]};
 * only waiting, waking and failure records differ, because a parked thread or a {@code Throwable} does not cross a
 * process boundary.
 *
 * <pre>
 * Cell: CELL_BYTES at an 8-byte aligned offset
 *   0  state    long: the barrier word, in PhaseBarrier's format (phase | W | expected | arrived)
 *   8  signals  int:  bumped (getAndAdd) after a change a waiter may be waiting for (a completed phase, the last
 *                     party's drop) when a waiter is counted; a ProcessWaiting wait word, the futex word
 *  12  waiters  int:  ProcessWaiting's waiter count
 *
 * Why a separate futex word: a waiter sleeps while a 32-bit word holds the value it read, and no half of the
 * state changes on every event a waiter waits for (completing a one-party phase leaves the low half as it was,
 * the last drop leaves the high half). The signal count changes on every one of them.
 *
 * Waking (ProcessWaiting.wakeIfCounted): the waker changes the state, reads the waiter count, and only when a
 * waiter is counted bumps signals and calls FUTEX_WAKE; with nobody asleep a signal is one load. After a CAS
 * (every arrival of several parties, every drop) no wake-up is lost: the CAS is the fence between the change and
 * the load, the waiter counts itself (locked) before it reads signals and polls the state, so either its poll
 * sees the change or the waker sees the count, and then the bump reaches the kernel's compare or follows the
 * queueing (ProcessWaiting's Dekker argument). A solo arrival (set, PhaseBarrier.arriveAlone) is a release
 * store with no locked instruction, as Agrona's ring buffers publish, because a locked instruction on the line
 * the peer polls costs the hand-off more than half its rate; its load of the count may pass the store, so a waiter
 * may sleep through it. Waits here are therefore bounded futex waits (100 us first, doubling up to 100 ms): a
 * missed wake-up, which needs the store to race the waiter's first sleep, costs one such delay, never a hang.
 *
 * Failure record (a produced-side barrier only): two per barrier, one per phase parity, RECORD_BYTES each
 *   0  stamp    int: the phase recorded; NO_RECORD; or WRITING | phase while a writer fills it
 *   4  length   int: bytes of the message
 *   8  message  UTF-8: the failure's toString and the recording pid, truncated to MESSAGE_BYTES
 * A writer CASes the stamp to WRITING | phase, writes, then publishes the stamp (release); a reader reads the
 * stamp (acquire), the message, and the stamp again, and takes the message only when the two stamps are the
 * phase it asks about. A record is written before the arrival that completes its phase, so a reader that saw the
 * phase complete sees it (the seqlock only guards against two failures of one phase racing).
 * </pre>
 */
final class SharedWord extends BarrierWord {

    /** Bytes a cell takes: the state word, then the wake word. */
    static final int CELL_BYTES = 16;
    /** Bytes a failure record takes. */
    static final int RECORD_BYTES = 256;
    /** Bytes a barrier's two failure records take. */
    static final int RECORDS_BYTES = 2 * RECORD_BYTES;
    /** A record's stamp when nothing is recorded. */
    static final int NO_RECORD = -1;
    private static final int WRITING = 1 << 30;
    private static final int MESSAGE_BYTES = RECORD_BYTES - 8;

    /**
     * How often a stage's waiter looks for dead processes while its wait lasts (RegionHome's stall watch): a dead
     * process is seen within this.
     */
    static final long CHECK_NANOS = 100_000_000;

    private final MemorySegment segment;
    /** The cell's offset in {@link #segment}. */
    private final long at;
    /** Where this barrier's failure records are, or -1 when it has none (a consumed-side barrier). */
    private final long recordsAt;

    /**
     * @param recordsAt where the barrier's {@link #RECORDS_BYTES} of failure records are, or -1 for none
     */
    SharedWord(MemorySegment segment, long at, long recordsAt) {
        ProcessWaiting.checkWord(segment, at + 8);      // once: every signal then skips the checks
        if (recordsAt >= 0) {
            java.util.Objects.checkFromIndexSize(recordsAt, RECORDS_BYTES, segment.byteSize());
        }
        this.segment = segment;
        this.at = at;
        this.recordsAt = recordsAt;
    }

    /** Writes a fresh cell for a barrier expecting {@code expected} arrivals at phase 0, and empty records. */
    static void format(MemorySegment segment, long at, long recordsAt, long initialState) {
        STATE.setVolatile(segment, at, initialState);
        segment.set(JAVA_INT, at + 8, 0);
        segment.set(JAVA_INT, at + 12, 0);      // safe: no live thread waits on a word being formatted
        if (recordsAt >= 0) {
            STAMP.setVolatile(segment, recordsAt, NO_RECORD);
            STAMP.setVolatile(segment, recordsAt + RECORD_BYTES, NO_RECORD);
        }
    }

    @Override
    long get() {
        return (long) STATE.getVolatile(segment, at);
    }

    @Override
    boolean cas(long expect, long update) {
        return MappedAtomics.casLong(segment, at, expect, update);
    }

    /** A release store: no completion action runs on a shared word, so nothing publishes here but tests' formats. */
    @Override
    void publish(long value) {
        STATE.setRelease(segment, at, value);
    }

    /**
     * A release store of the word by its only writer (a solo arrival): the {@link #signal} that follows may miss a
     * waiter, whose bounded sleep then sees the store (see the class comment). The word is read first: the owner's
     * own line, but another process may have corrupted it.
     */
    @Override
    void storeAlone(long held, long next) {
        long s = get();
        if (s != held) {
            throw PhaseBarrier.corrupted(s, "a solo arrival at phase " + PhaseBarrier.phaseOf(held), where());
        }
        STATE.setRelease(segment, at, next);
        signal();
    }

    /** Where the word is, for messages: " at offset N of the region's state area". */
    @Override
    String where() {
        return " at offset " + at + " of the region's state area";
    }

    /** After a change a waiter may be waiting for: wakes the sleepers, if any is counted. */
    @Override
    void signal() {
        ProcessWaiting.wakeIfCounted(segment, at + 8);
    }

    /** Counts the waiter on the wake word (W1 of ProcessWaiting's sleep): a waker of any process sees the count. */
    @Override
    void enqueue(Waiter waiter) {
        if (waiter.isStackless()) {
            throw new IllegalStateException("a stage barrier in shared memory takes no in-process waiter node of a "
                + "suspended thread: its waiters sleep on the futex word beside it, where any process can wake them"
                + where());
        }
        ProcessWaiting.count(segment, at + 8, 1);
    }

    @Override
    void dequeue(Waiter waiter) {
        ProcessWaiting.count(segment, at + 8, -1);
    }

    /** Reads the wake word, polls the barrier, and sleeps in futex while the wake word holds what it read. */
    @Override
    void park(PhaseBarrier barrier, long round, long limit) {
        int seen = ProcessWaiting.seen(segment, at + 8);
        if (PhaseBarrier.pollState(get(), round) == null) {
            ProcessWaiting.sleep(segment, at + 8, seen, limit, barrier);
        }
    }

    /** Solo arrivals are release stores here too: waits are bounded futex sleeps (see the class comment). */
    @Override
    boolean signalsMayMissAPush() {
        return true;
    }

    @Override
    long maxParkNanos() {
        return ProcessWaiting.maxSleepNanos();
    }

    /** Thread.interrupt does not reach a futex sleep: Waiting bounds an interruptible wait's sleeps. */
    @Override
    boolean interruptEndsPark() {
        return false;
    }

    /** Records {@code failure} for phase {@code round} (see the class comment); the first of a phase's wins. */
    @Override
    void recordFailure(int round, Throwable failure) {
        if (recordsAt < 0) {
            throw new IllegalStateException("a consumed-side stage barrier has no failure records");
        }
        String text;
        try {
            text = String.valueOf(failure);
        } catch (RuntimeException | Error e) {
            // a failure whose message throws (a user's exception) is still recorded: else the copy that failed
            // would never land, and its stage never complete
            text = failure.getClass().getName() + " (its toString() threw " + e.getClass().getName() + ")";
        }
        byte[] message = (text + " (recorded by pid " + ProcessIdentity.CURRENT.pid() + ")")
            .getBytes(StandardCharsets.UTF_8);
        int phase = round & PhaseBarrier.PHASE_MASK;
        long record = recordsAt + (phase & 1) * RECORD_BYTES;
        int stamp = (int) STAMP.getVolatile(segment, record);
        if ((stamp & ~WRITING) == phase || !MappedAtomics.casInt(segment, record, stamp, WRITING | phase)) {
            return;         // recorded already, or being recorded by another failure of the phase
        }
        int length = Math.min(message.length, MESSAGE_BYTES);
        MemorySegment.copy(message, 0, segment, JAVA_BYTE, record + 8, length);
        segment.set(JAVA_INT, record + 4, length);
        STAMP.setRelease(segment, record, phase);
    }

    /**
     * Empties the record of {@code round}'s parity if it holds an earlier phase's complete failure
     * (PhaseBarrier.clearStaleFailure): a CAS of its stamp, so that a record being written, or written for
     * {@code round}, stays.
     */
    @Override
    void clearStaleFailure(int round) {
        if (recordsAt < 0) {
            return;
        }
        int phase = round & PhaseBarrier.PHASE_MASK;
        long record = recordsAt + (phase & 1) * RECORD_BYTES;
        int stamp = (int) STAMP.getVolatile(segment, record);
        if (stamp != NO_RECORD && stamp != phase && (stamp & WRITING) == 0) {
            MappedAtomics.casInt(segment, record, stamp, NO_RECORD);
        }
    }

    /** The failure recorded for phase {@code round}, or null: a {@link RecordedFailure} carrying its message. */
    @Override
    Throwable failureOf(int round) {
        if (recordsAt < 0) {
            return null;
        }
        int phase = round & PhaseBarrier.PHASE_MASK;
        long record = recordsAt + (phase & 1) * RECORD_BYTES;
        for (int attempt = 0; ; attempt++) {
            int before = (int) STAMP.getAcquire(segment, record);
            if ((before & ~WRITING) != phase) {
                return null;
            }
            if (before == phase) {
                int length = Math.clamp(segment.get(JAVA_INT, record + 4), 0, MESSAGE_BYTES);
                byte[] bytes = new byte[length];
                MemorySegment.copy(segment, JAVA_BYTE, record + 8, bytes, 0, length);
                VarHandle.loadLoadFence();
                if ((int) STAMP.getVolatile(segment, record) == phase) {
                    return new RecordedFailure(decode(bytes));
                }
            }
            if (attempt > 1_000) {       // a writer died mid-record: the failure is known, its text is not
                return new RecordedFailure("a failure whose record was never completed (its process died)");
            }
            Thread.onSpinWait();
        }
    }

    /** Decodes a possibly truncated UTF-8 message (a cut character becomes a replacement character). */
    private static String decode(byte[] bytes) {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPLACE)
                .onUnmappableCharacter(CodingErrorAction.REPLACE)
                .decode(java.nio.ByteBuffer.wrap(bytes)).toString();
        } catch (java.nio.charset.CharacterCodingException e) {
            throw new AssertionError("a replacing decoder does not throw", e);
        }
    }

    /**
     * A failure recorded in shared memory, possibly by another process: its message is the original failure's
     * {@code toString()} and the pid that recorded it.
     */
    static final class RecordedFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        RecordedFailure(String message) {
            super(message, null, false, false);
        }
    }

    private static final VarHandle STATE = JAVA_LONG.varHandle();
    private static final VarHandle STAMP = JAVA_INT.varHandle();
}
