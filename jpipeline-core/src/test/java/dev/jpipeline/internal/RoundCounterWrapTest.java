package dev.jpipeline.internal;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.jpipeline.CopyPolicy;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.WaitStrategy;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The round counters never wrap: after 2^31 rounds (2^31 * S batches; with one stage about a minute of fast
 * hand-offs) an int round would turn negative, and with it the batch numbers that bound the waits and the
 * look-ahead: the consumer would return from consumer_wait for batches never committed, the producer would acquire
 * stages nobody released. The rounds are longs; the barriers get their low 32 bits, compared modulo 2^23.
 *
 * The state is fast-forwarded to the last round before 2^31 (handle cursors and barrier words set consistently:
 * batches 0 .. 2^31 - 2 produced and consumed), then the pipeline is driven through its operations.
 */
class RoundCounterWrapTest {

    private static final int ROUND = Integer.MAX_VALUE;     // the last round before an int would wrap

    private final ExecutorService producerThread = Executors.newSingleThreadExecutor();
    private final ExecutorService consumerThread = Executors.newSingleThreadExecutor();

    @AfterEach
    void stop() {
        producerThread.shutdownNow();
        consumerThread.shutdownNow();
    }

    private static <T> T on(ExecutorService thread, Callable<T> task) throws Exception {
        return thread.submit(task).get(10, TimeUnit.SECONDS);
    }

    /** Barrier word of phase {@code round} (mod 2^23), 1 expected, 0 arrived. */
    private static void atPhase(PhaseBarrier b, int round) {
        b.words()[b.wordIndex()] = ((long) (round & PhaseBarrier.PHASE_MASK) << 41) | (1L << 20);
    }

    private StageRing ring() {
        StageRing ring = StageRing.inHeap(StageRing.Kind.BY_ROLE, 2, 1, 1, new PipelineSettings(ThreadScope.BLOCK, 1,
            WaitStrategy.ADAPTIVE, null, null, 0, CopyPolicy.AUTO, null));
        atPhase(ring.produced.groups[0][0], ROUND);    // batches 0 .. ROUND - 1 committed
        atPhase(ring.consumed.groups[0][0], ROUND);    // and released
        return ring;
    }

    @Test
    void theConsumerStillWaitsForUncommittedBatchesAfterRound2To31() throws Exception {
        StageRing ring = ring();
        StageHandle producer = on(producerThread, () -> {
            StageHandle h = new StageHandle(ring, 0, true, 0);
            h.headRound = ROUND;
            return h;
        });
        StageHandle consumer = on(consumerThread, () -> {
            StageHandle h = new StageHandle(ring, 1, false, 0);
            h.tailRound = ROUND;
            return h;
        });
        on(producerThread, () -> {
            producer.producerAcquire();
            producer.producerCommit();          // batch 2^31 - 1: the last of round ROUND
            return null;
        });
        on(consumerThread, () -> {
            consumer.consumerWait();
            consumer.consumerRelease();         // tailRound becomes 2^31
            return null;
        });
        // the producer has committed nothing more: batch 2^31 is not ready
        boolean ready = on(consumerThread, () -> consumer.consumerWaitFor(Duration.ofMillis(100)));
        assertFalse(ready, "consumer_wait_for returned true for batch 2^31, which no producer committed");
    }

    @Test
    void theProducerStillWaitsForUnreleasedStagesAfterRound2To31() throws Exception {
        StageRing ring = ring();
        StageHandle producer = on(producerThread, () -> {
            StageHandle h = new StageHandle(ring, 0, true, 0);
            h.headRound = ROUND;
            return h;
        });
        on(producerThread, () -> {
            producer.producerAcquire();
            producer.producerCommit();          // batch 2^31 - 1 into stage 0; no consumer has read it
            return null;
        });
        Future<?> acquire = producerThread.submit(() -> {
            producer.producerAcquireInterruptibly();    // stage 0 again: must wait for the release of 2^31 - 1
            return null;
        });
        assertThrows(TimeoutException.class, () -> acquire.get(200, TimeUnit.MILLISECONDS),
            "producer_acquire returned a stage whose batch no consumer has released");
        acquire.cancel(true);                   // the interrupt ends the wait
    }
}
