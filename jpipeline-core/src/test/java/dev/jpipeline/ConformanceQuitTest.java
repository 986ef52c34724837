package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Conformance scenarios 29-34 (libcudacxx-pipeline-semantics.md §15 D: quit and close). */
class ConformanceQuitTest {

    /**
     * Trial 0 races every quit; the later trials quit one thread after another, in a seeded order, and then the
     * last one to quit is the one that gets {@code true}.
     */
    @Test
    void s29_exactlyOneQuitReturnsTrue() {
        for (int n : new int[] {1, 2, 64}) {
            for (int trial = 0; trial < 5; trial++) {
                PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 2);
                AtomicInteger trues = new AtomicInteger();
                AtomicInteger trueAt = new AtomicInteger(-1);
                boolean race = trial == 0;
                List<Integer> order = new ArrayList<>();        // order.get(rank): when rank quits
                for (int i = 0; i < n; i++) {
                    order.add(i);
                }
                Collections.shuffle(order, new Random(31L * n + trial));
                CountDownLatch[] quitted = new CountDownLatch[n];
                Arrays.setAll(quitted, i -> new CountDownLatch(1));
                Teams.run(n, g -> {
                    Pipeline pipe = Pipeline.make(g, state);
                    int at = order.get(g.threadRank());
                    if (!race && at > 0) {
                        Teams.await(quitted[at - 1], "quitter " + (at - 1) + " has quit");
                    }
                    if (pipe.quit()) {
                        trues.incrementAndGet();
                        trueAt.set(at);
                    }
                    assertFalse(pipe.quit(), "a second quit on the same handle changes nothing");
                    quitted[at].countDown();
                });
                assertEquals(1, trues.get(), "group of " + n);
                if (!race) {
                    assertEquals(n - 1, trueAt.get(), "the last owner to quit gets true (group of " + n + ")");
                }
            }
        }
    }

    /**
     * Deliberate difference: upstream's quit keeps the quitter's arrivals expected, so rank 0's wait times out
     * (false) there. jpipeline drops them, as the documentation promises ("the remaining participating
     * threads can proceed normally"), so rank 0's commit alone completes stage 0.
     */
    @Test
    void s30_quitLetsTheOthersProceed() {
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 2);
        AtomicInteger waited = new AtomicInteger(-1);
        AtomicInteger lastQuit = new AtomicInteger(-1);
        Teams.run(2, g -> {
            Pipeline pipe = Pipeline.make(g, state);
            if (g.threadRank() == 1) {
                assertFalse(pipe.quit());
            }
            g.sync();
            if (g.threadRank() == 0) {
                pipe.producerAcquire();
                pipe.producerCommit();
                waited.set(pipe.consumerWaitFor(Duration.ofMillis(100)) ? 1 : 0);
                pipe.consumerRelease();
                pipe.producerAcquire();           // rank 1's release is no longer needed either
                pipe.producerCommit();
                lastQuit.set(pipe.quit() ? 1 : 0);
            }
        });
        assertEquals(1, waited.get());
        assertEquals(1, lastQuit.get());
    }

    @Test
    void s31_closeAfterQuitDoesNothingAndCloseQuits() {
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 2);
        AtomicInteger secondIsLast = new AtomicInteger(-1);
        Teams.run(2, g -> {
            Pipeline pipe = Pipeline.make(g, state);
            if (g.threadRank() == 0) {
                assertFalse(pipe.quit());
                pipe.close();                       // no second decrement
            }
            g.sync();
            if (g.threadRank() == 1) {
                secondIsLast.set(pipe.quit() ? 1 : 0);
            }
        });
        assertEquals(1, secondIsLast.get());

        PipelineSharedState other = PipelineSharedState.create(ThreadScope.BLOCK, 2);
        Teams.run(3, g -> {
            Pipeline closed;
            try (Pipeline pipe = Pipeline.make(g, other)) {
                assertTrue(pipe.isActive());
                closed = pipe;
            }
            assertFalse(closed.isActive(), "close without quit is a quit");
            assertFalse(closed.quit(), "so a later quit is a second quit");
        });
    }

    @Test
    void s32_staleHandlesThrowAfterTheLastQuit() {
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 2);
        Pipeline pipe = Pipeline.make(Teams.soloGroup(), state);
        assertTrue(pipe.quit());
        IllegalStateException e = assertThrows(IllegalStateException.class, pipe::producerAcquire);
        assertTrue(e.getMessage().contains("producer_acquire after quit"), e.getMessage());
        assertThrows(IllegalStateException.class, pipe::producerCommit);
        assertThrows(IllegalStateException.class, pipe::consumerWait);
        assertThrows(IllegalStateException.class, () -> pipe.consumerWaitFor(Duration.ofMillis(1)));
        assertThrows(IllegalStateException.class, pipe::consumerRelease);
    }

    @Test
    void s33_producerQuitsAfterItsLastCommit() {
        int batches = 20;
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 2);
        AtomicInteger consumed = new AtomicInteger();
        AtomicInteger lastOwners = new AtomicInteger();
        CountDownLatch producerQuit = new CountDownLatch(1);
        Teams.run(3, g -> {
            Pipeline pipe = Pipeline.make(g, state, 1);
            if (g.threadRank() == 0) {
                for (int b = 0; b < batches; b++) {
                    pipe.producerAcquire();
                    pipe.producerCommit();
                }
                boolean last = pipe.quit();
                producerQuit.countDown();
                assertFalse(last, "consumers still own the pipeline");
            } else {
                for (int b = 0; b < batches; b++) {
                    pipe.consumerWait();
                    consumed.incrementAndGet();
                    pipe.consumerRelease();
                }
                // ordered by observation: the consumers quit only after the producer (else a producer descheduled
                // between its last commit and its quit would be the last owner, as a loaded CI machine showed)
                Teams.await(producerQuit, "the producer has quit");
                if (pipe.quit()) {
                    lastOwners.incrementAndGet();
                }
            }
        });
        assertEquals(2 * batches, consumed.get());
        assertEquals(1, lastOwners.get());
    }

    /** Count partition: threads that quit before their first operation take sides atomically. */
    @Test
    void threadsQuittingTogetherBeforeActingNeverOverDrop() {
        for (int trial = 0; trial < 200; trial++) {
            PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 2);
            AtomicInteger lastOwners = new AtomicInteger();
            Teams.run(4, g -> {
                if (Pipeline.make(g, state, 2).quit()) {
                    lastOwners.incrementAndGet();
                }
            });
            assertEquals(1, lastOwners.get(), "trial " + trial);
        }
    }

    @Test
    void s34_threadScopeQuitIsAlwaysTrue() {
        Pipeline pipe = Pipeline.make();
        assertTrue(pipe.quit());
        assertTrue(pipe.quit());
        pipe.close();
        assertTrue(pipe.quit());
    }

    // ---- jpipeline's quit guarantees beyond the scenarios ---------------------------------------------------

    @Test
    void waitingForABatchNoProducerWillCommitThrows() {
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 2);
        AtomicInteger outcome = new AtomicInteger();
        CountDownLatch released = new CountDownLatch(1);
        Teams.runSeeingPeers(2, (g, threads) -> {
            Pipeline pipe = Pipeline.make(g, state, 1);
            if (g.threadRank() == 0) {
                pipe.producerAcquire();
                pipe.producerCommit();
                Teams.await(released, "the consumer releases batch 0");
                Teams.awaitParked(threads[1], "consumerWait");     // the consumer blocks on batch 1 first
                pipe.quit();
            } else {
                pipe.consumerWait();
                pipe.consumerRelease();
                released.countDown();
                IllegalStateException e = assertThrows(IllegalStateException.class, pipe::consumerWait);
                assertTrue(e.getMessage().contains("no producer is left"), e.getMessage());
                outcome.set(1);
                assertTrue(pipe.quit());
            }
        });
        assertEquals(1, outcome.get());
    }

    @Test
    void acquiringAStageNoConsumerWillReleaseThrows() {
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 1);
        Teams.runSeeingPeers(3, (g, threads) -> {
            Pipeline pipe = Pipeline.make(g, state, 1);
            if (g.threadRank() == 0) {
                pipe.producerAcquire();
                pipe.producerCommit();
                IllegalStateException e = assertThrows(IllegalStateException.class, pipe::producerAcquire);
                assertTrue(e.getMessage().contains("no consumer is left"), e.getMessage());
            } else {
                Teams.awaitParked(threads[0], "producerAcquire");   // the producer blocks on stage 0 first
                pipe.quit();             // both consumers leave without releasing batch 0
            }
        });
    }

    @Test
    void consumerThatQuitsMidStreamLeavesTheOtherConsumerWorking() {
        int batches = 50;
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 3);
        AtomicInteger seenByStayer = new AtomicInteger();
        Teams.run(3, g -> {
            Pipeline pipe = Pipeline.make(g, state, 1);
            switch (g.threadRank()) {
                case 0 -> {
                    for (int b = 0; b < batches; b++) {
                        pipe.producerAcquire();
                        pipe.producerCommit();
                    }
                }
                case 1 -> {
                    for (int b = 0; b < 7; b++) {
                        pipe.consumerWait();
                        if (b < 6) {
                            pipe.consumerRelease();
                        }
                    }
                    // quits holding batch 6 waited but unreleased: its release is dropped with it
                }
                default -> {
                    for (int b = 0; b < batches; b++) {
                        pipe.consumerWait();
                        seenByStayer.incrementAndGet();
                        pipe.consumerRelease();
                    }
                }
            }
            pipe.quit();
        });
        assertEquals(batches, seenByStayer.get());
    }

    @Test
    void theOnlyProducerQuittingWithAnAcquiredStageFailsThatBatchThenNoProducerIsLeft() {
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 2);
        ThreadTeam team = ThreadTeam.ofPlatform(2);
        List<String> seen = Collections.synchronizedList(new ArrayList<>());
        team.run(Teams.LIMIT, g -> {
            Pipeline pipe = Pipeline.make(g, state, 1);
            if (g.threadRank() == 0) {
                pipe.producerAcquire();
                pipe.producerCommit();                  // batch 0
                pipe.producerAcquire();                 // batch 1, never committed
                pipe.quit();
                return;
            }
            for (int b = 0; b < 3; b++) {
                try {
                    pipe.consumerWait();
                    seen.add("batch " + b + " ok");
                    pipe.consumerRelease();
                } catch (StageFailedException e) {
                    seen.add("batch " + e.batch() + " failed: " + e.getCause().getMessage());
                    pipe.consumerRelease();
                } catch (IllegalStateException e) {
                    seen.add(e.getMessage().contains("no producer is left") ? "no producer left" : e.getMessage());
                    break;
                }
            }
            pipe.quit();
        });
        assertEquals(3, seen.size(), seen.toString());
        assertEquals("batch 0 ok", seen.get(0));
        assertTrue(seen.get(1).startsWith("batch 1 failed: producer rank 0 (producer) quit after acquiring stage 1"),
            seen.get(1));
        assertEquals("no producer left", seen.get(2));
    }

    /**
     * Issue 8, promise 1: in a count partition a thread that quits before its first operation stays undecided,
     * and takes the producer place that is left.
     */
    @Test
    void aRankThatClosesBeforeItsFirstOperationInACountPartitionLeavesBothSidesWorking() {
        int batches = 5;
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 2);
        String outcome = Bounded.eachRank(3, Duration.ofSeconds(5), g -> {
            Pipeline pipe = Pipeline.make(g, state, 2);
            switch (g.threadRank()) {
                case 1 -> {
                    pipe.close();                       // before its first operation: it has no side yet
                    g.sync();
                    return "closed";
                }
                case 0 -> {
                    g.sync();
                    for (int b = 0; b < batches; b++) {
                        pipe.producerAcquire();
                        pipe.producerCommit();
                    }
                    pipe.quit();
                    return "produced " + batches;
                }
                default -> {
                    g.sync();
                    for (int b = 0; b < batches; b++) {
                        pipe.consumerWait();
                        pipe.consumerRelease();
                    }
                    pipe.quit();
                    return "consumed " + batches;
                }
            }
        });
        assertEquals("rank 0: produced 5 | rank 1: closed | rank 2: consumed 5", outcome,
            "make(g, state, 2) in a group of 3: rank 1 closes first, rank 0 produces, rank 2 consumes; rank 1 must "
                + "stay undecided and take the producer place that is left, so both others work");
    }

    /**
     * Hostile review of issue 8: the producer acquires, hands a file read to the engine, then fails and leaves
     * through try-with-resources (close -> quit) without committing. The batch was never committed by anybody;
     * when the read landed, the consumer's wait used to return normally and it consumed the stage as if it were good.
     */
    @Test
    void aQuitHoldingAnAcquiredStageWithACopyInFlightNeverDeliversThatBatch() {
        assertTimeoutPreemptively(Teams.LIMIT, () -> {
            PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 2);
            ThreadTeam team = ThreadTeam.ofPlatform(2);
            GatedFileChannel file = new GatedFileChannel(new byte[1 << 16]);
            CountDownLatch gate = file.gate(0);
            MemorySegment stage = Arena.ofShared().allocate(1 << 16);
            CountDownLatch producerLeft = new CountDownLatch(1);
            AtomicReference<Object> consumerSaw = new AtomicReference<>();
            Thread producer = Thread.ofPlatform().start(() -> {
                try (Pipeline pipe = Pipeline.make(team.member(0), state, PipelineRole.PRODUCER)) {
                    pipe.producerAcquire();
                    MemcpyAsync.memcpyAsync(stage, file, 0, 1 << 16, pipe);
                    throw new IllegalStateException("the producer's own code fails while filling the stage");
                } catch (IllegalStateException expected) {
                    // left through close() -> quit()
                }
                producerLeft.countDown();
            });
            Thread consumer = Thread.ofPlatform().start(() -> {
                Pipeline pipe = Pipeline.make(team.member(1), state, PipelineRole.CONSUMER);
                try {
                    pipe.consumerWait();
                    consumerSaw.set("the uncommitted batch 0 was delivered as complete");
                } catch (RuntimeException e) {
                    consumerSaw.set(e);
                }
            });
            producerLeft.await();
            gate.countDown();
            consumer.join();
            producer.join();
            assertInstanceOf(RuntimeException.class, consumerSaw.get(),
                "no producer committed batch 0; its consumer must get StageFailedException (or 'no producer is "
                    + "left'), not the stage");
        });
    }

    /**
     * The same without any copy: two producers of a count partition fill halves of one stage; rank 0 fails half
     * way and leaves through close(). Rank 1 commits, the stage completed, and the consumer used to read rank 0's
     * half, which was never written: silent corruption, whereas a producer whose thread dies in the same place
     * makes the batch fail (StageFailedException).
     */
    @Test
    void aQuitHoldingAnAcquiredStageInACountPartitionFailsThatBatch() {
        assertTimeoutPreemptively(Teams.LIMIT, () -> {
            PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 1);
            MemorySegment stage = Arena.ofShared().allocate(16);
            AtomicReference<Object> consumerSaw = new AtomicReference<>();
            ThreadTeam.ofPlatform(3).run(Teams.LIMIT, g -> {
                int rank = g.threadRank();
                try (Pipeline pipe = Pipeline.make(g, state, 2)) {
                    if (rank == 2) {
                        try {
                            pipe.consumerWait();
                            consumerSaw.set("delivered: half0=" + stage.get(ValueLayout.JAVA_LONG, 0) + " half1="
                                + stage.get(ValueLayout.JAVA_LONG, 8));
                            pipe.consumerRelease();
                        } catch (RuntimeException e) {
                            consumerSaw.set(e);
                        }
                        return;
                    }
                    pipe.producerAcquire();
                    if (rank == 0) {
                        try {
                            throw new IllegalStateException("rank 0 fails before writing its half");
                        } catch (IllegalStateException expected) {
                            return;                     // close() -> quit() with the stage acquired
                        }
                    }
                    stage.set(ValueLayout.JAVA_LONG, 8, 42);
                    pipe.producerCommit();
                }
            });
            assertInstanceOf(RuntimeException.class, consumerSaw.get(),
                "rank 0 never committed its half of batch 0: " + consumerSaw.get());
        });
    }
}
