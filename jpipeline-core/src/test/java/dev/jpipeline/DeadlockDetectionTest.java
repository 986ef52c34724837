package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.jpipeline.internal.EngineProbe;
import dev.jpipeline.internal.PhaseBarrier;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import java.util.StringJoiner;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/** The opt-in hang diagnosis of the core library. */
class DeadlockDetectionTest {

    @Test
    void aThreadThatEndsWithoutQuittingIsReportedInsteadOfHangingItsPeers() throws Exception {
        PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 2)
            .detectDeadlocks(Duration.ofMillis(50)).build();
        ThreadTeam team = ThreadTeam.ofPlatform(2);
        Thread consumer = Thread.ofPlatform().name("leaving-consumer").start(() -> {
            Pipeline pipe = Pipeline.make(team.member(1), state, 1);
            pipe.consumerWait();
            pipe.consumerRelease();
            // ends without quit(): the producer will wait for a release that never comes
        });
        AtomicReference<IllegalStateException> error = new AtomicReference<>();
        Thread producerThread = Thread.ofPlatform().start(() -> {
            Pipeline producer = Pipeline.make(team.member(0), state, 1);
            try {
                for (int b = 0; b < 10; b++) {
                    producer.producerAcquire();
                    producer.producerCommit();
                }
            } catch (IllegalStateException e) {
                error.set(e);
            }
        });
        consumer.join(10_000);
        producerThread.join(10_000);
        assertNotNull(error.get(), "the producer must be told instead of hanging");
        // the consumer's ended thread counts as quit: the producer is told that no consumer is left, and why
        String message = error.get().getMessage();
        assertTrue(message.startsWith("producer_acquire can never return: no consumer is left to release stage 1 "
            + "(batch 1)"), message);
        assertTrue(message.contains("rank 1 (consumer)'s thread 'leaving-consumer' ended without quit()"), message);
    }

    @Test
    void slowButLivePeersAreNeverReported() {
        PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 1)
            .detectDeadlocks(Duration.ofMillis(10)).build();
        AtomicInteger delivered = new AtomicInteger();
        Teams.runSeeingPeers(2, (g, threads) -> {
            Pipeline pipe = Pipeline.make(g, state, 1);
            for (int b = 0; b < 5; b++) {
                if (g.threadRank() == 0) {
                    int taken = b;
                    Teams.awaitTrue("the consumer takes batch " + (b - 1), () -> delivered.get() == taken);
                    Teams.awaitParked(threads[1], "consumerWait");     // the consumer waits for batch b...
                    // ...while this thread stays away much longer than the patience, alive. A sleep kept on
                    // purpose: the delay itself is under test, and no observation can stand in for elapsed time
                    stayAway(Duration.ofMillis(60));
                    pipe.producerAcquire();
                    pipe.producerCommit();
                } else {
                    pipe.consumerWait();
                    delivered.incrementAndGet();
                    pipe.consumerRelease();
                }
            }
            pipe.quit();
        });
        assertEquals(5, delivered.get());
    }

    /** Keeps the calling thread busy elsewhere (not in any jpipeline wait) for {@code time}. */
    private static void stayAway(Duration time) {
        long deadline = System.nanoTime() + time.toNanos();
        for (long left; (left = deadline - System.nanoTime()) > 0; ) {
            LockSupport.parkNanos(left);
        }
    }

    @Test
    void patienceMustNotBeNegativeAndZeroTurnsDetectionOff() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> PipelineSharedState.builder(ThreadScope.BLOCK, 2).detectDeadlocks(Duration.ofNanos(-1)));
        assertTrue(e.getMessage().contains("must not be negative"), e.getMessage());
        assertEquals(Duration.ZERO,
            PipelineSharedState.builder(ThreadScope.BLOCK, 2).detectDeadlocks(Duration.ZERO).build().hangPatience());
        assertEquals(Duration.ofSeconds(1), PipelineSharedState.create(ThreadScope.BLOCK, 2).hangPatience(),
            "on by default");
    }

    /** Issue 8, promise 7: dead and idle participants are treated as quit, or reported as a hang. */
    @Test
    void aDeadParticipantCountsAsQuitAndAnIdleOneIsReportedUnlessDetectionIsOff() throws Exception {
        // (a) a unified peer whose thread ends without quit: counts as quit once noticed
        PipelineSharedState unified = PipelineSharedState.create(ThreadScope.BLOCK, 2);
        ThreadTeam pair = ThreadTeam.ofPlatform(2);
        Bounded.start("p07a-ends-without-quit", () -> {
            Pipeline.make(pair.member(1), unified);
            return "ended";
        });
        Bounded.Run survivor = Bounded.start("p07a-survivor", () -> {
            Pipeline pipe = Pipeline.make(pair.member(0), unified);
            for (int b = 0; b < 5; b++) {
                pipe.producerAcquire();
                pipe.producerCommit();
                pipe.consumerWait();
                pipe.consumerRelease();
            }
            pipe.quit();
            return "5 batches";
        });

        // (b) the only producer ends without quit: the consumer's wait for a batch it cannot commit names it
        PipelineSharedState partitioned = PipelineSharedState.create(ThreadScope.BLOCK, 2);
        ThreadTeam pair2 = ThreadTeam.ofPlatform(2);
        Bounded.start("p07b-dead-producer", () -> {
            Pipeline pipe = Pipeline.make(pair2.member(0), partitioned, 1);
            pipe.producerAcquire();
            pipe.producerCommit();
            return "ended after batch 0";
        });
        Bounded.Run orphan = Bounded.start("p07b-consumer", () -> {
            Pipeline pipe = Pipeline.make(pair2.member(1), partitioned, 1);
            pipe.consumerWait();
            pipe.consumerRelease();
            try {
                pipe.consumerWait();
                return "batch 1 returned";
            } catch (IllegalStateException e) {
                String m = String.valueOf(e.getMessage());
                return m.contains("p07b-dead-producer") || m.contains("rank 0") ? "ISE naming the dead producer"
                    : "ISE: " + m;
            }
        });

        // (c) a producer dies holding an acquired, uncommitted stage: that batch fails, the next one is intact
        PipelineSharedState roles = PipelineSharedState.create(ThreadScope.BLOCK, 2);
        ThreadTeam trio = ThreadTeam.ofPlatform(3);
        Bounded.start("p07c-dies-holding-a-stage", () -> {
            Pipeline.make(trio.member(1), roles, PipelineRole.PRODUCER).producerAcquire();
            return "ended holding batch 0";
        });
        Bounded.start("p07c-producer", () -> {
            Pipeline pipe = Pipeline.make(trio.member(0), roles, PipelineRole.PRODUCER);
            for (int b = 0; b < 2; b++) {
                pipe.producerAcquire();
                pipe.producerCommit();
            }
            pipe.quit();
            return "committed 2";
        });
        Bounded.Run reader = Bounded.start("p07c-consumer", () -> {
            Pipeline pipe = Pipeline.make(trio.member(2), roles, PipelineRole.CONSUMER);
            StringJoiner seen = new StringJoiner(", ");
            for (int b = 0; b < 2; b++) {
                try {
                    pipe.consumerWait();
                    seen.add("batch " + b + " ok");
                } catch (StageFailedException e) {
                    seen.add("batch " + b + " failed");
                }
                pipe.consumerRelease();
            }
            pipe.quit();
            return seen.toString();
        });

        // (d) a thread that got a misuse exception and stays idle: its peer gets a hang report
        CountDownLatch end = new CountDownLatch(2);
        Bounded.Run reported = idleAfterMisuse("p07d", Duration.ofMillis(200), end,
            pipe -> {
                long start = System.nanoTime();
                try {
                    pipe.consumerWait();
                    return "batch 1 returned";
                } catch (IllegalStateException e) {
                    long millis = Teams.millisSince(start);
                    return !String.valueOf(e.getMessage()).startsWith("pipeline deadlock") ? "ISE: " + e.getMessage()
                        : millis <= 3000 ? "'pipeline deadlock' reported in time"
                        : "'pipeline deadlock' reported after " + millis + " ms";
                }
            });

        // (e) the same with detection off: nothing is reported
        Bounded.Run silent = idleAfterMisuse("p07e", Duration.ZERO, end, pipe -> {
            try {
                return pipe.consumerWaitFor(Duration.ofMillis(1500)) ? "batch 1 returned" : "nothing reported";
            } catch (IllegalStateException e) {
                return "reported: " + e.getMessage();
            }
        });

        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();       // the five ran side by side
        List<String> outcomes = List.of(
            "unified peer ended without quit: " + survivor.resultBy(deadline),
            "only producer ended without quit: " + orphan.resultBy(deadline),
            "producer ended holding a stage: " + reader.resultBy(deadline),
            "idle after misuse, 200 ms patience: " + reported.resultBy(deadline),
            "idle after misuse, detectDeadlocks(ZERO): " + silent.resultBy(deadline));
        end.countDown();
        end.countDown();
        assertEquals(List.of(
                "unified peer ended without quit: 5 batches",
                "only producer ended without quit: ISE naming the dead producer",
                "producer ended holding a stage: batch 0 failed, batch 1 ok",
                "idle after misuse, 200 ms patience: 'pipeline deadlock' reported in time",
                "idle after misuse, detectDeadlocks(ZERO): nothing reported"), outcomes,
            "a participant whose thread ended counts as quit (1 s default patience); an idle one after a misuse "
                + "exception is reported as a hang, unless detection is off");
    }

    /**
     * A producer (rank 0) commits batch 0, then calls a consumer operation (a misuse), then idles (alive) until
     * {@code end}; its consumer peer (rank 1) takes batch 0 and then runs {@code peerWait} for batch 1.
     */
    private static Bounded.Run idleAfterMisuse(String name, Duration patience, CountDownLatch end,
                                               Outcomes.PipeBody peerWait) {
        PipelineSharedState state;
        try {
            state = PipelineSharedState.builder(ThreadScope.BLOCK, 2).detectDeadlocks(patience).build();
        } catch (RuntimeException e) {
            String failure = "detectDeadlocks(" + patience + ") threw " + Bounded.describe(e);
            return Bounded.start(name, () -> failure);
        }
        ThreadTeam pair = ThreadTeam.ofPlatform(2);
        Bounded.start(name + "-misuser", () -> {
            Pipeline pipe = Pipeline.make(pair.member(0), state, PipelineRole.PRODUCER);
            pipe.producerAcquire();
            pipe.producerCommit();
            String misuse;
            try {
                pipe.consumerWait();
                misuse = "no exception";
            } catch (IllegalStateException e) {
                misuse = "IllegalStateException";
            }
            end.await(20, TimeUnit.SECONDS);
            return misuse;
        });
        return Bounded.start(name + "-peer", () -> {
            Pipeline pipe = Pipeline.make(pair.member(1), state, PipelineRole.CONSUMER);
            pipe.consumerWait();
            pipe.consumerRelease();
            try {
                return peerWait.run(pipe);
            } finally {
                end.countDown();
            }
        });
    }

    /**
     * The consumer polls with consumerWaitFor(20 ms), the usual server loop that checks a shutdown flag between
     * waits. The producer's thread has ended without quit. The patience is 200 ms, but each wait is a fresh call of
     * Waiting.await whose stall clock starts at 0, so no wait ever reaches its first stall check: the dead producer
     * is never abandoned and the consumer polls forever instead of being told "no producer is left".
     */
    @Test
    void aPollingConsumerIsToldAboutADeadProducerWithinThePatience() {
        assertTimeoutPreemptively(Teams.LIMIT, () -> {
            PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 2)
                .detectDeadlocks(Duration.ofMillis(200)).build();
            ThreadTeam team = ThreadTeam.ofPlatform(2);
            Thread producer = Thread.ofPlatform().name("dying-producer").start(() -> {
                Pipeline.make(team.member(0), state, PipelineRole.PRODUCER);
                // ends without quit()
            });
            AtomicReference<Object> outcome = new AtomicReference<>();
            Thread consumer = Thread.ofPlatform().start(() -> {
                Pipeline pipe = Pipeline.make(team.member(1), state, PipelineRole.CONSUMER);
                try {
                    producer.join();
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
                outcome.set(Teams.pollWaits(pipe, 5_000));     // the patience is 200 ms
            });
            consumer.join();
            assertInstanceOf(IllegalStateException.class, outcome.get(), String.valueOf(outcome.get()));
            assertTrue(((IllegalStateException) outcome.get()).getMessage().contains("dying-producer"),
                ((IllegalStateException) outcome.get()).getMessage());
        });
    }

    /**
     * Two consumers wait for a stage whose producer is slow but alive (hang detection on, patience 20 ms). Each
     * wakes every quarter of the patience for its stall check and pushes a fresh Waiter; Waiter.push only unlinks
     * given-up nodes at the top of the stack, and the top is always the other consumer's live node, so every
     * wake-up leaks one node until the phase completes: about 8 nodes a second per pair of waiters at the default
     * 1 s patience, forever, for an idle pipeline (a server waiting for requests).
     */
    @Test
    void stallCheckWakeUpsLeaveTheWaiterStackOfAnIdleStageBounded() {
        assertTimeoutPreemptively(Teams.LIMIT, () -> {
            PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 1)
                .detectDeadlocks(Duration.ofMillis(20)).build();
            AtomicReference<PhaseBarrier> stageBarrier = new AtomicReference<>();
            CountDownLatch measured = new CountDownLatch(1);
            AtomicReference<Integer> depth = new AtomicReference<>();
            ThreadTeam.ofPlatform(3).run(Teams.LIMIT, g -> {
                Pipeline pipe = Pipeline.make(g, state, 1);
                if (g.threadRank() == 0) {
                    stageBarrier.set(producedBarrier(pipe, 0));
                    stayAway(Duration.ofMillis(1_500));     // "waiting for input": alive, so never reported
                    depth.set(stackDepth(stageBarrier.get()));
                    measured.countDown();
                    pipe.producerAcquire();
                    pipe.producerCommit();
                } else {
                    pipe.consumerWait();
                    pipe.consumerRelease();
                }
                pipe.quit();
            });
            assertNotNull(depth.get());
            assertTrue(depth.get() <= 16, "the produced barrier's waiter stack holds " + depth.get()
                + " nodes for 2 waiters after 1.5 s: it leaks one node per stall-check wake-up");
        });
    }

    /** A file read that takes 1.5 s (patience 100 ms) is progress, not a hang. */
    @Test
    void aLongFileReadIsNotReportedAsAHang() {
        assertTimeoutPreemptively(Teams.LIMIT, () -> {
            PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 2)
                .detectDeadlocks(Duration.ofMillis(100)).build();
            GatedFileChannel file = new GatedFileChannel(new byte[4096]);
            CountDownLatch gate = file.gate(0);
            MemorySegment stage = Arena.ofShared().allocate(4096);
            Thread opener = Thread.ofPlatform().start(() -> {
                stayAway(Duration.ofMillis(1_500));
                gate.countDown();
            });
            ThreadTeam.ofPlatform(2).run(Teams.LIMIT, g -> {
                try (Pipeline pipe = Pipeline.make(g, state, 1)) {
                    if (g.threadRank() == 0) {
                        pipe.producerAcquire();
                        MemcpyAsync.memcpyAsync(stage, file, 0, 4096, pipe);
                        pipe.producerCommit();
                        pipe.producerAcquire();
                        pipe.producerCommit();
                    } else {
                        for (int b = 0; b < 2; b++) {
                            pipe.consumerWait();
                            pipe.consumerRelease();
                        }
                    }
                }
            });
            opener.join();
        });
    }

    /** A producer computing 1 s between commits (patience 100 ms) while two consumers wait is never reported. */
    @Test
    void aSlowProducerIsNotReportedAsAHang() {
        assertTimeoutPreemptively(Teams.LIMIT, () -> {
            PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 2)
                .detectDeadlocks(Duration.ofMillis(100)).build();
            ThreadTeam.ofPlatform(3).run(Teams.LIMIT, g -> {
                try (Pipeline pipe = Pipeline.make(g, state, 1)) {
                    for (int b = 0; b < 2; b++) {
                        if (g.threadRank() == 0) {
                            stayAway(Duration.ofMillis(1_000));
                            pipe.producerAcquire();
                            pipe.producerCommit();
                        } else {
                            pipe.consumerWait();
                            pipe.consumerRelease();
                        }
                    }
                }
            });
        });
    }

    /** Count partition of 3, P = 2: rank 1's thread ends before its first operation; the others proceed. */
    @Test
    void aDeadUndecidedThreadInACountPartitionIsSettled() {
        assertTimeoutPreemptively(Teams.LIMIT, () -> {
            PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 2)
                .detectDeadlocks(Duration.ofMillis(100)).build();
            ThreadTeam team = ThreadTeam.ofPlatform(3);
            Thread dead = Thread.ofPlatform().start(() -> Pipeline.make(team.member(1), state, 2));
            AtomicReference<Throwable> error = new AtomicReference<>();
            Thread producer = Thread.ofPlatform().start(() -> {
                try (Pipeline pipe = Pipeline.make(team.member(0), state, 2)) {
                    for (int b = 0; b < 5; b++) {
                        pipe.producerAcquire();
                        pipe.producerCommit();
                    }
                } catch (Throwable t) {
                    error.set(t);
                }
            });
            try (Pipeline pipe = Pipeline.make(team.member(2), state, 2)) {
                for (int b = 0; b < 5; b++) {
                    pipe.consumerWait();
                    pipe.consumerRelease();
                }
            }
            dead.join();
            producer.join();
            if (error.get() != null) {
                fail(error.get());
            }
        });
    }

    /** The produced barrier of stage {@code s} behind a block-scope pipeline handle. */
    private static PhaseBarrier producedBarrier(Pipeline pipe, int s) {
        return EngineProbe.groups(pipe.handle(), true)[0][s];
    }

    /** Nodes in a PhaseBarrier's waiter stack, live or given up. */
    private static int stackDepth(PhaseBarrier phaseBarrier) {
        return EngineProbe.stackDepth(phaseBarrier);
    }
}
