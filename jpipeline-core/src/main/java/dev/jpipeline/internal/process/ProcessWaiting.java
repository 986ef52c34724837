package dev.jpipeline.internal.process;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.jpipeline.internal.wait.Deadlines;
import dev.jpipeline.internal.wait.WaitStatus;
import dev.jpipeline.internal.wait.Waiting;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntPredicate;

/**
 * The one wait routine of system scope: a thread waits until a 32-bit word in native memory, typically a file
 * mapped by several processes, holds a value it accepts; whoever changes the word calls {@link #wakeAll}. The
 * in-process waits go through {@link Waiting}; a waiter here may be woken by a thread of another JVM, which no
 * {@code LockSupport.unpark} can reach, so the kernel's futex does the parking.
 *
 * <pre>
 * The wait word: 8 bytes at an 8-byte aligned offset of the segment
 *
 *     offset      offset + 4
 *    +-----------+-----------+
 *    | value     | waiters   |
 *    +-----------+-----------+
 *
 *  - value: the caller's 32-bit state (a phase, a count). Written by the caller (release store, CAS), read here
 *    with volatile loads; it is the futex word.
 *  - waiters: threads, of all processes, in (or about to enter) a futex wait on value. A waiter adds 1 before
 *    its first futex wait and takes it off when its wait ends, whichever way. wakeAll makes the FUTEX_WAKE
 *    system call only when waiters is not 0: on the project's 2-core VM that call costs about 0.8 us even when
 *    it finds nobody, the fence and load that replace it 5 ns, a whole round trip between spinning threads
 *    0.1-0.4 us. Both halves on one line: the waker reads waiters from the line its own store brought in.
 *    A process that dies inside a wait leaves its 1 behind: later wakes then always make the call (a cost, never
 *    a lost wake-up). Storing 0 over it is safe only when no live thread can be inside await on the word.
 *
 * Algorithm (await)
 *
 *   poll          a met condition returns at once, before the clock or anything else is touched
 *   spin          SPIN_POLLS polls with Thread.onSpinWait: the partner is likely running on another core
 *   yield         YIELD_POLLS polls with Thread.yield: on an oversubscribed machine the partner may need this core
 *   futex         waiters += 1, poll, then FUTEX_WAIT(value, the value just read), poll after each return
 *                 (woken, spurious, EAGAIN, EINTR, time-out alike). Where the waker may miss the count (see
 *                 wakeIfCounted after a plain store), each futex wait is also bounded: 100 us, then doubling up
 *                 to 100 ms, so that a missed wake-up costs a short delay, never a hang (Waiting's bounded parks)
 *   fallback      where futex is unavailable, or the waiter is a virtual thread (a futex wait would pin its
 *                 carrier): LockSupport.parkNanos for 50 us, doubling up to 1 ms, polling after each
 *
 * Every futex wait or park is bounded by the deadline and by the next check: check runs every checkIntervalNanos
 * of waiting (first after one interval), so that the caller can look for dead processes (a party that died holds
 * no lock here: the caller decides, and may throw to end the wait). Interruptible waits also bound each futex
 * wait by INTERRUPT_CHECK_NANOS, because Thread.interrupt() does not reach a thread in a system call.
 *
 * No lost wake-up (Dekker, across processes):
 *
 *   waiter                                     waker
 *   W1  waiters += 1       (locked RMW)        K1  value = v'          (the caller's store or CAS)
 *   W2  v = value          (volatile load)     K2  full fence
 *   W3  FUTEX_WAIT(value, v): the kernel        K3  n = waiters        (volatile load)
 *       compares value == v and queues the      K4  if n != 0: FUTEX_WAKE(value, all)
 *       thread atomically w.r.t. FUTEX_WAKE
 *
 *   W1 is ordered before W2 (a locked instruction is a full fence), K1 before K3 (K2). Of two fenced
 *   store-then-load sequences at least one load sees the other's store: either W2 reads v' (the waiter sees the
 *   change, or waits for a later one, whose waker must then see its count) or K3 reads the count with this
 *   waiter in it and K4 calls FUTEX_WAKE after K1. Then the kernel's compare at W3 either sees v' (EAGAIN: the
 *   waiter polls again) or found v and queued the thread before K4 took the bucket lock, and K4 wakes it.
 *   The waiter stays counted between its futex waits, so every later wait is covered the same way.
 *   wakeAll wakes every waiter: waiters of one word may wait for different values.
 *
 *   wakeIfCounted, for a word that only counts signals (the state the waiters poll lives elsewhere): K3 first,
 *   and only when it finds a waiter counted, K1' value += 1 (the bump) then K4. K2 is the caller's: the locked
 *   RMW (a CAS) that changed the state. Same argument, with the state change as K1 and the waiter's poll of the
 *   state after W2: either that poll sees the change, or K3 sees the count and the bump reaches the kernel's
 *   compare or follows the queueing. After a plain or release store of the state (a solo arrival: no locked
 *   instruction on the line the peer spins on, as Agrona's ring buffers publish) K3 may be read before the store
 *   is visible, so a waiter may sleep through it; such words are waited on with wakesMayBeMissed, whose futex
 *   waits are bounded, so the store is seen at the end of the current one.
 *
 * Memory consistency: a waker's actions before its store of the value (a release store or stronger) are
 * visible to a waiter after await returns COMPLETE, which read that value with a volatile load. Across
 * processes this is the hardware's ordering of those same instructions on the shared page; the Java memory
 * model speaks of one JVM only.
 *
 * Not seen here: Waiting's ParkListener (a SIMT kernel thread never waits at system scope) and StallWatch; a
 * caller's hang detection goes through check.
 *
 * Interrupts: an interruptible wait returns INTERRUPTED (status cleared), noticed within INTERRUPT_CHECK_NANOS
 * of a futex wait, at once in the other phases; an uninterruptible wait remembers the interrupt and re-asserts
 * it before returning, as Waiting does. Time: the deadline is this JVM's System.nanoTime; the clock is read only
 * after the spin phase.
 * </pre>
 */
public final class ProcessWaiting {

    /** Bytes a wait word takes: the value, then the waiter count; its offset must be a multiple of this. */
    public static final int WORD_BYTES = 8;
    /** Where the waiter count is, from the value's offset. */
    static final long WAITERS_OFFSET = 4;

    /**
     * Polls with {@code Thread.onSpinWait} before yielding: about 5 us on the project's 2-core VM (40 ns a
     * poll), less than one futex wake-up there (a futex ping-pong takes 12-19 us a round trip), so that a
     * partner that answers within that time on another core costs no system call. Longer spins lost badly once
     * the machine had more runnable threads than cores (2048 polls: 124 us a round trip, against 10 us); the
     * figures are in docs/performance.md (CrossProcessWakeBenchmark).
     */
    private static final int SPIN_POLLS = 128;
    /**
     * Polls with {@code Thread.yield} before the futex: lets a partner that waits for this core run first. A
     * yield is a system call (about 1.2 us here when nothing else is runnable), so this phase is short too.
     */
    private static final int YIELD_POLLS = 16;
    /** The first fallback park: a partner that answers at once is seen at most this late. */
    private static final long FIRST_SLEEP_NANOS = 50_000;
    /** Fallback parks double up to this, so that a long fallback wait wakes about a thousand times a second. */
    private static final long MAX_SLEEP_NANOS = 1_000_000;
    /** A futex wait's first bound when wake-ups may be missed: how late a missed wake-up is seen at first. */
    private static final long FIRST_SLICE_NANOS = 100_000;
    /**
     * Bounds of futex waits that may miss a wake-up double up to this: a long wait then wakes ten times a second,
     * and a missed wake-up, which takes a store racing the waiter's first sleep, costs at most this.
     */
    private static final long MAX_SLICE_NANOS = 100_000_000;
    /** An interruptible wait's futex waits last at most this long: how late it may see an interrupt. */
    static final long INTERRUPT_CHECK_NANOS = 10_000_000;

    /**
     * Whether waits use futex: tests turn it off to take the fallback path ({@link #useFutex(boolean)}), only
     * while no wait and no wake is under way.
     */
    private static volatile boolean futex = Futex.available();

    private ProcessWaiting() {
    }

    /**
     * Waits until {@code done} accepts the value of the wait word at {@code offset} of {@code segment}.
     *
     * <p>Memory consistency effects: actions of a thread (of any process) before it stores a value that
     * {@code done} accepts, with release semantics or stronger, are visible to the current thread after this
     * method returns {@link WaitStatus#COMPLETE} having read that value.
     *
     * @param segment            native, writable memory, shared by the processes that use the word
     * @param offset             the wait word's offset: a multiple of {@link #WORD_BYTES}, as an address too
     * @param done               tested on each value read; called by the waiting thread only
     * @param deadline           a {@link System#nanoTime()} deadline, {@link Deadlines#NO_DEADLINE} or
     *                           {@link Deadlines#POLL_ONCE}
     * @param interruptible      whether an interrupt ends the wait (noticed within 10 ms)
     * @param checkIntervalNanos how often {@code check} runs while the wait lasts; positive when {@code check}
     *                           is given
     * @param check              run every {@code checkIntervalNanos} of waiting, on the waiting thread (to look
     *                           for dead processes), or null; whatever it throws ends the wait and propagates
     * @return {@link WaitStatus#COMPLETE}, {@link WaitStatus#TIMED_OUT} or {@link WaitStatus#INTERRUPTED}
     * @throws IllegalArgumentException if the segment or offset cannot hold a wait word, or the interval is not
     *                                  positive while {@code check} is given
     */
    public static WaitStatus await(MemorySegment segment, long offset, IntPredicate done, long deadline,
                                   boolean interruptible, long checkIntervalNanos, Runnable check) {
        checkWord(segment, offset);
        Objects.requireNonNull(done, "done");
        return await(segment, offset, (value, token) -> done.test(value), 0, false, deadline, interruptible,
            checkIntervalNanos, check);
    }

    /**
     * What a wait waits for: tested with each value read of the wait word and the token the wait was given, so
     * that a condition that needs a parameter (a barrier's round) is not a capturing lambda allocated per wait.
     */
    @FunctionalInterface
    public interface Condition {
        /** Whether the wait is over, {@code value} having just been read from the wait word. */
        boolean met(int value, long token);
    }

    /**
     * {@link #await(MemorySegment, long, IntPredicate, long, boolean, long, Runnable)} with a {@link Condition}
     * and its token, for waits whose wakers may skip the fence before reading the waiter count.
     *
     * The word's place must have been checked ({@link #checkWord}) once before: a stage word's every wait that
     * does not end at the barrier's first poll comes here.
     *
     * @param wakesMayBeMissed whether a waker may change the state with a plain or release store before
     *                         {@link #wakeIfCounted} (then every futex wait is bounded, see the class comment)
     */
    public static WaitStatus await(MemorySegment segment, long offset, Condition done, long token, boolean wakesMayBeMissed,
                            long deadline, boolean interruptible, long checkIntervalNanos, Runnable check) {
        if (check != null && checkIntervalNanos <= 0) {
            throw new IllegalArgumentException("a process wait's check interval must be positive, got "
                + checkIntervalNanos + " ns");
        }
        if (done.met((int) VALUE.getVolatile(segment, offset), token)) {
            return WaitStatus.COMPLETE;
        }
        if (deadline == Deadlines.POLL_ONCE) {
            return WaitStatus.TIMED_OUT;
        }
        return slow(segment, offset, done, token, wakesMayBeMissed, deadline, interruptible, checkIntervalNanos,
            check);
    }

    /**
     * Wakes every thread, of any process, waiting in {@link #await} on the wait word at {@code offset}: call it
     * after changing the value, in the same thread (the store, of any kind, must come first in program order; the
     * fence here orders it before the load of the waiter count). Makes no system call when no thread waits in
     * futex.
     *
     * @param segment the memory holding the wait word, as given to {@link #await}
     * @param offset  the wait word's offset
     * @throws IllegalArgumentException if the segment or offset cannot hold a wait word
     */
    public static void wakeAll(MemorySegment segment, long offset) {
        checkWord(segment, offset);
        VarHandle.fullFence();          // K2: the caller's store of the value before the load of the count
        if ((int) COUNT.getVolatile(segment, offset + WAITERS_OFFSET) != 0 && futex) {
            Futex.wake(segment, offset, Integer.MAX_VALUE);
        }
    }

    /**
     * Wakes the threads waiting in futex on the wait word at {@code offset}, if any is counted: adds 1 to the
     * word's value (so that a waiter about to sleep on the old value does not) and makes the FUTEX_WAKE call. For
     * a word that only counts signals, the state the waiters poll living elsewhere and changed before this call.
     * After a locked change of that state (a CAS: the fence before the load of the count) no wake-up is lost;
     * after a plain or release store one may be, and the waiters must wait with {@code wakesMayBeMissed} (see
     * the class comment). With nobody counted this is one load: every arrival's path, so it checks nothing; the
     * word's place must have been checked ({@link #checkWord}) once before.
     *
     * @param segment the memory holding the wait word, as given to {@link #await}
     * @param offset  the wait word's offset
     */
    public static void wakeIfCounted(MemorySegment segment, long offset) {
        if ((int) COUNT.getVolatile(segment, offset + WAITERS_OFFSET) != 0 && futex) {
            VALUE.getAndAdd(segment, offset, 1);
            Futex.wake(segment, offset, Integer.MAX_VALUE);
        }
    }

    /** The number of threads counted as waiting in futex on the word at {@code offset} (a test's observation). */
    public static int waiters(MemorySegment segment, long offset) {
        return (int) COUNT.getVolatile(segment, offset + WAITERS_OFFSET);
    }

    /** Turns futex use on or off (where available), for tests of the fallback path; returns the previous state. */
    static boolean useFutex(boolean on) {
        boolean was = futex;
        futex = on && Futex.available();
        return was;
    }

    /** Everything after the first poll: kept out of {@link #await} so that the fast path stays small. */
    private static WaitStatus slow(MemorySegment segment, long offset, Condition done, long token,
                                   boolean wakesMayBeMissed, long deadline, boolean interruptible,
                                   long checkIntervalNanos, Runnable check) {
        for (int i = 0; i < SPIN_POLLS; i++) {
            Thread.onSpinWait();
            if (done.met((int) VALUE.getVolatile(segment, offset), token)) {
                return WaitStatus.COMPLETE;
            }
        }
        Thread me = Thread.currentThread();
        boolean useFutex = futex && !me.isVirtual();
        boolean counted = false;            // whether this wait is in the waiter count
        boolean interrupted = false;
        long now = System.nanoTime();
        long nextCheck = check == null ? Deadlines.NO_DEADLINE : now + checkIntervalNanos;
        long sleep = FIRST_SLEEP_NANOS;
        long slice = wakesMayBeMissed ? FIRST_SLICE_NANOS : Long.MAX_VALUE;
        try {
            for (int yields = 0; ; ) {
                if (Thread.interrupted()) {
                    if (interruptible) {
                        return WaitStatus.INTERRUPTED;
                    }
                    interrupted = true;
                }
                if (Deadlines.passed(deadline, now)) {
                    return WaitStatus.TIMED_OUT;
                }
                if (check != null && now - nextCheck >= 0) {
                    check.run();                // may throw: the caller found a dead process
                    now = System.nanoTime();
                    nextCheck = now + checkIntervalNanos;
                }
                int value;
                if (yields < YIELD_POLLS) {
                    yields++;
                    Thread.yield();
                } else {
                    long limit = deadline == Deadlines.NO_DEADLINE ? Long.MAX_VALUE : deadline - now;
                    if (check != null) {
                        limit = Math.min(limit, nextCheck - now);      // both still ahead: positive
                    }
                    if (useFutex) {
                        if (interruptible) {
                            limit = Math.min(limit, INTERRUPT_CHECK_NANOS);
                        }
                        if (slice != Long.MAX_VALUE) {
                            limit = Math.min(limit, slice);
                            slice = Math.min(2 * slice, MAX_SLICE_NANOS);
                        }
                        if (!counted) {
                            COUNT.getAndAdd(segment, offset + WAITERS_OFFSET, 1);     // W1
                            counted = true;
                        }
                        value = (int) VALUE.getVolatile(segment, offset);           // W2
                        if (done.met(value, token)) {
                            return WaitStatus.COMPLETE;
                        }
                        Futex.wait(segment, offset, value,                          // W3
                            limit == Long.MAX_VALUE ? Futex.NO_TIMEOUT : Math.max(0, limit));
                    } else {
                        LockSupport.parkNanos(ProcessWaiting.class, Math.max(1, Math.min(sleep, limit)));
                        sleep = Math.min(2 * sleep, MAX_SLEEP_NANOS);
                    }
                }
                value = (int) VALUE.getVolatile(segment, offset);
                if (done.met(value, token)) {
                    return WaitStatus.COMPLETE;
                }
                now = System.nanoTime();
            }
        } finally {
            if (counted) {
                COUNT.getAndAdd(segment, offset + WAITERS_OFFSET, -1);
            }
            if (interrupted) {
                me.interrupt();
            }
        }
    }

    /** Checks that a wait word fits at {@code offset}: native, writable, inside, 8-byte aligned as an address. */
    public static void checkWord(MemorySegment segment, long offset) {
        Objects.requireNonNull(segment, "segment");
        if (!segment.isNative()) {
            throw new IllegalArgumentException(
                "a process wait word must be in native memory (a mapped file or an arena's segment), got " + segment);
        }
        if (segment.isReadOnly()) {
            throw new IllegalArgumentException("a process wait word must be writable (its waiter count is), got "
                + "a read-only segment " + segment);
        }
        if (offset < 0 || offset > segment.byteSize() - WORD_BYTES) {
            throw new IllegalArgumentException("process wait word offset " + offset + " is outside the segment's "
                + segment.byteSize() + " bytes (a word takes " + WORD_BYTES + ")");
        }
        long address = segment.address() + offset;
        if ((address & (WORD_BYTES - 1)) != 0) {
            throw new IllegalArgumentException("a process wait word must be " + WORD_BYTES + "-byte aligned: offset "
                + offset + " is at address 0x" + Long.toHexString(address));
        }
    }

    // VarHandle mechanics

    /** The value: volatile loads (the caller stores it), and wakeIfCounted's bump of a signal count. */
    private static final VarHandle VALUE = JAVA_INT.varHandle();
    /** The waiter count: getAndAdd (a full fence, W1) and volatile loads (K3). */
    private static final VarHandle COUNT = JAVA_INT.varHandle();
}
