package dev.jpipeline.internal.wait;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.WaitStrategy;
import dev.jpipeline.internal.PhaseBarrier;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Hostile review of issue 25's busy-machine waits: a wait that turns to parking because it saw the machine busy
 * (or found it marked busy) must push its node before its last poll, or an arrival that lands in between is a lost
 * wake-up (the barrier's parks are unbounded). Two threads hand a phase back and forth, each wait losing "a time
 * slice" in its idling so that it switches to the park phase, while the arrivals come at scattered times.
 */
@Timeout(60)
class BusyWaitHostileTest {

    @AfterEach
    void forget() {
        Oversubscription.reset();
    }

    /** Spins and backs off; its idle number {@code slowAt} stalls past a time slice, as a descheduled one does. */
    private static WaitStrategy losingASlice(int slowAt) {
        return new WaitStrategy() {
            @Override
            public boolean idle(int attempt) {
                if (attempt == slowAt) {
                    LockSupport.parkNanos(Oversubscription.BUSY_NANOS + 200_000);
                }
                Thread.onSpinWait();
                return true;                    // would spin forever: only the busy switch sends it to park
            }

            @Override
            public boolean backsOffWhenBusy() {
                return true;
            }
        };
    }

    /** Spins a random while (0 to about 1.5 ms), so that an arrival falls anywhere in the peer's switch. */
    private static void scatter(SplittableRandom random) {
        long until = System.nanoTime() + random.nextLong(1_500_000);
        while (System.nanoTime() - until < 0) {
            Thread.onSpinWait();
        }
    }

    @Test
    void handOffsWhileWaitsSwitchToParkingLoseNoWakeUp() throws InterruptedException {
        int rounds = 400;
        PhaseBarrier ping = new PhaseBarrier(1, null);
        PhaseBarrier pong = new PhaseBarrier(1, null);
        AtomicReference<String> failure = new AtomicReference<>();
        Thread peer = Thread.ofPlatform().daemon().name("busy-peer").start(() -> {
            SplittableRandom random = new SplittableRandom(2);
            try {
                for (int r = 0; r < rounds; r++) {
                    WaitStatus s = Waiting.await(ping, r, Deadlines.NO_DEADLINE, false, losingASlice(r % 16), "peer",
                        null);
                    if (s != WaitStatus.COMPLETE) {
                        failure.compareAndSet(null, "peer round " + r + ": " + s);
                        return;
                    }
                    scatter(random);
                    pong.arrive(1);
                }
            } catch (Throwable t) {
                failure.compareAndSet(null, t.toString());
            }
        });
        SplittableRandom random = new SplittableRandom(1);
        for (int r = 0; r < rounds && failure.get() == null; r++) {
            scatter(random);
            if (r % 50 == 0) {
                Oversubscription.reset();       // some waits start idle and switch; others find the mark set
            }
            ping.arrive(1);
            WaitStatus s = Waiting.await(pong, r, Deadlines.fromTimeout(java.time.Duration.ofSeconds(10)), false,
                losingASlice((r * 7) % 16), "main", null);
            assertEquals(WaitStatus.COMPLETE, s, "round " + r + ": the peer never answered (a lost wake-up parks it "
                + "forever): " + java.util.Arrays.toString(peer.getStackTrace()));
        }
        peer.join(10_000);
        assertEquals(null, failure.get());
        assertTrue(!peer.isAlive(), "the peer is still waiting");
    }
}
