package dev.jpipeline.internal.process;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.jpipeline.Teams;
import dev.jpipeline.internal.ChildJvm;
import dev.jpipeline.internal.wait.Deadlines;
import dev.jpipeline.internal.wait.WaitStatus;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cross-process wait routine. Threads are ordered by what they publish: a waiter in futex is counted in its
 * word's waiter count (it is past W1 of the Dekker argument, so a change made after that cannot be missed,
 * whether or not it is asleep in the kernel yet); a waiter on the fallback path is parked (TIMED_WAITING with
 * ProcessWaiting as its blocker).
 */
class ProcessWaitingTest {

    private static final VarHandle VALUE = JAVA_INT.varHandle();
    private static final long PATIENCE = Teams.PATIENCE.toNanos();

    private Arena arena;
    private MemorySegment words;

    @BeforeEach
    void words() {
        arena = Arena.ofShared();
        words = arena.allocate(64, 8);
    }

    @AfterEach
    void free() {
        arena.close();
    }

    private static long deadline() {
        return System.nanoTime() + PATIENCE;
    }

    /** Starts a platform thread that waits until the word at {@code offset} holds {@code value}. */
    private Thread waiter(long offset, int value, AtomicReference<WaitStatus> status) {
        return Thread.ofPlatform().name("process-waiter").start(() -> status.set(
            ProcessWaiting.await(words, offset, v -> v == value, deadline(), false, 0, null)));
    }

    private static void join(Thread t) throws InterruptedException {
        t.join(Teams.PATIENCE.toMillis());
        assertFalse(t.isAlive(), t.getName() + " is still waiting");
    }

    @Test
    void aMetConditionReturnsAtOnce() {
        VALUE.setVolatile(words, 8L, 5);
        assertEquals(WaitStatus.COMPLETE, ProcessWaiting.await(words, 8, v -> v == 5, Deadlines.POLL_ONCE,
            false, 0, null));
        assertEquals(WaitStatus.TIMED_OUT, ProcessWaiting.await(words, 8, v -> v == 6, Deadlines.POLL_ONCE,
            false, 0, null));
    }

    @Test
    void aDeadlineEndsTheWaitAndUncountsIt() {
        assumeTrue(Futex.available());
        long start = System.nanoTime();
        long deadline = start + TimeUnit.MILLISECONDS.toNanos(30);
        assertEquals(WaitStatus.TIMED_OUT, ProcessWaiting.await(words, 0, v -> v == 1, deadline, false, 0, null));
        assertTrue(System.nanoTime() - deadline >= 0, "returned before its deadline");
        assertEquals(0, ProcessWaiting.waiters(words, 0));
    }

    /** The no-lost-wake-up argument in one case: the change comes after the waiter counted itself (W1). */
    @Test
    void wakeAllWakesACountedWaiter() throws InterruptedException {
        assumeTrue(Futex.available());
        AtomicReference<WaitStatus> status = new AtomicReference<>();
        Thread waiter = waiter(0, 1, status);
        Teams.awaitTrue("the waiter counts itself", () -> ProcessWaiting.waiters(words, 0) == 1);
        VALUE.setRelease(words, 0L, 1);
        ProcessWaiting.wakeAll(words, 0);
        join(waiter);
        assertEquals(WaitStatus.COMPLETE, status.get());
        assertEquals(0, ProcessWaiting.waiters(words, 0), "a wait that ended leaves the count");
    }

    /**
     * Two threads hand a token back and forth through two words, each waiting for its turn: every race between
     * a waiter going to sleep and its partner's wake happens here many times. A lost wake-up would end a wait
     * at its deadline.
     */
    @Test
    void pingPongLosesNoWakeUp() throws InterruptedException {
        int rounds = 2_000;
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread pong = Thread.ofPlatform().name("pong").start(() -> {
            try {
                for (int i = 1; i <= rounds; i++) {
                    int round = i;
                    assertEquals(WaitStatus.COMPLETE,
                        ProcessWaiting.await(words, 0, v -> v == round, deadline(), false, 0, null));
                    VALUE.setRelease(words, 8L, round);
                    ProcessWaiting.wakeAll(words, 8);
                }
            } catch (Throwable e) {
                failure.set(e);
            }
        });
        for (int i = 1; i <= rounds; i++) {
            int round = i;
            VALUE.setRelease(words, 0L, round);
            ProcessWaiting.wakeAll(words, 0);
            assertEquals(WaitStatus.COMPLETE,
                ProcessWaiting.await(words, 8, v -> v == round, deadline(), false, 0, null), "round " + i);
        }
        join(pong);
        assertEquals(null, failure.get());
        assertEquals(0, ProcessWaiting.waiters(words, 0));
        assertEquals(0, ProcessWaiting.waiters(words, 8));
    }

    @Test
    void theCheckRunsEveryIntervalAndMayEndTheWait() {
        AtomicInteger checks = new AtomicInteger();
        IllegalStateException dead = new IllegalStateException("process 42 died");
        long interval = TimeUnit.MILLISECONDS.toNanos(2);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> ProcessWaiting.await(
            words, 0, v -> v == 1, deadline(), false, interval, () -> {
                if (checks.incrementAndGet() == 3) {
                    throw dead;
                }
            }));
        assertSame(dead, e);
        assertEquals(3, checks.get());
        assertEquals(0, ProcessWaiting.waiters(words, 0), "a wait that threw leaves the count");
    }

    @Test
    void anInterruptibleWaitReturnsOnAnInterrupt() throws InterruptedException {
        assumeTrue(Futex.available());
        AtomicReference<WaitStatus> status = new AtomicReference<>();
        AtomicBoolean stillInterrupted = new AtomicBoolean();
        Thread waiter = Thread.ofPlatform().start(() -> {
            status.set(ProcessWaiting.await(words, 0, v -> v == 1, deadline(), true, 0, null));
            stillInterrupted.set(Thread.currentThread().isInterrupted());
        });
        Teams.awaitTrue("the waiter counts itself", () -> ProcessWaiting.waiters(words, 0) == 1);
        waiter.interrupt();             // seen within INTERRUPT_CHECK_NANOS of its futex wait
        join(waiter);
        assertEquals(WaitStatus.INTERRUPTED, status.get());
        assertFalse(stillInterrupted.get(), "an interruptible wait clears the status it reports");
    }

    @Test
    void anUninterruptibleWaitGoesOnAndKeepsTheInterrupt() throws InterruptedException {
        assumeTrue(Futex.available());
        AtomicReference<WaitStatus> status = new AtomicReference<>();
        AtomicBoolean stillInterrupted = new AtomicBoolean();
        long interval = TimeUnit.MILLISECONDS.toNanos(1);   // its futex waits end often enough to see the status
        Thread waiter = Thread.ofPlatform().start(() -> {
            status.set(ProcessWaiting.await(words, 0, v -> v == 1, deadline(), false, interval, () -> { }));
            stillInterrupted.set(Thread.currentThread().isInterrupted());
        });
        Teams.awaitTrue("the waiter counts itself", () -> ProcessWaiting.waiters(words, 0) == 1);
        waiter.interrupt();
        Teams.awaitTrue("the waiter takes the interrupt and waits on", () -> !waiter.isInterrupted());
        assertTrue(waiter.isAlive(), "the interrupt ended an uninterruptible wait: " + status.get());
        VALUE.setRelease(words, 0L, 1);
        ProcessWaiting.wakeAll(words, 0);
        join(waiter);
        assertEquals(WaitStatus.COMPLETE, status.get());
        assertTrue(stillInterrupted.get(), "the interrupt is re-asserted");
    }

    @Test
    void withoutFutexWaitsParkAndPoll() throws InterruptedException {
        boolean was = ProcessWaiting.useFutex(false);
        try {
            AtomicReference<WaitStatus> status = new AtomicReference<>();
            Thread waiter = waiter(0, 1, status);
            awaitParkedInFallback(waiter);
            assertEquals(0, ProcessWaiting.waiters(words, 0), "the fallback does not count itself");
            VALUE.setRelease(words, 0L, 1);     // no wake needed: the next poll sees it
            join(waiter);
            assertEquals(WaitStatus.COMPLETE, status.get());
        } finally {
            ProcessWaiting.useFutex(was);
        }
    }

    @Test
    void aVirtualThreadParksInsteadOfPinningItsCarrierInFutex() throws InterruptedException {
        AtomicReference<WaitStatus> status = new AtomicReference<>();
        Thread waiter = Thread.ofVirtual().start(() -> status.set(
            ProcessWaiting.await(words, 0, v -> v == 1, deadline(), false, 0, null)));
        awaitParkedInFallback(waiter);
        assertEquals(0, ProcessWaiting.waiters(words, 0));
        VALUE.setRelease(words, 0L, 1);
        ProcessWaiting.wakeAll(words, 0);
        join(waiter);
        assertEquals(WaitStatus.COMPLETE, status.get());
    }

    /** Starts a waiter on the signal count at 0 for the state int at 16 to hold 1: a SharedWord-like wait. */
    private Thread stateWaiter(boolean wakesMayBeMissed, AtomicReference<WaitStatus> status) {
        return Thread.ofPlatform().name("state-waiter").start(() -> status.set(ProcessWaiting.await(words, 0,
            (signals, token) -> (int) VALUE.getVolatile(words, 16L) == token, 1, wakesMayBeMissed, deadline(),
            false, 0, null)));
    }

    @Test
    void wakeIfCountedAfterACasWakesASleeperAndBumpsOnlyWhenOneIsCounted() throws InterruptedException {
        ProcessWaiting.wakeIfCounted(words, 0);
        assertEquals(0, (int) VALUE.getVolatile(words, 0L), "nobody counted: no bump, no call");
        assumeTrue(Futex.available(), "futex is not available here: the fallback never counts itself");
        AtomicReference<WaitStatus> status = new AtomicReference<>();
        Thread waiter = stateWaiter(false, status);      // unbounded futex waits: only the wake ends them
        Teams.awaitTrue("the waiter counts itself", () -> ProcessWaiting.waiters(words, 0) == 1);
        assertTrue(VALUE.compareAndSet(words, 16L, 0, 1));
        ProcessWaiting.wakeIfCounted(words, 0);
        join(waiter);
        assertEquals(WaitStatus.COMPLETE, status.get());
        assertEquals(1, (int) VALUE.getVolatile(words, 0L), "a counted sleeper: the signal count was bumped");
    }

    @Test
    void aWaitWhoseWakesMayBeMissedSeesAnUnsignalledStoreWithinItsBoundedSleep() throws InterruptedException {
        assumeTrue(Futex.available(), "futex is not available here: the fallback's parks are bounded anyway");
        AtomicReference<WaitStatus> status = new AtomicReference<>();
        Thread waiter = stateWaiter(true, status);
        Teams.awaitTrue("the waiter counts itself", () -> ProcessWaiting.waiters(words, 0) == 1);
        long stored = System.nanoTime();
        VALUE.setRelease(words, 16L, 1);        // a solo arrival whose wake went missing: no bump, no FUTEX_WAKE
        waiter.join(TimeUnit.SECONDS.toMillis(2));
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stored);
        assertFalse(waiter.isAlive(), "a futex sleep that may miss its wake-up is bounded by 100 ms, yet the "
            + "waiter still sleeps " + tookMillis + " ms after the store (its deadline is " + PATIENCE / 1_000_000
            + " ms away)");
        assertEquals(WaitStatus.COMPLETE, status.get());
        assertEquals(0, (int) VALUE.getVolatile(words, 0L), "nothing signalled");
    }

    private static void awaitParkedInFallback(Thread t) {
        Teams.awaitTrue(t + " parks in the fallback path", () -> t.getState() == Thread.State.TIMED_WAITING
            && LockSupport.getBlocker(t) == ProcessWaiting.class);
    }

    @Test
    void wordsThatCannotHoldAValueAndACountAreRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> ProcessWaiting.wakeAll(words, 4));
        assertTrue(e.getMessage().contains("8-byte aligned: offset 4"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> ProcessWaiting.wakeAll(words, 60));
        assertTrue(e.getMessage().contains("offset 60 is outside the segment's 64 bytes"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> ProcessWaiting.wakeAll(words.asReadOnly(), 0));
        assertTrue(e.getMessage().contains("must be writable"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
            () -> ProcessWaiting.wakeAll(MemorySegment.ofArray(new long[8]), 0));
        assertTrue(e.getMessage().contains("native memory"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
            () -> ProcessWaiting.await(words, 0, v -> false, deadline(), false, 0, () -> { }));
        assertTrue(e.getMessage().contains("check interval must be positive, got 0"), e.getMessage());
    }

    /**
     * A second JVM maps the same file and waits in futex on one word; this one changes it and wakes, then waits
     * on the word the child changes in answer, checking that the child is alive as a caller checks for dead
     * processes. The child is always destroyed at the end.
     */
    @Test
    void wakesAWaiterInAnotherProcess(@TempDir Path dir) throws Exception {
        assumeTrue(Futex.available());
        Path file = dir.resolve("words");
        Files.write(file, new byte[ProcessWaitingChild.FILE_BYTES]);
        Path log = dir.resolve("child.log");
        Process child = new ProcessBuilder(ChildJvm.command(ProcessWaitingChild.class, file.toString()))
            .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
             Arena shared = Arena.ofShared()) {
            MemorySegment mapped = channel.map(FileChannel.MapMode.READ_WRITE, 0, ProcessWaitingChild.FILE_BYTES,
                shared);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (ProcessWaiting.waiters(mapped, ProcessWaitingChild.GO) != 1) {     // the child is past W1
                assertTrue(child.isAlive(), () -> "the child ended before it waited: " + output(log));
                assertTrue(System.nanoTime() - deadline < 0, () -> "the child never waited: " + output(log));
                LockSupport.parkNanos(1_000_000);
            }
            VALUE.setRelease(mapped, ProcessWaitingChild.GO, 1);
            ProcessWaiting.wakeAll(mapped, ProcessWaitingChild.GO);
            WaitStatus status = ProcessWaiting.await(mapped, ProcessWaitingChild.DONE, v -> v == 2, deadline, false,
                TimeUnit.MILLISECONDS.toNanos(50), () -> {
                    if (!child.isAlive() && (int) VALUE.getVolatile(mapped, ProcessWaitingChild.DONE) != 2) {
                        throw new AssertionError("the child exited " + child.exitValue() + " without answering: "
                            + output(log));
                    }
                });
            assertEquals(WaitStatus.COMPLETE, status, () -> output(log));
            assertTrue(child.waitFor(20, TimeUnit.SECONDS), () -> "the child did not exit: " + output(log));
            assertEquals(0, child.exitValue(), () -> output(log));
            assertFalse(output(log).contains("WARNING"), () -> "the child warned: " + output(log));
        } finally {
            child.destroyForcibly();
        }
    }

    private static String output(Path log) {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return "(no output: " + e + ")";
        }
    }
}
