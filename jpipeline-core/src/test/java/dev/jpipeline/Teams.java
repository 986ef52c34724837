package dev.jpipeline;

import dev.jpipeline.internal.wait.Waitable;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * Test support: bounded team runs and small helpers, so that a bug fails a test instead of hanging it.
 *
 * <p>Tests order threads by observing them, never by sleeping: {@link #awaitParked} waits until a thread is parked
 * in jpipeline's one wait routine, {@link #await(CountDownLatch, String)} and {@link #awaitTrue} until another
 * thread got somewhere. Every one of these waits is bounded by {@link #PATIENCE} and fails with a message that
 * says what was awaited (and, for a thread, where it is instead).
 */
public final class Teams {

    public static final Duration LIMIT = Duration.ofSeconds(30);
    /** How long an observation waits before the test fails: well inside {@link #LIMIT}, so that its message wins. */
    public static final Duration PATIENCE = Duration.ofSeconds(10);

    private Teams() {
    }

    public static void run(int size, Consumer<Group> body) {
        ThreadTeam.ofPlatform(size).run(LIMIT, body);
    }

    /**
     * {@link #run} whose members see each other's threads ({@code threads[rank]}), so that one may
     * {@link #awaitParked} another. The threads are published, and the members meet once, before any body runs.
     */
    public static void runSeeingPeers(int size, BiConsumer<Group, Thread[]> body) {
        Thread[] threads = new Thread[size];
        run(size, g -> {
            threads[g.threadRank()] = Thread.currentThread();
            g.sync();
            body.accept(g, threads);
        });
    }

    /**
     * Waits until {@code t} is parked in jpipeline's one wait routine (its park blocker is a {@link Waitable}) in a
     * call of a method named {@code in} ({@code "consumerWait"}, {@code "producerAcquire"}, ...), so that a test
     * acts only once the thread has got there first.
     *
     * <p>With the default {@code ADAPTIVE} strategy a platform thread spins for some
     * microseconds before it parks; a virtual thread parks at once. A thread that is woken is reported as waiting
     * until it runs again, so a thread must have run past its earlier waits before it is observed in a later one:
     * the method name (and, where the same method is waited in twice, a flag or latch set in between) tells the
     * waits apart.
     *
     * @throws AssertionError when {@code t} is not parked there within {@link #PATIENCE}
     */
    public static void awaitParked(Thread t, String in) {
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        for (int polls = 0; !parkedIn(t, in); polls++) {
            if (!t.isAlive() || System.nanoTime() - deadline > 0) {
                throw new AssertionError("thread '" + t.getName() + "' did not park in a jpipeline wait"
                    + (in == null ? "" : " in " + in) + " within " + PATIENCE + ": " + whereIs(t));
            }
            backOff(polls);
        }
    }

    /** {@link #awaitParked(Thread, String)} for a thread that waits in one place only: any jpipeline wait. */
    public static void awaitParked(Thread t) {
        awaitParked(t, null);
    }

    private static boolean parkedIn(Thread t, String in) {
        if (!parked(t)) {
            return false;
        }
        if (in != null && !onStack(t, in)) {
            return false;
        }
        return parked(t);           // still parked after the stack was taken: it was parked there
    }

    private static boolean parked(Thread t) {
        Thread.State state = t.getState();
        return (state == Thread.State.WAITING || state == Thread.State.TIMED_WAITING)
            && LockSupport.getBlocker(t) instanceof Waitable;
    }

    private static boolean onStack(Thread t, String method) {
        for (StackTraceElement e : t.getStackTrace()) {
            if (e.getMethodName().equals(method)) {
                return true;
            }
        }
        return false;
    }

    private static String whereIs(Thread t) {
        StringBuilder b = new StringBuilder(t.getState() + ", blocker " + LockSupport.getBlocker(t));
        for (StackTraceElement e : t.getStackTrace()) {
            b.append("\n\tat ").append(e);
        }
        return b.toString();
    }

    /**
     * Waits (bounded) until {@code condition} holds: for a fact another thread publishes (a flag, a counter, its
     * interrupt status).
     *
     * @throws AssertionError when it does not hold within {@link #PATIENCE}
     */
    public static void awaitTrue(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        for (int polls = 0; !condition.getAsBoolean(); polls++) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("not within " + PATIENCE + ": " + what);
            }
            backOff(polls);
        }
    }

    /**
     * Waits (bounded) for {@code latch}, which another thread counts down once it got somewhere.
     *
     * @throws AssertionError when it is not open within {@link #PATIENCE}, or the wait is interrupted
     */
    public static void await(CountDownLatch latch, String what) {
        try {
            if (!latch.await(PATIENCE.toNanos(), TimeUnit.NANOSECONDS)) {
                throw new AssertionError("not within " + PATIENCE + ": " + what);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting until " + what, e);
        }
    }

    /**
     * Between two polls of an observation: spin and yield at first (the observed thread is usually about to get
     * there), then park a tenth of a millisecond at a time, so that a long poll leaves the cores to the threads
     * it waits for. A poll interval, not a delay that orders anything.
     */
    private static void backOff(int polls) {
        if (polls < 64) {
            Thread.onSpinWait();
        } else if (polls < 256) {
            Thread.yield();
        } else {
            LockSupport.parkNanos(100_000);
        }
    }

    static long millisSince(long startNanos) {
        return (System.nanoTime() - startNanos) / 1_000_000;
    }

    /**
     * A server-style consumer loop: {@code consumerWaitFor(20 ms)} again and again, for at most {@code limitMillis}.
     *
     * @return "delivered after N ms" when a wait returned true, "still polling after N ms" at the limit, or the
     *         IllegalStateException a wait threw
     */
    static Object pollWaits(Pipeline pipe, long limitMillis) {
        long start = System.nanoTime();
        try {
            while (millisSince(start) < limitMillis) {
                if (pipe.consumerWaitFor(Duration.ofMillis(20))) {
                    return "delivered after " + millisSince(start) + " ms";
                }
            }
            return "still polling after " + limitMillis + " ms";
        } catch (IllegalStateException e) {
            return e;
        }
    }

    /**
     * Outstanding (committed, unreleased) batches of a thread-scope pipeline, read from its diagnostic
     * {@code toString()} ("Pipeline[THREAD, committed H, released T]").
     */
    static long outstanding(Pipeline threadScope) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("committed (\\d+), released (\\d+)")
            .matcher(threadScope.toString());
        if (!m.find()) {
            throw new AssertionError("not a thread-scope pipeline: " + threadScope);
        }
        return Long.parseLong(m.group(1)) - Long.parseLong(m.group(2));
    }

    /** A single-thread group written by hand, as CUDA code may define its own ThreadGroup. */
    static Group soloGroup() {
        return new Group() {
            @Override
            public int size() {
                return 1;
            }

            @Override
            public int threadRank() {
                return 0;
            }

            @Override
            public void sync() {
            }
        };
    }

    /** {@code g}, whose {@code n}th sync runs {@code then} once it returns (a group that fails after a sync). */
    static Group afterSync(Group g, int n, Runnable then) {
        return hookedSync(g, n, () -> { }, then);
    }

    /** {@code g}, whose {@code n}th sync runs {@code first} before it syncs (a rank that dies between syncs). */
    static Group beforeSync(Group g, int n, Runnable first) {
        return hookedSync(g, n, first, () -> { });
    }

    private static Group hookedSync(Group g, int n, Runnable before, Runnable after) {
        AtomicInteger syncs = new AtomicInteger();
        return new Group() {
            @Override
            public int size() {
                return g.size();
            }

            @Override
            public int threadRank() {
                return g.threadRank();
            }

            @Override
            public void sync() {
                boolean nth = syncs.incrementAndGet() == n;
                if (nth) {
                    before.run();
                }
                g.sync();
                if (nth) {
                    after.run();
                }
            }
        };
    }
}
