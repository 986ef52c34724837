package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.StringJoiner;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/** Conformance scenarios 24-28 (libcudacxx-pipeline-semantics.md §15 C: timed waits). */
class ConformanceTimedWaitTest {

    /** Runs a 1-producer, 1-consumer pipeline; the producer commits {@code commits} batches first. */
    private static void producerThenConsumer(int commits, Consumer<Pipeline> consumer) {
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 4);
        Teams.run(2, g -> {
            Pipeline pipe = Pipeline.make(g, state, 1);
            if (g.threadRank() == 0) {
                for (int b = 0; b < commits; b++) {
                    pipe.producerAcquire();
                    pipe.producerCommit();
                }
            }
            g.sync();
            if (g.threadRank() == 1) {
                consumer.accept(pipe);
            }
            g.sync();
            pipe.quit();
        });
    }

    @Test
    void s24_timedWaitOnNothingTimesOut() {
        AtomicLong elapsed = new AtomicLong();
        producerThenConsumer(0, pipe -> {
            long start = System.nanoTime();
            assertFalse(pipe.consumerWaitFor(Duration.ofMillis(50)));
            elapsed.set(System.nanoTime() - start);
        });
        assertTrue(elapsed.get() >= 50_000_000L, "returned before the timeout: " + elapsed.get() + " ns");
        assertTrue(elapsed.get() < 2_000_000_000L, "returned far after the timeout: " + elapsed.get() + " ns");
    }

    @Test
    void s25_readyStageReturnsTrueAtOnce() {
        producerThenConsumer(1, pipe -> {
            long start = System.nanoTime();
            assertTrue(pipe.consumerWaitFor(Duration.ZERO));
            assertTrue(pipe.consumerWaitFor(Duration.ofNanos(1)));
            assertTrue(Teams.millisSince(start) < 1000);
            pipe.consumerRelease();
        });
    }

    @Test
    void s26_pastDeadline() {
        producerThenConsumer(1, pipe -> {
            assertTrue(pipe.consumerWaitUntil(Instant.now().minusSeconds(5)), "ready: true even when past");
            pipe.consumerRelease();
            long start = System.nanoTime();
            assertFalse(pipe.consumerWaitUntil(Instant.now().minusSeconds(5)), "not ready: false");
            assertTrue(Teams.millisSince(start) < 1000, "a past deadline must not wait");
        });
    }

    /**
     * Deliberate difference: CUDA's consumer_wait_for(0ns) on a stage that is not ready waits forever (zero
     * means "no timeout" there). jpipeline follows Java: a zero timeout polls once and returns false.
     */
    @Test
    void s27_zeroTimeoutPollsOnce() {
        producerThenConsumer(0, pipe -> {
            long start = System.nanoTime();
            assertFalse(pipe.consumerWaitFor(Duration.ZERO));
            assertFalse(pipe.consumerWaitFor(Duration.ofMillis(-1)));
            assertTrue(Teams.millisSince(start) < 1000);
        });
    }

    @Test
    void s28_timedWaitDoesNotRelease() {
        producerThenConsumer(1, pipe -> {
            assertTrue(pipe.consumerWaitFor(Duration.ofSeconds(10)));
            long start = System.nanoTime();
            pipe.consumerWait();
            assertTrue(pipe.consumerWaitFor(Duration.ofMillis(20)), "still the same, ready stage");
            assertTrue(Teams.millisSince(start) < 1000);
            pipe.consumerRelease();
            assertFalse(pipe.consumerWaitFor(Duration.ofMillis(20)), "the next stage was never committed");
        });
    }

    /** Issue 8, promise 12: timeouts of a few nanoseconds. */
    @Test
    void timeoutsOfAFewNanosecondsOnAPendingPhaseOrStageReturnFalse() {
        long[] nanos = {1, 100, 200, 1000};
        List<Bounded.Run> parityWaits = new ArrayList<>();
        for (long n : nanos) {
            parityWaits.add(Bounded.start("p12-parity-" + n, () -> {
                Barrier pending = new Barrier(2);
                return String.valueOf(pending.tryWaitParity(false, Duration.ofNanos(n)));
            }));
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(2).toNanos();
        StringJoiner barrier = new StringJoiner(", ");
        for (int i = 0; i < nanos.length; i++) {
            barrier.add(nanos[i] + " ns: " + parityWaits.get(i).resultBy(deadline));
        }
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 2);
        CountDownLatch done = new CountDownLatch(1);
        String stage = Bounded.eachRank(2, Duration.ofSeconds(5), g -> {
            if (g.threadRank() == 0) {
                Pipeline pipe = Pipeline.make(g, state, PipelineRole.PRODUCER);
                done.await(10, TimeUnit.SECONDS);                  // commits nothing: stage 0 stays pending
                pipe.quit();
                return "idle producer";
            }
            Pipeline pipe = Pipeline.make(g, state, PipelineRole.CONSUMER);
            try {
                StringJoiner waits = new StringJoiner(", ");
                for (long n : nanos) {
                    waits.add(n + " ns: " + pipe.consumerWaitFor(Duration.ofNanos(n)));
                }
                return waits.toString();
            } finally {
                done.countDown();
            }
        });
        assertEquals(List.of("tryWaitParity: 1 ns: false, 100 ns: false, 200 ns: false, 1000 ns: false",
                "consumerWaitFor: rank 0: idle producer | rank 1: 1 ns: false, 100 ns: false, 200 ns: false, "
                    + "1000 ns: false"),
            List.of("tryWaitParity: " + barrier, "consumerWaitFor: " + stage),
            "a timeout of 1 ns .. 1 us on a pending phase or stage must return false (its deadline passes at once)");
    }
}
