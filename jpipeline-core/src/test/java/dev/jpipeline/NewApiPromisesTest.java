package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongPredicate;
import org.junit.jupiter.api.Test;

/**
 * The parts of issue 8's promises that need API added by the change (API-SPEC.md): the timed token waits of
 * {@link Barrier} ({@code tryWait}, {@code tryWaitFor}, {@code tryWaitUntil}) and {@link WaitStrategy} as an
 * interface that users can implement. This class does not compile against the code before the change; the
 * rest of the promises are in {@link BrokenPromisesTest}, which does.
 *
 * <p>As there, every sub-case runs bounded on a thread of its own and is described in words; a test compares
 * the list of outcomes with the promised one.
 */
class NewApiPromisesTest {

    private static final Duration QUICK = Duration.ofSeconds(2);

    // ---------------------------------------------------------------------------------------------------------
    // 12 (and "every wait honours deadlines"): the timed token waits

    // ---------------------------------------------------------------------------------------------------------
    // 14: the timed token waits check their tokens too

    // ---------------------------------------------------------------------------------------------------------
    // WaitStrategy as an interface

    @Test
    void waitStrategyIsAnInterfaceThatUsersCanPlugIn() {
        WaitStrategy[] builtIns = {WaitStrategy.BUSY_SPIN, WaitStrategy.YIELDING, WaitStrategy.ADAPTIVE,
            WaitStrategy.BLOCKING};
        for (WaitStrategy strategy : builtIns) {
            assertEquals(200, handOff(strategy, ThreadTeam.ofPlatform(2), 200), "hand-offs with " + strategy);
            assertEquals(200, handOff(strategy, ThreadTeam.ofVirtual(2), 200), "hand-offs with " + strategy);
        }
        assertEquals("platform: idle(0), idle(1), idle(2), idle(3) on the consumer, then parked; virtual: none",
            "platform: " + idleCalls(ThreadTeam.ofPlatform(2)) + "; virtual: " + idleCalls(ThreadTeam.ofVirtual(2)),
            "a custom strategy is called after each unsuccessful check (attempt counted from 0) on a platform "
                + "thread until it returns false, then the thread parks; a virtual thread parks at once");
    }

    /** Items handed from a producer to a consumer through a 2-stage ring waiting with {@code strategy}. */
    private static int handOff(WaitStrategy strategy, ThreadTeam team, int items) {
        PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 2).waitStrategy(strategy).build();
        int[] slots = new int[2];
        int[] received = new int[1];
        team.run(Teams.LIMIT, g -> {
            Pipeline pipe = Pipeline.make(g, state, PipelineRole.values()[g.threadRank()]);
            for (int i = 0; i < items; i++) {
                if (g.threadRank() == 0) {
                    pipe.producerAcquire();
                    slots[i % 2] = i;
                    pipe.producerCommit();
                } else {
                    pipe.consumerWait();
                    assertEquals(i, slots[i % 2], "item " + i);
                    received[0]++;
                    pipe.consumerRelease();
                }
            }
            pipe.quit();
        });
        return received[0];
    }

    /**
     * The consumer waits for batch 0 with a strategy that records its calls and gives up (parks) at attempt 3;
     * the producer commits once it sees the consumer parked.
     */
    private static String idleCalls(ThreadTeam team) {
        List<String> calls = new CopyOnWriteArrayList<>();
        AtomicReference<Thread> consumer = new AtomicReference<>();
        LongPredicate spinThrice = attempt -> attempt < 3;
        WaitStrategy recording = attempt -> {
            calls.add((Thread.currentThread() == consumer.get() ? "" : "(on another thread) ") + "idle(" + attempt
                + ")");
            return spinThrice.test(attempt);
        };
        PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 2).waitStrategy(recording).build();
        team.run(Teams.LIMIT, g -> {
            Pipeline pipe = Pipeline.make(g, state, PipelineRole.values()[g.threadRank()]);
            if (g.threadRank() == 1) {
                consumer.set(Thread.currentThread());
                g.sync();
                pipe.consumerWait();
                pipe.consumerRelease();
            } else {
                g.sync();
                Thread waiting = consumer.get();
                ThreadStates.awaitWaitingIn(waiting, "consumerWait");         // parked: the strategy gave up
                pipe.producerAcquire();
                pipe.producerCommit();
            }
            pipe.quit();
        });
        return calls.isEmpty() ? "none" : String.join(", ", calls.subList(0, Math.min(4, calls.size())))
            + (calls.size() >= 4 && calls.get(3).equals("idle(3)") ? " on the consumer, then parked"
            : " (" + calls.size() + " calls)");
    }
}
