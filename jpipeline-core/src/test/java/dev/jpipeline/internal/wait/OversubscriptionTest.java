package dev.jpipeline.internal.wait;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.WaitStrategy;
import dev.jpipeline.internal.PhaseBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Waiting that knows when spinning pays (issue 25): a strategy that backs off parks at once while the machine is
 * seen oversubscribed, and a waiter whose idling was descheduled for a time slice marks it so. The built-in
 * strategies say which of them back off.
 */
class OversubscriptionTest {

    @AfterEach
    void forget() {
        Oversubscription.reset();
    }

    /** Spins, counting its idles, then parks after {@code spins}; its idle number {@code slowAt} takes 3 ms. */
    private static WaitStrategy counting(AtomicInteger idles, int spins, int slowAt) {
        return new WaitStrategy() {
            @Override
            public boolean idle(int attempt) {
                idles.incrementAndGet();
                if (attempt == slowAt) {
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(3));    // stands for a lost time slice
                }
                Thread.onSpinWait();
                return attempt < spins;
            }

            @Override
            public boolean backsOffWhenBusy() {
                return true;
            }
        };
    }

    /** Waits on a fresh barrier's phase under {@code strategy} until the test arrives, once the waiter is parked. */
    private static String waitUntilArrival(WaitStrategy strategy) throws InterruptedException {
        PhaseBarrier barrier = new PhaseBarrier(1, null);
        int round = barrier.phase();
        AtomicReference<WaitStatus> status = new AtomicReference<>();
        Thread waiter = Thread.ofPlatform().daemon().start(() -> status.set(
            Waiting.await(barrier, round, Deadlines.NO_DEADLINE, false, strategy, "test", null)));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (waiter.getState() != Thread.State.WAITING && System.nanoTime() - deadline < 0) {
            Thread.onSpinWait();
        }
        String state = waiter.getState().toString();
        barrier.arrive(1);
        waiter.join(10_000);
        return state + " " + (status.get() != null ? status.get()
            : "still waiting in " + java.util.Arrays.toString(waiter.getStackTrace()));
    }

    @Test
    void aWaitThatBacksOffParksAtOnceWhileTheMachineIsSeenBusy() throws InterruptedException {
        assertTrue(Oversubscription.sawIdling(TimeUnit.MILLISECONDS.toNanos(2), System.nanoTime()));
        assertTrue(Oversubscription.busy());
        AtomicInteger idles = new AtomicInteger();
        assertEquals("WAITING COMPLETE", waitUntilArrival(counting(idles, 1_000_000_000, -1)));
        assertEquals(0, idles.get(), "no spin while the machine counts as busy");
    }

    @Test
    void aWaitSpinsOnAMachineNeverSeenBusy() throws InterruptedException {
        AtomicInteger idles = new AtomicInteger();
        assertEquals("WAITING COMPLETE", waitUntilArrival(counting(idles, 2_000, -1)));
        // it spins its 2000 idles unless this machine really descheduled it meanwhile (a loaded CI runner)
        assertTrue(idles.get() > 2_000 || Oversubscription.busy(), "spun " + idles.get() + " times before parking");
    }

    @Test
    void idlingDescheduledForATimeSliceMarksTheMachineBusyAndParks() throws InterruptedException {
        AtomicInteger idles = new AtomicInteger();
        // would spin "forever"; its 40th idle loses 3 ms: the next clock read sees it and the wait parks
        assertEquals("WAITING COMPLETE", waitUntilArrival(counting(idles, 1_000_000_000, 40)));
        assertTrue(idles.get() < 1_000, "parked after " + idles.get() + " idles");
        assertTrue(Oversubscription.busy(), "the lost time slice marked the machine busy");
    }

    @Test
    void theSightingExpires() {
        long now = System.nanoTime();
        Oversubscription.sawIdling(Oversubscription.BUSY_NANOS, now - Oversubscription.HOLD_NANOS - 1);
        assertFalse(Oversubscription.busy(), "a sighting older than its hold counts no more");
        assertFalse(Oversubscription.sawIdling(Oversubscription.BUSY_NANOS - 1, now), "less than a slice: no sighting");
    }

    @Test
    void theBuiltInStrategiesThatSpinAndParkBackOff() {
        assertTrue(WaitStrategy.ADAPTIVE.backsOffWhenBusy());
        assertTrue(WaitStrategy.spinYieldPark(100, 10).backsOffWhenBusy());
        assertFalse(WaitStrategy.BUSY_SPIN.backsOffWhenBusy(), "the user's explicit choice");
        assertFalse(WaitStrategy.YIELDING.backsOffWhenBusy());
        assertFalse(WaitStrategy.BLOCKING.backsOffWhenBusy());
        assertFalse(((WaitStrategy) attempt -> false).backsOffWhenBusy(), "a user's own, by default");
    }
}
