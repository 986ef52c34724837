package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
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
}
