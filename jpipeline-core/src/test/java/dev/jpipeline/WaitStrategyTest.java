package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import java.util.stream.Stream;
import org.junit.jupiter.params.provider.MethodSource;

/** Every wait strategy, on both sides of a small ring, on platform and virtual threads. */
class WaitStrategyTest {

    private static long handOff(WaitStrategy strategy, boolean virtual, int items) {
        PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 2).waitStrategy(strategy).build();
        long[] slots = new long[2];
        AtomicLong sum = new AtomicLong();
        ThreadTeam team = virtual ? ThreadTeam.ofVirtual(2) : ThreadTeam.ofPlatform(2);
        team.run(Teams.LIMIT, g -> {
            Pipeline pipe = Pipeline.make(g, state, 1);
            long local = 0;
            for (int i = 0; i < items; i++) {
                if (g.threadRank() == 0) {
                    pipe.producerAcquire();           // a full ring: the producer waits too
                    slots[i % 2] = i;
                    pipe.producerCommit();
                } else {
                    pipe.consumerWait();
                    local += slots[i % 2];
                    pipe.consumerRelease();
                }
            }
            sum.addAndGet(local);
            pipe.quit();
        });
        return sum.get();
    }

    static Stream<WaitStrategy> strategies() {
        WaitStrategy custom = attempt -> {          // a user's own: spin a while, then park
            Thread.onSpinWait();
            return attempt < 2_000;
        };
        return Stream.of(WaitStrategy.BUSY_SPIN, WaitStrategy.YIELDING, WaitStrategy.ADAPTIVE, WaitStrategy.BLOCKING,
            custom);
    }

    @ParameterizedTest
    @MethodSource("strategies")
    void everyStrategyHandsOffEveryItem(WaitStrategy strategy) {
        int items = 20_000;
        assertEquals((long) items * (items - 1) / 2, handOff(strategy, false, items));
        assertEquals(1000L * 999 / 2, handOff(strategy, true, 1000));
    }

    @ParameterizedTest
    @MethodSource("strategies")
    void everyStrategyHonoursTimeLimits(WaitStrategy strategy) {
        PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 2).waitStrategy(strategy).build();
        Teams.run(2, g -> {
            Pipeline pipe = Pipeline.make(g, state, 1);
            if (g.threadRank() == 1) {
                long start = System.nanoTime();
                assertFalse(pipe.consumerWaitFor(Duration.ofMillis(30)));
                long elapsed = System.nanoTime() - start;
                assertTrue(elapsed >= 30_000_000L && elapsed < 5_000_000_000L, strategy + ": " + elapsed);
            }
            g.sync();                                 // the producer stays until the consumer has timed out
            pipe.quit();
        });
    }

    @Test
    void theDefaultIsAdaptive() {
        assertEquals(WaitStrategy.ADAPTIVE, PipelineSharedState.create(ThreadScope.BLOCK, 2).waitStrategy());
    }
}
