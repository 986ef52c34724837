package dev.jpipeline.internal.process;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.jpipeline.Teams;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class FutexTest {

    private Arena arena;
    private MemorySegment words;

    @BeforeEach
    void words() {
        assumeTrue(Futex.available() || futexPlatform(), "futex is Linux on x86_64 or aarch64 only");
        arena = Arena.ofShared();
        words = arena.allocate(64, 8);
    }

    @AfterEach
    void free() {
        if (arena != null) {
            arena.close();
        }
    }

    /** Where futex must work: a failure to link it there is a bug (or a missing --enable-native-access). */
    private static boolean futexPlatform() {
        String arch = System.getProperty("os.arch");
        return System.getProperty("os.name").toLowerCase(Locale.ROOT).startsWith("linux")
            && (arch.equals("amd64") || arch.equals("x86_64") || arch.equals("aarch64"));
    }

    /**
     * Surefire's argLine must grant native access to the module the tests run in (dev.jpipeline.core on the
     * module path): else the JVM warns when Futex links. Module.isNativeAccessEnabled() cannot tell, as the JVM
     * enables a module after its first warning; the command line can.
     */
    @Test
    void nativeAccessIsGrantedToTheModuleOnTheCommandLine() {
        Module module = Futex.class.getModule();
        String granted = module.isNamed() ? module.getName() : "ALL-UNNAMED";
        List<String> args = ProcessHandle.current().info().arguments().map(List::of).orElse(List.of());
        assumeTrue(!args.isEmpty(), "this OS does not show a process's arguments");
        assertTrue(args.stream().filter(a -> a.startsWith("--enable-native-access="))
                .flatMap(a -> Arrays.stream(a.substring(a.indexOf('=') + 1).split(",")))
                .anyMatch(granted::equals),
            "no --enable-native-access=" + granted + " in the test JVM's arguments " + args);
    }

    @Test
    void availableOnLinuxX64AndAarch64() {
        assumeTrue(futexPlatform());
        assertTrue(Futex.available(), Futex.unavailableReason());
        assertNull(Futex.unavailableReason());
    }

    @Test
    void waitOnAChangedWordReturnsAtOnce() {
        words.set(JAVA_INT, 8, 7);
        assertEquals(Futex.WaitOutcome.VALUE_CHANGED, Futex.wait(words, 8, 6, Futex.NO_TIMEOUT));
    }

    @Test
    void waitTimesOut() {
        long start = System.nanoTime();
        assertEquals(Futex.WaitOutcome.TIMED_OUT, Futex.wait(words, 4, 0, TimeUnit.MILLISECONDS.toNanos(20)));
        assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(20), "returned before the timeout");
        assertEquals(Futex.WaitOutcome.TIMED_OUT, Futex.wait(words, 4, 0, 0), "a zero timeout only compares");
    }

    @Test
    void wakeWithNobodyWaitingWakesNone() {
        assertEquals(0, Futex.wake(words, 0, Integer.MAX_VALUE));
    }

    /**
     * A thread in a futex wait is in native code, where {@link Thread#getState()} reads RUNNABLE, the same as
     * just before the call: the state cannot tell that it sleeps. The wake's own count can: it is 1 only once the
     * waiter is queued in the kernel, and the waiter cannot leave before (the word keeps its value, the timeout
     * is far away). So the test retries the wake, bounded, after the waiter's flag says it is about to call.
     */
    @Test
    void wakeWakesAThreadAsleepInTheKernel() throws InterruptedException {
        AtomicReference<Futex.WaitOutcome> outcome = new AtomicReference<>();
        AtomicBoolean calling = new AtomicBoolean();
        Thread waiter = Thread.ofPlatform().name("futex-waiter").start(() -> {
            calling.set(true);
            outcome.set(Futex.wait(words, 0, 0, TimeUnit.SECONDS.toNanos(20)));
        });
        Teams.awaitTrue("the waiter is about to call futex", calling::get);
        long deadline = System.nanoTime() + Teams.PATIENCE.toNanos();
        int woken;
        while ((woken = Futex.wake(words, 0, 1)) == 0) {
            assertTrue(System.nanoTime() - deadline < 0, "the waiter never got queued in the kernel");
            assertTrue(waiter.isAlive(), "the waiter left its futex wait unwoken: " + outcome.get());
            LockSupport.parkNanos(20_000);
        }
        assertEquals(1, woken);
        waiter.join(Teams.PATIENCE.toMillis());
        assertEquals(Futex.WaitOutcome.WOKEN, outcome.get());
    }

    @Test
    void wordsOutsideNativeAlignedMemoryAreRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> Futex.wait(words, 2, 0, 0));
        assertTrue(e.getMessage().contains("4-byte aligned: offset 2"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Futex.wake(words, 64, 1));
        assertTrue(e.getMessage().contains("offset 64 is outside the segment's 64 bytes"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Futex.wake(words, -4, 1));
        assertTrue(e.getMessage().contains("offset -4"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Futex.wake(MemorySegment.ofArray(new int[4]), 0, 1));
        assertTrue(e.getMessage().contains("native memory"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Futex.wait(words, 0, 0, -1));
        assertTrue(e.getMessage().contains("got -1"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Futex.wake(words, 0, 0));
        assertTrue(e.getMessage().contains("1 or more, got 0"), e.getMessage());
    }
}
