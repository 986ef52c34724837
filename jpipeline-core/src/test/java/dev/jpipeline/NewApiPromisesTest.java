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

    @Test
    void p12_timedTokenWaitsHonourTheirLimitDownToNanoseconds() {
        Barrier barrier = new Barrier(2);
        long token = barrier.arrive();                              // phase 0 pending: 1 of 2 arrived
        List<Bounded.Run> pending = new ArrayList<>();
        List<String> names = new ArrayList<>();
        for (long n : new long[] {1, 100, 200, 1000}) {
            names.add("tryWaitFor(" + n + " ns)");
            pending.add(Bounded.start("p12-token-" + n, () -> polled(() -> barrier.tryWaitFor(token,
                Duration.ofNanos(n)))));
        }
        names.add("tryWait");
        pending.add(Bounded.start("p12-try", () -> polled(() -> barrier.tryWait(token))));
        names.add("tryWaitFor(ZERO)");
        pending.add(Bounded.start("p12-zero", () -> polled(() -> barrier.tryWaitFor(token, Duration.ZERO))));
        names.add("tryWaitFor(-5 ms)");
        pending.add(Bounded.start("p12-negative", () -> polled(() -> barrier.tryWaitFor(token,
            Duration.ofMillis(-5)))));
        names.add("tryWaitUntil(a second ago)");
        pending.add(Bounded.start("p12-past", () -> polled(() -> barrier.tryWaitUntil(token,
            Instant.now().minusSeconds(1)))));
        names.add("tryWaitFor(100 ms)");
        pending.add(Bounded.start("p12-100ms", () -> timedOut(100, () -> barrier.tryWaitFor(token,
            Duration.ofMillis(100)))));
        names.add("tryWaitUntil(now + 100 ms)");
        pending.add(Bounded.start("p12-until", () -> timedOut(90, () -> barrier.tryWaitUntil(token,
            Instant.now().plusMillis(100)))));
        long deadline = System.nanoTime() + QUICK.toNanos();
        List<String> outcomes = new ArrayList<>();
        for (int i = 0; i < names.size(); i++) {
            outcomes.add(names.get(i) + ": " + pending.get(i).resultBy(deadline));
        }
        barrier.arrive();                                           // phase 0 completes
        outcomes.add("completed, tryWait: " + Bounded.outcome("p12-done", QUICK, () ->
            barrier.tryWait(token) + ", " + barrier.tryWaitFor(token, Duration.ZERO) + ", "
                + barrier.tryWaitFor(token, Duration.ofNanos(1)) + ", " + barrier.tryWaitUntil(token, Instant.EPOCH)));
        assertEquals(List.of("tryWaitFor(1 ns): false at once", "tryWaitFor(100 ns): false at once",
                "tryWaitFor(200 ns): false at once", "tryWaitFor(1000 ns): false at once", "tryWait: false at once",
                "tryWaitFor(ZERO): false at once", "tryWaitFor(-5 ms): false at once",
                "tryWaitUntil(a second ago): false at once", "tryWaitFor(100 ms): false in time",
                "tryWaitUntil(now + 100 ms): false in time", "completed, tryWait: true, true, true, true"),
            outcomes, "timed token waits on a pending phase return false at once for a limit that has passed "
                + "(1 ns .. 1 us included), false after a longer one, and true once the phase completed");
    }

    private interface TimedWait {
        boolean await() throws Exception;
    }

    private static String polled(TimedWait wait) throws Exception {
        long start = System.nanoTime();
        boolean ready = wait.await();
        long millis = Teams.millisSince(start);
        return ready ? "true" : millis < 500 ? "false at once" : "false after " + millis + " ms";
    }

    private static String timedOut(long atLeastMillis, TimedWait wait) throws Exception {
        long start = System.nanoTime();
        boolean ready = wait.await();
        long millis = Teams.millisSince(start);
        return ready ? "true" : millis >= atLeastMillis && millis <= 1500 ? "false in time"
            : "false after " + millis + " ms";
    }

    // ---------------------------------------------------------------------------------------------------------
    // 14: the timed token waits check their tokens too

    @Test
    void p14_timedTokenWaitsRejectInvalidTokens() {
        Barrier barrier = new Barrier(2);
        long token = barrier.arrive();
        Barrier other = new Barrier(2);
        long otherToken = other.arrive();
        long[] invalid = {token + 1, otherToken, -1, 1L << 40, barrier.phase()};
        String[] what = {"token + 1", "another barrier's token", "-1", "1L << 40", "plain phase number"};
        List<Bounded.Run> runs = new ArrayList<>();
        List<String> names = new ArrayList<>();
        for (int i = 0; i < invalid.length; i++) {
            long bad = invalid[i];
            names.add("tryWait(" + what[i] + ")");
            runs.add(Bounded.start("p14-try", () -> rejects(() -> barrier.tryWait(bad))));
            names.add("tryWaitFor(" + what[i] + ", 50 ms)");
            runs.add(Bounded.start("p14-for", () -> rejects(() -> barrier.tryWaitFor(bad, Duration.ofMillis(50)))));
            names.add("tryWaitUntil(" + what[i] + ", now + 50 ms)");
            runs.add(Bounded.start("p14-until", () -> rejects(() -> barrier.tryWaitUntil(bad,
                Instant.now().plusMillis(50)))));
        }
        long deadline = System.nanoTime() + QUICK.toNanos();
        List<String> outcomes = new ArrayList<>();
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < names.size(); i++) {
            outcomes.add(names.get(i) + ": " + runs.get(i).resultBy(deadline));
            expected.add(names.get(i) + ": IllegalArgumentException");
        }
        barrier.arrive();
        other.arrive();
        assertEquals(expected, outcomes, "timed token waits must reject values that are no token of this barrier, "
            + "or that name a phase not begun");
    }

    private static String rejects(TimedWait wait) throws Exception {
        try {
            return "returned " + wait.await();
        } catch (IllegalArgumentException e) {
            return "IllegalArgumentException";
        }
    }

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
