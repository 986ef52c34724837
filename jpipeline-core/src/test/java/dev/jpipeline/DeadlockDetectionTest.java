package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
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
        String report = error.get().getMessage();
        assertTrue(report.startsWith("pipeline deadlock"), report);
        assertTrue(report.contains("rank 0 (producer) waits in producer_acquire for stage 1 (batch 3)"), report);
        assertTrue(report.contains("rank 1: its thread leaving-consumer has ended without quit()"), report);
        assertTrue(report.contains("stage 1: produced phase 1 has 0/1 commits, consumed phase 0 has 0/1 releases"),
            report);
    }

    @Test
    void slowButLivePeersAreNeverReported() {
        PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 1)
            .detectDeadlocks(Duration.ofMillis(10)).build();
        AtomicInteger delivered = new AtomicInteger();
        Teams.run(2, g -> {
            Pipeline pipe = Pipeline.make(g, state, 1);
            for (int b = 0; b < 5; b++) {
                if (g.threadRank() == 0) {
                    Teams.sleepMillis(60);          // much longer than the patience, but alive and running
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

    @Test
    void patienceMustBePositive() {
        assertThrows(IllegalArgumentException.class,
            () -> PipelineSharedState.builder(ThreadScope.BLOCK, 2).detectDeadlocks(Duration.ZERO));
    }
}
