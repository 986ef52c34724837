package dev.jpipeline.internal.process;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.jpipeline.WaitStrategy;
import dev.jpipeline.internal.wait.Deadlines;
import dev.jpipeline.internal.wait.PeriodicCheck;
import dev.jpipeline.internal.wait.WaitStatus;
import dev.jpipeline.internal.wait.Waitable;
import dev.jpipeline.internal.wait.Waiter;
import dev.jpipeline.internal.wait.Waiting;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntPredicate;

/**
 * Waiting on a word that several processes map: a 32-bit wake word in native memory, typically a file mapped by
 * several processes, that waiters sleep on in the kernel's futex, because a thread of another JVM can reach no
 * {@code LockSupport.unpark}. The wait itself is the one wait routine's ({@link Waiting#await}: poll, idle by the
 * strategy, count, poll, sleep, poll, with deadlines, interrupts and the stall watch), over a waitable that counts
 * its waiters here ({@link #count}) and sleeps here ({@link #sleep}); whoever changes what the waiters poll calls
 * {@link #wakeAll} or {@link #wakeIfCounted}.
 *
 * <pre>
 * The wait word: 8 bytes at an 8-byte aligned offset of the segment
 *
 *     offset      offset + 4
 *    +-----------+-----------+
 *    | value     | waiters   |
 *    +-----------+-----------+
 *
 *  - value: the futex word. Either the caller's 32-bit state itself (a generation: await's predicate tests it), or
 *    a count of signals beside a state that lives elsewhere (a barrier word: wakeIfCounted bumps it). Read with
 *    volatile loads.
 *  - waiters: threads, of all processes, in (or about to enter) a futex sleep on value. A waiter adds 1 before
 *    its first sleep and takes it off when its wait ends, whichever way. wakeAll makes the FUTEX_WAKE system call
 *    only when waiters is not 0: on the project's 2-core VM that call costs about 0.8 us even when it finds nobody,
 *    the fence and load that replace it 5 ns, a whole round trip between spinning threads 0.1-0.4 us. Both halves
 *    on one line: the waker reads waiters from the line its own store brought in. A process that dies inside a
 *    wait leaves its 1 behind: later wakes then always make the call (a cost, never a lost wake-up). Storing 0 over
 *    it is safe only when no live thread can be inside a wait on the word.
 *
 * A sleep (the park phase of Waiting, for such a waitable)
 *
 *   W1  waiters += 1     (count, locked RMW: the waitable's enqueue, once per wait)
 *       poll             (Waiting's poll after the enqueue)
 *   W2  v = value        (sleep's caller: seen)
 *   W2' poll again       (the condition, after W2)
 *   W3  FUTEX_WAIT(value, v), bounded by the park's limit; where futex is unavailable, or the waiter is a virtual
 *       thread (a futex wait would pin its carrier), a LockSupport.parkNanos of at most 1 ms instead
 *
 * No lost wake-up (Dekker, across processes):
 *
 *   waiter                                     waker
 *   W1  waiters += 1       (locked RMW)        K1  the change          (the caller's store or CAS)
 *   W2  v = value          (volatile load)     K2  full fence
 *   W2' the condition      (volatile loads)    K3  n = waiters        (volatile load)
 *   W3  FUTEX_WAIT(value, v): the kernel        K4  if n != 0: value += 1 (a signal count) and FUTEX_WAKE(all)
 *       compares value == v and queues the
 *       thread atomically w.r.t. FUTEX_WAKE
 *
 *   W1 is ordered before W2' (a locked instruction is a full fence), K1 before K3 (K2). Of two fenced
 *   store-then-load sequences at least one load sees the other's store: either W2' sees the change (the waiter
 *   returns) or K3 reads the count with this waiter in it and K4 follows. K4's change of value comes after K1;
 *   W2 came before W2', which did not see K1, so W2 did not see K4's change either: v is the old value, and the
 *   kernel's compare at W3 either sees the new one (EAGAIN: the waiter polls again) or queued the thread before
 *   K4 took the bucket lock, and K4 wakes it. The waiter stays counted between its sleeps, so every later sleep is
 *   covered the same way. Every waiter is woken: waiters of one word may wait for different things.
 *
 *   wakeIfCounted skips K2: the caller's change must be a locked RMW (a CAS), which is the fence. After a plain or
 *   release store of the state (a solo arrival: no locked instruction on the line the peer spins on, as Agrona's
 *   ring buffers publish) K3 may be read before the store is visible, so a waiter may sleep through it; such
 *   waitables say signalsMayMissAPush, and Waiting bounds their sleeps (100 us, doubling up to 100 ms), so the
 *   store is seen at the end of the current one.
 *
 * Memory consistency: a waker's actions before its change (a release store or stronger) are visible to a waiter
 * after its wait returns, having seen the change with a volatile load. Across processes this is the hardware's
 * ordering of those same instructions on the shared page; the Java memory model speaks of one JVM only.
 *
 * Interrupts do not reach a thread in a futex sleep: such waitables say so (interruptEndsPark), and Waiting bounds
 * each sleep of an interruptible wait by 10 ms. Time: the deadline is this JVM's System.nanoTime.
 * </pre>
 */
public final class ProcessWaiting {

    /** Bytes a wait word takes: the value, then the waiter count; its offset must be a multiple of this. */
    public static final int WORD_BYTES = 8;
    /** Where the waiter count is, from the value's offset. */
    static final long WAITERS_OFFSET = 4;

    /** A fallback park (no futex, or a virtual thread) lasts at most this: a wait then wakes a thousand times a second. */
    private static final long MAX_FALLBACK_NANOS = 1_000_000;
    /**
     * A bounded futex sleep (a waitable whose signals may miss a sleeper) lasts at most this: a long wait then wakes
     * ten times a second, and a missed wake-up, which takes a store racing the waiter's first sleep, costs at most
     * this.
     */
    private static final long MAX_SLICE_NANOS = 100_000_000;
    /**
     * The idling of a generic wait ({@link #await}) before it sleeps: 128 spins (about 5 us on the project's 2-core
     * VM, less than one futex wake-up there: a futex ping-pong takes 12-19 us a round trip), then 16 yields (a
     * partner that waits for this core runs first). Longer spins lost badly once the machine had more runnable
     * threads than cores; the figures are in docs/performance.md (CrossProcessWakeBenchmark).
     */
    private static final WaitStrategy IDLING = WaitStrategy.spinYieldPark(128, 16);

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
     * that a condition that needs a parameter is not a capturing lambda allocated per wait. A condition on a state
     * that lives elsewhere ignores the value (the word then only counts signals: {@link #wakeIfCounted}).
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
     * @param wakesMayBeMissed whether a waker may change the state with a plain or release store before
     *                         {@link #wakeIfCounted} (then every futex sleep is bounded, see the class comment)
     */
    public static WaitStatus await(MemorySegment segment, long offset, Condition done, long token,
                                   boolean wakesMayBeMissed, long deadline, boolean interruptible,
                                   long checkIntervalNanos, Runnable check) {
        checkWord(segment, offset);
        if (check != null && checkIntervalNanos <= 0) {
            throw new IllegalArgumentException("a process wait's check interval must be positive, got "
                + checkIntervalNanos + " ns");
        }
        WordWait wait = new WordWait(segment, offset, done, wakesMayBeMissed);
        return Waiting.await(wait, token, deadline, interruptible, IDLING, wait,
            check == null ? null : new PeriodicCheck(checkIntervalNanos, check));
    }

    /** The waitable of a generic wait: the caller's condition, tested with each value of the word read. */
    private record WordWait(MemorySegment segment, long offset, Condition done, boolean wakesMayBeMissed)
        implements Waitable {
        @Override
        public WaitStatus poll(long token) {
            return done.met(seen(segment, offset), token) ? WaitStatus.COMPLETE : null;
        }

        @Override
        public void enqueue(Waiter waiter) {
            count(segment, offset, 1);
        }

        @Override
        public void dequeue(Waiter waiter) {
            count(segment, offset, -1);
        }

        @Override
        public void park(long token, long limit) {
            int seen = seen(segment, offset);
            if (!done.met(seen, token)) {
                sleep(segment, offset, seen, limit, ProcessWaiting.class);     // the blocker a thread dump shows
            }
        }

        /** A waker that fences misses no sleeper; a fallback park, which nothing wakes, is bounded all the same. */
        @Override
        public boolean signalsMayMissAPush() {
            return wakesMayBeMissed || !sleepsInFutex();
        }

        @Override
        public long maxParkNanos() {
            return maxSleepNanos();
        }

        @Override
        public boolean interruptEndsPark() {
            return false;
        }

        @Override
        public String toString() {
            return "a process wait word at offset " + offset;
        }
    }

    /**
     * Counts the current thread in ({@code +1}, before its first sleep: W1, a locked RMW) or out ({@code -1}, when
     * its wait ends) of the wait word at {@code offset}, if it sleeps in futex ({@link #sleepsInFutex}, the same
     * throughout a wait): a fallback park is bounded, and counting it would only make wakers call the kernel. The
     * word's place must have been checked once before.
     */
    public static void count(MemorySegment segment, long offset, int delta) {
        if (sleepsInFutex()) {
            COUNT.getAndAdd(segment, offset + WAITERS_OFFSET, delta);
        }
    }

    /** The wait word's value (W2): read before the waiter's last poll, then given to {@link #sleep}. */
    public static int seen(MemorySegment segment, long offset) {
        return (int) VALUE.getVolatile(segment, offset);
    }

    /**
     * Sleeps while the wait word at {@code offset} holds {@code seen}, until a wake, {@code limit} (a
     * {@link System#nanoTime()} deadline, or {@link Deadlines#NO_DEADLINE}) or a spurious return (W3); a fallback
     * park where futex is not used (see {@link #sleepsInFutex}) lasts at most {@link #maxSleepNanos}. The caller is
     * counted ({@link #count}) and polled after reading {@code seen}.
     */
    public static void sleep(MemorySegment segment, long offset, int seen, long limit, Object blocker) {
        long nanos = limit == Deadlines.NO_DEADLINE ? Long.MAX_VALUE : Math.max(0, limit - System.nanoTime());
        if (sleepsInFutex()) {
            Futex.wait(segment, offset, seen, nanos == Long.MAX_VALUE ? Futex.NO_TIMEOUT : nanos);
        } else {
            LockSupport.parkNanos(blocker, Math.max(1, Math.min(nanos, MAX_FALLBACK_NANOS)));
        }
    }

    /**
     * Whether the current thread sleeps in futex: futex is available and on, and the thread is a platform thread
     * (a virtual thread's futex wait would pin its carrier). Otherwise it parks for short times and polls.
     */
    public static boolean sleepsInFutex() {
        return futex && !Thread.currentThread().isVirtual();
    }

    /** The longest one sleep of the current thread may last when sleeps are bounded (Waitable.maxParkNanos). */
    public static long maxSleepNanos() {
        return sleepsInFutex() ? MAX_SLICE_NANOS : MAX_FALLBACK_NANOS;
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
