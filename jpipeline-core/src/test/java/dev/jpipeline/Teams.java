package dev.jpipeline;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/** Test support: bounded team runs and small helpers, so that a bug fails a test instead of hanging it. */
final class Teams {

    static final Duration LIMIT = Duration.ofSeconds(30);

    private Teams() {
    }

    static void run(int size, Consumer<Group> body) {
        ThreadTeam.ofPlatform(size).run(LIMIT, body);
    }

    static void sleepMillis(long millis) {
        long deadline = System.nanoTime() + millis * 1_000_000;
        for (long left; (left = deadline - System.nanoTime()) > 0; ) {
            LockSupport.parkNanos(left);
        }
    }

    static void sleepMicros(long micros) {
        LockSupport.parkNanos(micros * 1_000);
    }

    static long millisSince(long startNanos) {
        return (System.nanoTime() - startNanos) / 1_000_000;
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
}
