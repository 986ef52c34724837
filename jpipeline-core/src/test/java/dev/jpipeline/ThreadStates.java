package dev.jpipeline;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * Test support: orders threads by observing them, as the JSR-166 TCK's {@code waitForThreadToEnterWaitState}
 * does, never by sleeping. A thread "waits in" a method when its state is WAITING or TIMED_WAITING and its stack
 * holds a {@code dev.jpipeline} frame of that method (a frame, so that a park somewhere else, in a group sync
 * or a class-loading lock, does not count).
 */
public final class ThreadStates {

    /** How long a poll goes on before it fails: far longer than any state change these tests wait for. */
    static final Duration PATIENCE = Duration.ofSeconds(10);

    private ThreadStates() {
    }

    /** Whether {@code t} is parked (or timed-parked) inside {@code method} of a {@code dev.jpipeline} class. */
    static boolean isWaitingIn(Thread t, String method) {
        Thread.State state = t.getState();
        if (state != Thread.State.WAITING && state != Thread.State.TIMED_WAITING) {
            return false;
        }
        for (StackTraceElement e : t.getStackTrace()) {
            if (e.getMethodName().equals(method) && e.getClassName().startsWith("dev.jpipeline.")) {
                return true;
            }
        }
        return false;
    }

    /**
     * Polls until {@code t} waits in {@code method}.
     *
     * @throws AssertionError naming the thread's state and frames when it does not within {@link #PATIENCE}
     */
    static void awaitWaitingIn(Thread t, String method) {
        poll(t, "wait in " + method, () -> isWaitingIn(t, method));
    }

    /**
     * After {@code t} was interrupted while waiting in {@code method}: polls until it has taken the interrupt
     * (its status reads clear, as a wait that goes on must clear it in order to park again) and waits in
     * {@code method} again. A wait that returned on the interrupt, or spins with the status set, never gets
     * there.
     */
    static void awaitWaitingAgainAfterInterrupt(Thread t, String method) {
        poll(t, "take the interrupt and wait in " + method + " again",
            () -> !t.isInterrupted() && isWaitingIn(t, method));
    }

    private static void poll(Thread t, String what, java.util.function.BooleanSupplier condition) {
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        for (int i = 0; !condition.getAsBoolean(); i++) {
            if (!t.isAlive()) {
                throw new AssertionError(t.getName() + " ended instead of going on to " + what);
            }
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError(t.getName() + " did not " + what + " within " + PATIENCE + ": it is "
                    + t.getState() + " in " + frames(t, 4));
            }
            if (i < 100) {
                Thread.yield();
            } else {
                LockSupport.parkNanos(20_000);     // poll interval: leave the CPU to the thread observed
            }
        }
    }

    /** The top {@code n} frames outside java.* and jdk.*, for failure messages. */
    public static String frames(Thread t, int n) {
        List<String> frames = new ArrayList<>();
        for (StackTraceElement e : t.getStackTrace()) {
            if (!e.getClassName().startsWith("java.") && !e.getClassName().startsWith("jdk.")) {
                frames.add(e.getClassName().substring(e.getClassName().lastIndexOf('.') + 1) + "."
                    + e.getMethodName());
                if (frames.size() == n) {
                    break;
                }
            }
        }
        return frames.isEmpty() ? "(no frames of its own)" : String.join(" < ", frames);
    }
}
