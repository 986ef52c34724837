package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * cuda::barrier semantics, and the misuse a barrier refuses: over-arrivals, values that are no token of it, a
 * completion that waits on its own barrier. Tests that check several sub-cases run each bounded on a thread of its
 * own ({@link Bounded}) and compare the list of outcomes with the promised one.
 */
class BarrierTest {

    /** A bound for sub-cases that must finish at once. */
    private static final Duration QUICK = Duration.ofSeconds(2);

    @Test
    void arriveReturnsTheTokenAwaitReturnsOnceThePhaseCompletes() {
        Barrier barrier = new Barrier(2);
        long token = barrier.arrive();
        assertEquals(0, barrier.phase(), "the phase has one of its two arrivals");
        assertFalse(barrier.tryWait(token));
        assertFalse(barrier.tryWaitParity(false, Duration.ofMillis(10)));
        assertEquals(token, barrier.arrive(), "both arrivals are at phase 0: the same token");
        barrier.await(token);
        assertTrue(barrier.tryWait(token));
        assertEquals(1, barrier.phase());
    }

    @Test
    void completionRunsOncePerPhaseInTheLastArriver() {
        AtomicInteger runs = new AtomicInteger();
        AtomicLong sum = new AtomicLong();
        long[] contributions = new long[8];
        Barrier barrier = new Barrier(8, () -> {
            runs.incrementAndGet();
            long s = 0;
            for (long c : contributions) {
                s += c;                 // every arriver's write is visible to the completion
            }
            sum.addAndGet(s);
        });
        Teams.run(8, g -> {
            for (int round = 1; round <= 50; round++) {
                contributions[g.threadRank()] = round;
                barrier.arriveAndWait();
                barrier.arriveAndWait();        // keep the next write out of the completion's view
            }
        });
        assertEquals(100, runs.get());
        assertEquals(8L * 50 * 51 / 2 * 2, sum.get());
    }

    @Test
    void arriveAndDropLowersLaterPhases() {
        Barrier barrier = new Barrier(3);
        barrier.arriveAndDrop();
        assertEquals(2, barrier.expected());
        barrier.arrive();
        long token = barrier.arrive();
        barrier.await(token);               // phase 0 completed with 3 arrivals (one was the drop)
        barrier.arrive();
        barrier.arrive();
        assertEquals(2, barrier.phase(), "phase 1 needed only two");
    }

    @Test
    void arriveAndDropByTheLastPartyCompletesThePhase() {
        Barrier barrier = new Barrier(1);
        long second = barrier.arrive(1) + 1;        // phase 1's token, once phase 0 has completed
        barrier.arriveAndDrop();
        assertEquals(2, barrier.phase());
        assertEquals(0, barrier.expected());
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> barrier.await(second + 1));
        assertTrue(e.getMessage().contains("every party has dropped out"), e.getMessage());
    }

    @Test
    void waitParityFollowsCuda() {
        Barrier barrier = new Barrier(1);
        assertFalse(barrier.tryWaitParity(false, Duration.ZERO), "phase 0 (even) has not completed");
        assertTrue(barrier.tryWaitParity(true, Duration.ZERO), "the odd phase before it counts as completed");
        barrier.arrive();
        barrier.waitParity(false);
        assertFalse(barrier.tryWaitParity(true, Duration.ofMillis(5)));
    }

    @Test
    void arriveWithUpdate() {
        Barrier barrier = new Barrier(5);
        barrier.arrive(3);
        IllegalStateException over = assertThrows(IllegalStateException.class, () -> barrier.arrive(3));
        assertTrue(over.getMessage().contains("expects 5 arrivals and already has 3"), over.getMessage());
        assertThrows(IllegalArgumentException.class, () -> barrier.arrive(0));
        barrier.arrive(2);
        assertEquals(1, barrier.phase());
    }

    @Test
    void aThrowingCompletionStillCompletesThePhase() {
        Barrier barrier = new Barrier(1, () -> {
            throw new IllegalStateException("completion failed");
        });
        assertThrows(IllegalStateException.class, barrier::arrive);
        assertEquals(1, barrier.phase());
    }

    @Test
    void awaitInterruptiblyThrows() throws Exception {
        Barrier barrier = new Barrier(2);
        long token = barrier.arrive();
        Thread.currentThread().interrupt();
        assertThrows(InterruptedException.class, () -> barrier.awaitInterruptibly(token));
        assertFalse(Thread.interrupted());
    }

    /** Issue 8, promise 11: an over-arrival is checked before it touches the barrier. */
    @Test
    void anOverArrivalIsRefusedAndLeavesTheBarrierUnchanged() {
        Barrier barrier = new Barrier(3);
        barrier.arrive();
        String overArrival = Outcomes.thrown(() -> barrier.arrive(Integer.MAX_VALUE));
        String after = "phase " + barrier.phase() + ", expected " + barrier.expected();
        AtomicReference<String> phases = new AtomicReference<>();
        String rest = Outcomes.thrown(() -> {
            barrier.arrive();
            long middle = barrier.phase();
            barrier.arrive();
            phases.set("two more arrivals: phase " + middle + " then " + barrier.phase());
        });
        assertEquals("arrive(MAX_VALUE): IllegalStateException; phase 0, expected 3; two more arrivals: phase 0 then 1",
            "arrive(MAX_VALUE): " + overArrival + "; " + after + "; " + (phases.get() != null ? phases.get() : rest),
            "new Barrier(3); arrive(); arrive(Integer.MAX_VALUE) must be refused and leave 1 of 3 arrived");
    }

    /** Issue 8, promise 13: a completion action that waits on its own barrier, or copies into it. */
    @Test
    void aCompletionThatWaitsOnOrCopiesIntoItsOwnBarrierIsRefusedAndThePhaseStillCompletes() {
        Bounded.Run await = Bounded.start("p13-await", () -> {
            AtomicLong token = new AtomicLong();
            Barrier[] barrier = new Barrier[1];
            barrier[0] = new Barrier(2, () -> barrier[0].await(token.get()));
            token.set(barrier[0].arrive());
            return Outcomes.thrown(() -> barrier[0].arrive()) + ", phase " + barrier[0].phase();
        });
        Bounded.Run parity = Bounded.start("p13-parity", () -> {
            Barrier[] barrier = new Barrier[1];
            barrier[0] = new Barrier(1, () -> barrier[0].waitParity(false));
            return Outcomes.thrown(() -> barrier[0].arrive()) + ", phase " + barrier[0].phase();
        });
        Bounded.Run copy = Bounded.start("p13-copy", () -> {
            MemorySegment src = Arena.ofAuto().allocate(64);
            MemorySegment dst = Arena.ofAuto().allocate(64);
            Barrier[] barrier = new Barrier[1];
            barrier[0] = new Barrier(1, () -> MemcpyAsync.memcpyAsync(dst, src, 64, barrier[0]));
            return Outcomes.thrown(() -> barrier[0].arrive()) + ", phase " + barrier[0].phase();
        });
        long deadline = System.nanoTime() + QUICK.toNanos();
        List<String> outcomes = List.of("await(current token): " + await.resultBy(deadline),
            "waitParity(current parity): " + parity.resultBy(deadline),
            "memcpyAsync into it: " + copy.resultBy(deadline));
        String refused = "IllegalStateException, phase 1";
        assertEquals(List.of("await(current token): " + refused, "waitParity(current parity): " + refused,
                "memcpyAsync into it: " + refused), outcomes,
            "a completion that waits for the phase it completes, or copies into it, must get an "
                + "IllegalStateException from the arrival that ran it, and the phase must still complete");
    }

    /** Issue 8, promise 14: arrival tokens are checked. */
    @Test
    void awaitRejectsValuesThatAreNoTokenOfThisBarrier() {
        Barrier barrier = new Barrier(2);
        long token = barrier.arrive();                              // phase 0 pending: 1 of 2 arrived
        Barrier other = new Barrier(2);
        long otherToken = other.arrive();
        long plainPhase = barrier.phase();
        List<Bounded.Run> awaits = List.of(awaitRun(barrier, "token + 1", token + 1),
            awaitRun(barrier, "another barrier's token", otherToken), awaitRun(barrier, "-1", -1),
            awaitRun(barrier, "1L << 40", 1L << 40), awaitRun(barrier, "plain phase number " + plainPhase, plainPhase));
        long deadline = System.nanoTime() + QUICK.toNanos();
        List<String> outcomes = new ArrayList<>();
        for (Bounded.Run await : awaits) {
            outcomes.add(await.resultBy(deadline));
        }
        barrier.arrive();                                           // phase 0 completes
        outcomes.add(awaitRun(barrier, "its own token, phase completed", token).result(QUICK));
        other.arrive();
        String rejected = "IllegalArgumentException";
        assertEquals(List.of("token + 1: " + rejected, "another barrier's token: " + rejected, "-1: " + rejected,
                "1L << 40: " + rejected, "plain phase number 0: " + rejected,
                "its own token, phase completed: returned"), outcomes,
            "await with a value that is no token of this barrier, or names a phase not begun, must throw "
                + "IllegalArgumentException instead of returning at once or hanging");
    }

    private static Bounded.Run awaitRun(Barrier barrier, String what, long token) {
        return Bounded.start("p14-await", () -> {
            try {
                barrier.await(token);
                return what + ": returned";
            } catch (IllegalArgumentException e) {
                return what + ": IllegalArgumentException";
            }
        });
    }

    /** Issue 8, promise 12 (and "every wait honours deadlines"): the timed token waits. */
    @Test
    void timedTokenWaitsHonourTheirLimitDownToNanoseconds() {
        Barrier barrier = new Barrier(2);
        long token = barrier.arrive();                              // phase 0 pending: 1 of 2 arrived
        List<Bounded.Run> pending = new ArrayList<>();
        List<String> names = new ArrayList<>();
        for (long n : new long[] {1, 100, 200, 1000}) {
            names.add("tryWaitFor(" + n + " ns)");
            pending.add(Bounded.start("p12-token-" + n, () -> Outcomes.polled(() -> barrier.tryWaitFor(token,
                Duration.ofNanos(n)))));
        }
        names.add("tryWait");
        pending.add(Bounded.start("p12-try", () -> Outcomes.polled(() -> barrier.tryWait(token))));
        names.add("tryWaitFor(ZERO)");
        pending.add(Bounded.start("p12-zero", () -> Outcomes.polled(() -> barrier.tryWaitFor(token,
            Duration.ZERO))));
        names.add("tryWaitFor(-5 ms)");
        pending.add(Bounded.start("p12-negative", () -> Outcomes.polled(() -> barrier.tryWaitFor(token,
            Duration.ofMillis(-5)))));
        names.add("tryWaitUntil(a second ago)");
        pending.add(Bounded.start("p12-past", () -> Outcomes.polled(() -> barrier.tryWaitUntil(token,
            Instant.now().minusSeconds(1)))));
        names.add("tryWaitFor(100 ms)");
        pending.add(Bounded.start("p12-100ms", () -> Outcomes.timedOut(100, () -> barrier.tryWaitFor(token,
            Duration.ofMillis(100)))));
        names.add("tryWaitUntil(now + 100 ms)");
        pending.add(Bounded.start("p12-until", () -> Outcomes.timedOut(90, () -> barrier.tryWaitUntil(token,
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

    /** Issue 8, promise 14: the timed token waits check their tokens too. */
    @Test
    void timedTokenWaitsRejectValuesThatAreNoTokenOfThisBarrier() {
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

    private static String rejects(Outcomes.TimedWait wait) throws Exception {
        try {
            return "returned " + wait.await();
        } catch (IllegalArgumentException e) {
            return "IllegalArgumentException";
        }
    }

    /**
     * "If it throws, the phase still completes and the exception propagates from the arrival that ran it." When
     * the last arrival is a memcpyAsync landing, the completion runs on a copy-engine worker: its exception used to
     * go to that worker's uncaught-exception handler, and every thread of the barrier carried on as if the
     * completion had succeeded. (A completion that blocks likewise blocks a worker of the JVM-wide shared engine.)
     */
    @Test
    void aCompletionFailureRunByACopyLandingReachesTheBarriersThreads() {
        assertTimeoutPreemptively(Teams.LIMIT, () -> {
            Barrier barrier = new Barrier(1, () -> {
                throw new IllegalStateException("the completion action failed");
            });
            MemorySegment src = Arena.ofShared().allocate(1 << 20);
            MemorySegment dst = Arena.ofShared().allocate(1 << 20);
            Thread.UncaughtExceptionHandler before = Thread.getDefaultUncaughtExceptionHandler();
            AtomicReference<Throwable> seenByWorker = new AtomicReference<>();
            Thread.setDefaultUncaughtExceptionHandler((t, e) -> seenByWorker.set(e));
            Throwable seenByThread = null;
            try {
                assertTrue(MemcpyAsync.memcpyAsync(dst, src, 1 << 20, barrier) == AsyncContractFulfillment.ASYNC);
                long token;
                try {
                    token = barrier.arrive();           // the copy is usually still in flight: its landing completes
                } catch (IllegalStateException ranHere) {
                    return;                             // the copy landed first; the exception reached us: fine
                }
                try {
                    barrier.await(token);
                } catch (IllegalStateException e) {
                    seenByThread = e;
                }
            } finally {
                Thread.setDefaultUncaughtExceptionHandler(before);
            }
            assertNotNull(seenByThread, "the completion's exception reached no thread of the barrier"
                + (seenByWorker.get() == null ? "" : "; it went to the copy worker's handler: " + seenByWorker.get()));
        });
    }
}
