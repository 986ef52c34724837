package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongPredicate;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
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
                    assertEquals(i, slots[i % 2], "item " + i);
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

    /**
     * Issue 8: {@link WaitStrategy} is an interface that users can implement, and the built-in strategies are such
     * strategies. A strategy is called after each unsuccessful check (attempt counted from 0) on a platform thread
     * until it returns false, then the thread parks; a virtual thread parks at once.
     */
    @Test
    void aStrategyIsCalledAfterEachFailedCheckUntilItGivesUpThenThePlatformThreadParks() {
        WaitStrategy[] builtIns = {WaitStrategy.BUSY_SPIN, WaitStrategy.YIELDING, WaitStrategy.ADAPTIVE,
            WaitStrategy.BLOCKING};
        for (WaitStrategy strategy : builtIns) {
            assertEquals(200L * 199 / 2, handOff(strategy, false, 200), "hand-offs with " + strategy);
            assertEquals(200L * 199 / 2, handOff(strategy, true, 200), "hand-offs with " + strategy);
        }
        assertEquals("platform: idle(0), idle(1), idle(2), idle(3) on the consumer, then parked; virtual: none",
            "platform: " + idleCalls(ThreadTeam.ofPlatform(2)) + "; virtual: " + idleCalls(ThreadTeam.ofVirtual(2)),
            "a custom strategy is called after each unsuccessful check (attempt counted from 0) on a platform "
                + "thread until it returns false, then the thread parks; a virtual thread parks at once");
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

    /**
     * A strategy whose idle() parks 2 ms (a "brief" idle by the interface's contract, and what the Disruptor's
     * SleepingWaitStrategy does): the wait used to read the clock only every 256 idle attempts, so that
     * consumerWaitFor(20 ms) returned after about 512 ms, and interrupts and stall checks were delayed by the same
     * factor.
     */
    @Test
    void aTimedWaitHonoursItsDeadlineUnderASleepingStrategy() {
        assertTimeoutPreemptively(Teams.LIMIT, () -> {
            WaitStrategy sleeping = attempt -> {
                LockSupport.parkNanos(2_000_000);
                return true;
            };
            PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 2).waitStrategy(sleeping)
                .detectDeadlocks(Duration.ZERO).build();
            CountDownLatch consumerDone = new CountDownLatch(1);
            AtomicReference<Long> waitedMillis = new AtomicReference<>();
            ThreadTeam.ofPlatform(2).run(Teams.LIMIT, g -> {
                Pipeline pipe = Pipeline.make(g, state, 1);
                if (g.threadRank() == 0) {
                    pipe.producerAcquire();             // alive, never commits while the consumer measures
                    try {
                        consumerDone.await();
                    } catch (InterruptedException e) {
                        throw new AssertionError(e);
                    }
                    pipe.producerCommit();
                } else {
                    long start = System.nanoTime();
                    boolean ready = pipe.consumerWaitFor(Duration.ofMillis(20));
                    waitedMillis.set(Teams.millisSince(start));
                    consumerDone.countDown();
                    if (!ready) {
                        pipe.consumerWait();
                    }
                    pipe.consumerRelease();
                }
                pipe.quit();
            });
            assertTrue(waitedMillis.get() < 200, "consumerWaitFor(20 ms) returned after " + waitedMillis.get()
                + " ms: the deadline is only looked at every 256 idle calls");
        });
    }

    /**
     * ADAPTIVE spins, then parks, without a yield phase: beside busy loops each yield handed the core to them, and
     * a 1P/1C pipeline ran at a fifth of a plain loop's speed (docs/performance.md, section 26).
     */
    @Test
    void adaptiveSpinsThenParksWithoutYielding() {
        assertTrue(WaitStrategy.ADAPTIVE.idle(0));
        assertTrue(WaitStrategy.ADAPTIVE.idle(511), "512 spins");
        assertFalse(WaitStrategy.ADAPTIVE.idle(512), "then it parks: no yields");
    }

    /**
     * A strategy that yields and then parks stops yielding at a yield that ran another thread (longer than 50 us),
     * and parks: with four busy threads per processor, some yield of a thousand runs one of them for a time slice.
     */
    @Test
    void aYieldThatRanAnotherThreadEndsTheYieldsOfAStrategyThatParks() throws InterruptedException {
        WaitStrategy yieldMuch = WaitStrategy.spinYieldPark(0, 1000);
        int busy = 4 * Runtime.getRuntime().availableProcessors();
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        CountDownLatch running = new CountDownLatch(busy);
        List<Thread> loops = new java.util.ArrayList<>();
        for (int i = 0; i < busy; i++) {
            loops.add(Thread.ofPlatform().daemon().start(() -> {
                running.countDown();
                long x = 0;
                while (!stop.get()) x += System.nanoTime() & 1;     // a busy loop, as another program's would be
                if (x == 42) System.out.print("");
            }));
        }
        try {
            assertTrue(running.await(30, java.util.concurrent.TimeUnit.SECONDS), "the busy loops did not start");
            int attempt = 0;
            while (attempt < 1000 && yieldMuch.idle(attempt)) attempt++;
            assertTrue(attempt < 1000, "1000 yields beside " + busy + " busy threads, none slow enough to park");
        } finally {
            stop.set(true);
            for (Thread t : loops) t.join(10_000);
        }
        assertTrue(WaitStrategy.spinYieldPark(0, Integer.MAX_VALUE).idle(5), "one that never parks keeps yielding");
    }
}
