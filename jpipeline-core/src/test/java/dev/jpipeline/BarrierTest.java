package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** cuda::barrier semantics. */
class BarrierTest {

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
}
