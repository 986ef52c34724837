package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The {@code *Interruptibly} calls follow java.util.concurrent: a thread whose interrupt status is set on entry gets
 * an InterruptedException (status cleared) even where the call need not wait (a free stage, a ready one), so that a
 * cancel by interrupt reaches the next interruptible call whatever the timing.
 */
class InterruptiblyOnEntryTest {

    @Test
    void anInterruptSetOnEntryThrowsOnAFreeStageAndOnAReadyOne() {
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 2);
        AtomicReference<String> seen = new AtomicReference<>("");
        ThreadTeam.ofPlatform(2).run(Duration.ofSeconds(10), g -> {
            try (Pipeline pipe = Pipeline.make(g, state, 1)) {
                if (g.threadRank() == 0) {
                    Thread.currentThread().interrupt();
                    assertThrows(InterruptedException.class, pipe::producerAcquireInterruptibly, "a free stage");
                    assertFalse(Thread.currentThread().isInterrupted(), "the status is cleared");
                    pipe.producerAcquire();                 // not acquired by the call that threw
                    pipe.producerCommit();
                    g.sync();
                } else {
                    g.sync();                               // batch 0 is committed: ready
                    Thread.currentThread().interrupt();
                    assertThrows(InterruptedException.class, pipe::consumerWaitInterruptibly, "a ready stage");
                    assertFalse(Thread.currentThread().isInterrupted(), "the status is cleared");
                    pipe.consumerWait();
                    pipe.consumerRelease();
                    seen.set("released");
                }
            }
        });
        assertEquals("released", seen.get());
    }
}
