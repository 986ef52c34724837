package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/** The opt-in hang diagnosis of the core library. */
class DeadlockDetectionTest {

    @Test
    void aThreadThatEndsWithoutQuittingIsReportedInsteadOfHangingItsPeers() throws Exception {
        PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 2)
            .detectDeadlocks(Duration.ofMillis(50)).build();
        ThreadTeam team = ThreadTeam.ofPlatform(2);
        Thread consumer = Thread.ofPlatform().name("leaving-consumer").start(() -> {
            Pipeline pipe = Pipeline.make(team.member(1), state, 1);
            pipe.consumerWait();
            pipe.consumerRelease();
            // ends without quit(): the producer will wait for a release that never comes
        });
        AtomicReference<IllegalStateException> error = new AtomicReference<>();
        Thread producerThread = Thread.ofPlatform().start(() -> {
            Pipeline producer = Pipeline.make(team.member(0), state, 1);
            try {
                for (int b = 0; b < 10; b++) {
                    producer.producerAcquire();
                    producer.producerCommit();
                }
            } catch (IllegalStateException e) {
                error.set(e);
            }
        });
        consumer.join(10_000);
        producerThread.join(10_000);
        assertNotNull(error.get(), "the producer must be told instead of hanging");
        // the consumer's ended thread counts as quit: the producer is told that no consumer is left, and why
        String message = error.get().getMessage();
        assertTrue(message.startsWith("producer_acquire can never return: no consumer is left to release stage 1 "
            + "(batch 1)"), message);
        assertTrue(message.contains("rank 1 (consumer)'s thread 'leaving-consumer' ended without quit()"), message);
    }

    @Test
    void slowButLivePeersAreNeverReported() {
        PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 1)
            .detectDeadlocks(Duration.ofMillis(10)).build();
        AtomicInteger delivered = new AtomicInteger();
        Teams.runSeeingPeers(2, (g, threads) -> {
            Pipeline pipe = Pipeline.make(g, state, 1);
            for (int b = 0; b < 5; b++) {
                if (g.threadRank() == 0) {
                    int taken = b;
                    Teams.awaitTrue("the consumer takes batch " + (b - 1), () -> delivered.get() == taken);
                    Teams.awaitParked(threads[1], "consumerWait");     // the consumer waits for batch b...
                    // ...while this thread stays away much longer than the patience, alive. A sleep kept on
                    // purpose: the delay itself is under test, and no observation can stand in for elapsed time
                    stayAway(Duration.ofMillis(60));
                    pipe.producerAcquire();
                    pipe.producerCommit();
                } else {
                    pipe.consumerWait();
                    delivered.incrementAndGet();
                    pipe.consumerRelease();
                }
            }
            pipe.quit();
        });
        assertEquals(5, delivered.get());
    }

    /** Keeps the calling thread busy elsewhere (not in any jpipeline wait) for {@code time}. */
    private static void stayAway(Duration time) {
        long deadline = System.nanoTime() + time.toNanos();
        for (long left; (left = deadline - System.nanoTime()) > 0; ) {
            LockSupport.parkNanos(left);
        }
    }

    @Test
    void patienceMustNotBeNegativeAndZeroTurnsDetectionOff() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> PipelineSharedState.builder(ThreadScope.BLOCK, 2).detectDeadlocks(Duration.ofNanos(-1)));
        assertTrue(e.getMessage().contains("must not be negative"), e.getMessage());
        assertEquals(Duration.ZERO,
            PipelineSharedState.builder(ThreadScope.BLOCK, 2).detectDeadlocks(Duration.ZERO).build().hangPatience());
        assertEquals(Duration.ofSeconds(1), PipelineSharedState.create(ThreadScope.BLOCK, 2).hangPatience(),
            "on by default");
    }
}
