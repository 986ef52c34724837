package dev.jpipeline.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.Teams;
import dev.jpipeline.internal.wait.WaitStatus;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class PhaseBarrierTest {

    @Test
    void lastArrivalCompletesThePhaseAndResets() {
        PhaseBarrier b = new PhaseBarrier(3);
        assertEquals(0, b.arrive(1));
        assertEquals(0, b.arrive(1));
        assertFalse(b.isComplete(0));
        assertEquals(0, b.arrive(1));
        assertTrue(b.isComplete(0));
        assertFalse(b.isComplete(1));
        assertEquals(1, b.phase());
        assertEquals(0, b.arrived());
        assertEquals(3, b.expected());
    }

    @Test
    void overArrivalIsRefused() {
        PhaseBarrier b = new PhaseBarrier(2);
        b.arrive(1);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> b.arrive(2));
        assertTrue(e.getMessage().contains("expects 2 arrivals and already has 1"), e.getMessage());
        assertEquals(1, b.arrived(), "a refused arrival changes nothing");
    }

    @Test
    void dropAtTheCurrentRoundLowersTheCountAndMayComplete() {
        PhaseBarrier b = new PhaseBarrier(3);
        b.arrive(1);
        b.arrive(1);
        b.dropFromRound(0);             // the third party leaves before arriving: its two peers suffice
        assertTrue(b.isComplete(0));
        assertEquals(2, b.expected());
    }

    @Test
    void dropAfterArrivingWithdrawsTheArrival() {
        PhaseBarrier b = new PhaseBarrier(3);
        b.arrive(1);                    // the leaving party arrived at phase 0 already
        b.dropFromRound(1);
        assertEquals(2, b.expected());
        assertEquals(0, b.arrived());
        b.arrive(1);
        assertFalse(b.isComplete(0), "phase 0 still needs both remaining parties");
        b.arrive(1);
        assertTrue(b.isComplete(0));
    }

    @Test
    void lastPartyLeavingAbandonsTheWaiters() throws Exception {
        PhaseBarrier b = new PhaseBarrier(1);
        AtomicReference<WaitStatus> status = new AtomicReference<>();
        Thread waiter = Thread.ofPlatform().start(
            () -> status.set(b.await(0, PhaseBarrier.NO_DEADLINE, false)));
        Teams.awaitParked(waiter);
        b.dropFromRound(0);
        waiter.join(10_000);
        assertEquals(WaitStatus.ABANDONED, status.get());
    }

    @Test
    void dropFromAnImpossibleRoundIsRefused() {
        PhaseBarrier b = new PhaseBarrier(2);
        assertThrows(IllegalStateException.class, () -> b.dropFromRound(5));
        assertThrows(IllegalStateException.class, () -> b.dropFromRound(1), "nobody arrived at phase 0");
    }

    @Test
    void completionRunsOncePerPhaseBeforeWaitersAreReleased() {
        int[] runs = new int[1];
        PhaseBarrier[] self = new PhaseBarrier[1];
        boolean[] completeDuringAction = new boolean[1];
        self[0] = new PhaseBarrier(2, () -> {
            runs[0]++;
            completeDuringAction[0] = self[0].isComplete(0);
        });
        self[0].arrive(1);
        self[0].arrive(1);
        assertEquals(1, runs[0]);
        assertFalse(completeDuringAction[0], "waiters must not be released before the action ends");
        assertTrue(self[0].isComplete(0));
    }

    @Test
    void partiesCannotArriveInPlaceOfATiedCopy() {
        PhaseBarrier b = new PhaseBarrier(2);
        b.tieCopy();                                        // expected 3: two parties and one copy
        IllegalStateException over = assertThrows(IllegalStateException.class, () -> b.arriveAsParty(3));
        assertTrue(over.getMessage().contains("arriving 3 more is not allowed"), over.getMessage());
        assertEquals(0, b.arrived(), "a refused arrival changes nothing");
        b.arriveAsParty(2);
        assertFalse(b.isComplete(0), "the copy has not landed");
        assertThrows(IllegalStateException.class, b::arriveAndDropAsParty, "no party is left to drop");
        b.copyLanded(null);
        assertTrue(b.isComplete(0));
        assertEquals(2, b.expected(), "later phases expect the parties only");
    }

    @Test
    void aPhaseWhoseLastPartyDropsAfterAWithdrawnArrivalCompletesInsteadOfBeingAbandoned() {
        // two producers: A commits round 0 and quits (its arrival is withdrawn with it), B then quits before
        // committing: round 0 had A's real arrival and nobody else will come, so it completes; round 1 has no one
        PhaseBarrier b = new PhaseBarrier(2);
        b.arrive(1);                    // A's commit of round 0
        b.dropFromRound(1);             // A quits: withdrawn from round 0, gone from round 1 on
        assertEquals(0, b.phase());
        assertEquals(1, b.expected());
        b.dropFromRound(0);             // B quits without committing round 0
        assertTrue(b.isComplete(0), "round 0 had a real arrival: it completes");
        assertEquals(WaitStatus.COMPLETE, b.await(0, PhaseBarrier.POLL_ONCE, false));
        assertEquals(WaitStatus.ABANDONED, b.await(1, PhaseBarrier.POLL_ONCE, false), "round 1 has no party left");
    }

    @Test
    void aPhaseWhosePartiesAllDropWithoutArrivingIsAbandoned() {
        PhaseBarrier b = new PhaseBarrier(2);
        b.dropFromRound(0);
        b.dropFromRound(0);
        assertFalse(b.isComplete(0));
        assertEquals(WaitStatus.ABANDONED, b.await(0, PhaseBarrier.POLL_ONCE, false));
    }

    @Test
    void phaseCounterWrapsModulo23Bits() {
        PhaseBarrier b = new PhaseBarrier(1);
        for (int i = 0; i < (1 << 23) + 3; i++) {
            b.arrive(1);
        }
        assertEquals(3, b.phase());
        assertTrue(b.isComplete((1 << 23) + 2));
        assertFalse(b.isComplete((1 << 23) + 3));
    }

    @Test
    void timedWaitTimesOutAndPollOnceDoesNotWait() {
        PhaseBarrier b = new PhaseBarrier(1);
        long start = System.nanoTime();
        assertEquals(WaitStatus.TIMED_OUT, b.await(0, PhaseBarrier.POLL_ONCE, false));
        assertEquals(WaitStatus.TIMED_OUT, b.await(0, System.nanoTime() + 30_000_000L, false));
        long elapsed = System.nanoTime() - start;
        assertTrue(elapsed >= 30_000_000L && elapsed < 5_000_000_000L, "elapsed " + elapsed);
    }

    @Test
    void parkedWaitersAreWokenByTheCompletingArrival() throws Exception {
        PhaseBarrier b = new PhaseBarrier(1);
        Thread[] waiters = new Thread[8];
        java.util.List<AtomicReference<WaitStatus>> results = new java.util.ArrayList<>();
        for (int i = 0; i < waiters.length; i++) {
            AtomicReference<WaitStatus> r = new AtomicReference<>();
            results.add(r);
            waiters[i] = (i % 2 == 0 ? Thread.ofVirtual() : Thread.ofPlatform())
                .start(() -> r.set(b.await(0, PhaseBarrier.NO_DEADLINE, false)));
        }
        for (Thread waiter : waiters) {
            Teams.awaitParked(waiter);  // every waiter has reached the park stage
        }
        b.arrive(1);
        for (int i = 0; i < waiters.length; i++) {
            waiters[i].join(10_000);
            assertEquals(WaitStatus.COMPLETE, results.get(i).get(), "waiter " + i);
        }
    }

    @Test
    void givenUpWaitersDoNotPileUp() {
        PhaseBarrier b = new PhaseBarrier(1);
        for (int i = 0; i < 200; i++) {
            b.await(0, System.nanoTime() + 1_000, false);
        }
        b.arrive(1);                    // the signal walks whatever is left; nothing must break
        assertTrue(b.isComplete(0));
    }

    /** A stage barrier of a group with one thread, as StageSide makes it. */
    private static PhaseBarrier soloStageBarrier() {
        return new PhaseBarrier(new long[2 * PhaseBarrier.WORD_PAD + 1], PhaseBarrier.WORD_PAD, 1, null, true);
    }

    @Test
    void aSoloArrivalCompletesThePhaseAndWakesAParkedWaiter() throws InterruptedException {
        PhaseBarrier b = soloStageBarrier();
        AtomicReference<WaitStatus> seen = new AtomicReference<>();
        Thread waiter = Thread.ofPlatform().start(() -> seen.set(b.await(0, PhaseBarrier.NO_DEADLINE, false,
            dev.jpipeline.WaitStrategy.BLOCKING, b, null)));
        Teams.awaitParked(waiter);
        b.arriveAlone(0);
        waiter.join(10_000);
        assertEquals(WaitStatus.COMPLETE, seen.get(), "the parked waiter was signalled");
        b.arriveAlone(1);
        assertEquals(2, b.phase());
        assertEquals("phase 2, arrived 0/1", b.toString());
    }

    @Test
    void aSignalThatMissesAParkedWaiterOfASoloBarrierCostsAShortDelayNotAHang() throws InterruptedException {
        PhaseBarrier b = soloStageBarrier();
        AtomicReference<WaitStatus> seen = new AtomicReference<>();
        long patience = 10_000_000_000L;
        Thread waiter = Thread.ofPlatform().start(() -> seen.set(b.await(0, System.nanoTime() + patience, false,
            dev.jpipeline.WaitStrategy.BLOCKING, b, null)));
        Teams.awaitParked(waiter);
        long start = System.nanoTime();
        // the race arriveAlone can lose: its store lands, its read of the stack missed the node (no unpark)
        java.lang.invoke.MethodHandles.arrayElementVarHandle(long[].class)
            .setVolatile(b.words(), b.wordIndex(), (1L << 41) | (1L << 20));
        waiter.join(10_000);
        assertEquals(WaitStatus.COMPLETE, seen.get(), "the waiter found the phase complete at its next bounded park");
        assertTrue(System.nanoTime() - start < patience / 2, "woke long before its deadline");
    }

    @Test
    void aSoloArrivalThatIsNotAloneIsCaughtByAnAssertion() {
        org.junit.jupiter.api.Assumptions.assumeTrue(PhaseBarrier.class.desiredAssertionStatus(), "assertions off");
        PhaseBarrier tied = soloStageBarrier();
        tied.tieCopy();
        assertThrows(AssertionError.class, () -> tied.arriveAlone(0), "a tied copy also writes the word");
        PhaseBarrier other = soloStageBarrier();
        assertThrows(AssertionError.class, () -> other.arriveAlone(1), "the barrier is at phase 0");
    }

    /**
     * A copy's landing that completes a phase runs the completion action on a copy worker; when the action throws,
     * the failure must be the phase's before the phase is published. A waiter spinning on the word reads the
     * failure as soon as it sees the phase: recorded after the publication (as it once was), it is missed in a
     * large share of these rounds.
     */
    @Test
    void aCompletionFailureOfALandingIsRecordedBeforeThePhaseCompletes() throws InterruptedException {
        for (int round = 0; round < 2_000; round++) {
            PhaseBarrier b = new PhaseBarrier(1, () -> {
                throw new IllegalStateException("completion failed");
            });
            b.tieCopy();
            b.arrive(1);                            // the party is in; the phase waits for the copy
            AtomicReference<Throwable> seen = new AtomicReference<>();
            Thread waiter = Thread.ofPlatform().start(() -> {
                b.await(0, PhaseBarrier.NO_DEADLINE, false, dev.jpipeline.WaitStrategy.BUSY_SPIN, b, null);
                seen.set(b.failureOf(0));
            });
            b.copyLanded(null);                     // as a copy worker would: completes the phase
            waiter.join(10_000);
            assertFalse(waiter.isAlive(), "the waiter saw the phase complete");
            assertTrue(seen.get() instanceof IllegalStateException,
                "round " + round + ": the waiter saw the phase complete without its failure: " + seen.get());
        }
    }

    /** A barrier in shared memory refuses an in-process waiter node: nothing of another process could signal it. */
    @Test
    void aSharedBarrierRefusesAnInProcessWaiterNode() {
        try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
            java.lang.foreign.MemorySegment region = arena.allocate(64, 8);
            PhaseBarrier shared = PhaseBarrier.formatShared(region, 0, 1, -1);
            IllegalStateException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
                () -> shared.enqueue(dev.jpipeline.internal.wait.Waiter.stackless(new dev.jpipeline.internal.wait
                    .ParkListener() {
                    @Override
                    public void parking(Object site) {
                    }

                    @Override
                    public void unparked() {
                    }
                })));
            org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("futex word"), e.getMessage());
            shared.arrive(1);           // the barrier itself still works
            org.junit.jupiter.api.Assertions.assertTrue(shared.isComplete(0));
        }
    }
}
