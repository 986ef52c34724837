package dev.jpipeline;

import java.time.Duration;
import java.util.StringJoiner;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Test support: runs a body on a thread of its own and waits for it a bounded time, so that a regression test
 * turns a hang into a one-line outcome ("still waiting after 2 s in PhaseBarrier.park < ...") instead of hanging.
 * A body describes what happened as a short string; the test compares outcomes with the promised ones, so that
 * one failure message lists every sub-case. Hung threads are daemons, parked where they hang.
 */
public final class Bounded {

    /** What a body does; it returns its outcome in words. */
    @FunctionalInterface
    public interface Body {
        String run() throws Exception;
    }

    /** One rank's sub-case; returns its outcome in words. */
    @FunctionalInterface
    interface RankBody {
        String run(Group group) throws Exception;
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
    public static String outcome(String name, Duration limit, Body body) {
        return start(name, body).result(limit);
    }

    /** An exception in words: its simple class name and message. */
    public static String describe(Throwable t) {
        return t.getClass().getSimpleName() + ": " + t.getMessage();
    }

    /**
     * Runs {@code body} on every rank of a platform team of {@code size}, bounded by {@code limit}; returns
     * "rank 0: outcome | rank 1: outcome ..." (an exception is an outcome), followed by the team's hang report
     * if some rank did not finish.
     */
    static String eachRank(int size, Duration limit, RankBody body) {
        AtomicReferenceArray<String> results = new AtomicReferenceArray<>(size);
        String hang = "";
        try {
            ThreadTeam.ofPlatform(size).run(limit, g -> {
                String result;
                try {
                    result = body.run(g);
                } catch (Throwable t) {
                    result = describe(t);
                }
                results.set(g.threadRank(), result);
            });
        } catch (ThreadTeam.TeamFailure f) {
            hang = " | " + f.getMessage();
        }
        StringJoiner all = new StringJoiner(" | ");
        for (int rank = 0; rank < size; rank++) {
            all.add("rank " + rank + ": " + (results.get(rank) == null ? "no outcome" : results.get(rank)));
        }
        return all + hang;
    }
}
