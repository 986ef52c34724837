package dev.jpipeline;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Test support: runs a body on a thread of its own and waits for it a bounded time, so that a regression test
 * turns a hang into a one-line outcome ("still waiting after 2 s in PhaseBarrier.park < ...") instead of hanging.
 * A body describes what happened as a short string; the test compares outcomes with the promised ones, so that
 * one failure message lists every sub-case. Hung threads are daemons, parked where they hang.
 */
final class Bounded {

    /** What a body does; it returns its outcome in words. */
    @FunctionalInterface
    interface Body {
        String run() throws Exception;
    }

    /** A started body. */
    static final class Run {
        private final Thread thread;
        private final CountDownLatch done = new CountDownLatch(1);
        private final long start = System.nanoTime();
        private volatile String result;

        private Run(String name, Body body) {
            thread = Thread.ofPlatform().daemon().name(name).unstarted(() -> {
                try {
                    result = body.run();
                } catch (Throwable t) {
                    result = describe(t);
                } finally {
                    done.countDown();
                }
            });
        }

        /** The thread the body runs on. */
        Thread thread() {
            return thread;
        }

        /** The body's outcome, waiting up to {@code limit}; if it is still running, where it is. */
        String result(Duration limit) {
            return resultBy(System.nanoTime() + limit.toNanos());
        }

        /**
         * The body's outcome, waiting until {@code deadline} (a {@link System#nanoTime()} value), so that runs
         * started together can share one bound; if it is still running, for how long and where.
         */
        String resultBy(long deadline) {
            try {
                if (!done.await(deadline - System.nanoTime(), TimeUnit.NANOSECONDS)) {
                    return "still waiting after " + Teams.millisSince(start) + " ms in "
                        + ThreadStates.frames(thread, 3);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return "interrupted while waiting for " + thread.getName();
            }
            return result;
        }
    }

    private Bounded() {
    }

    /** Starts {@code body} on a new daemon platform thread called {@code name}. */
    static Run start(String name, Body body) {
        Run run = new Run(name, body);
        run.thread.start();
        return run;
    }

    /** Runs {@code body} on a thread called {@code name} and returns its outcome within {@code limit}. */
    static String outcome(String name, Duration limit, Body body) {
        return start(name, body).result(limit);
    }

    /** An exception in words: its simple class name and message. */
    static String describe(Throwable t) {
        return t.getClass().getSimpleName() + ": " + t.getMessage();
    }
}
