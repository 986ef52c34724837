package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.junit.jupiter.api.Test;

/** Conformance scenarios 1-9 (libcudacxx-pipeline-semantics.md §15 A: creation and shared state). */
class ConformanceCreationTest {

    /** A bound for makes that must fail or complete (one that detects a mismatch late, by a timeout, has it). */
    private static final Duration MAKE_BOUND = Duration.ofSeconds(5);

    @Test
    void s01_unifiedCountsEveryThread() {
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 2);
        AtomicInteger earlyResult = new AtomicInteger(-1);
        AtomicInteger passed = new AtomicInteger();
        Teams.run(4, g -> {
            Pipeline pipe = Pipeline.make(g, state);
            int r = g.threadRank();
            if (r != 3) {
                pipe.producerAcquire();
                pipe.producerCommit();
            }
            g.sync();
            if (r == 0) {
                earlyResult.set(pipe.consumerWaitFor(Duration.ofMillis(100)) ? 1 : 0);
            }
            g.sync();
            if (r == 3) {
                pipe.producerAcquire();
                pipe.producerCommit();
            }
            pipe.consumerWait();
            passed.incrementAndGet();
            pipe.consumerRelease();
            pipe.quit();
        });
        assertEquals(0, earlyResult.get(), "stage 0 needs the commits of all four ranks");
        assertEquals(4, passed.get());
    }

    /** A group view that counts its syncs. */
    private record CountingGroup(Group inner, AtomicIntegerArray syncs) implements Group {
        public int size() {
            return inner.size();
        }

        public int threadRank() {
            return inner.threadRank();
        }

        public void sync() {
            syncs.incrementAndGet(inner.threadRank());
            inner.sync();
        }
    }

    @Test
    void s02_collectiveMakeSyncsTwice() {
        for (String form : new String[] {"unified", "count", "role"}) {
            PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 2);
            AtomicIntegerArray syncs = new AtomicIntegerArray(4);
            Teams.run(4, g -> {
                Group counting = new CountingGroup(g, syncs);
                Pipeline pipe = switch (form) {
                    case "unified" -> Pipeline.make(counting, state);
                    case "count" -> Pipeline.make(counting, state, 2);
                    default -> Pipeline.make(counting, state,
                        g.threadRank() % 2 == 0 ? PipelineRole.PRODUCER : PipelineRole.CONSUMER);
                };
                g.sync();
                pipe.quit();
            });
            // one sync after every rank has stated how it makes the pipeline, one after every rank has its handle
            for (int r = 0; r < 4; r++) {
                assertEquals(2, syncs.get(r), form + " make: syncs of rank " + r);
            }
        }
    }

    @Test
    void s03_countPartitionNeedsEveryProducerAndEveryConsumer() {
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 2);
        AtomicIntegerArray early = new AtomicIntegerArray(6);
        long[] releasedAt = new long[1];
        long[] acquiredAt = new long[6];
        Teams.runSeeingPeers(6, (g, threads) -> {
            int r = g.threadRank();
            boolean producer = r >= 4;      // the caller chooses: ranks 4 and 5 produce
            Pipeline pipe = Pipeline.make(g, state, 2);
            if (r == 4) {
                pipe.producerAcquire();
                pipe.producerCommit();
            }
            g.sync();
            if (!producer) {
                early.set(r, pipe.consumerWaitFor(Duration.ofMillis(50)) ? 1 : 0);
            }
            g.sync();
            if (producer) {
                if (r == 5) {
                    pipe.producerAcquire();
                    pipe.producerCommit();              // stage 0 now complete
                }
                pipe.producerAcquire();
                pipe.producerCommit();                  // stage 1, round 0
                pipe.producerAcquire();                 // stage 0, round 1: needs all 4 releases of round 0
                acquiredAt[r] = System.nanoTime();
                pipe.producerCommit();
            } else {
                pipe.consumerWait();
                if (r == 3) {
                    // both producers block in the round-1 acquire before the last release of round 0
                    Teams.awaitParked(threads[4], "producerAcquire");
                    Teams.awaitParked(threads[5], "producerAcquire");
                    releasedAt[0] = System.nanoTime();
                }
                pipe.consumerRelease();
                for (int i = 0; i < 2; i++) {
                    pipe.consumerWait();
                    pipe.consumerRelease();
                }
            }
            pipe.quit();
        });
        for (int r = 0; r < 4; r++) {
            assertEquals(0, early.get(r), "consumer " + r + " must wait for both producers");
        }
        assertTrue(acquiredAt[4] >= releasedAt[0] && acquiredAt[5] >= releasedAt[0],
            "round-1 acquire returned before the last consumer released round 0");
    }

    @Test
    void s04_rolePartitionDerivesCountsAndRoundTrips() {
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 2);
        int batches = 100;
        MemorySegment[] stages = {MemorySegment.ofArray(new long[3]), MemorySegment.ofArray(new long[3])};
        AtomicInteger checked = new AtomicInteger();
        Teams.run(6, g -> {
            int r = g.threadRank();
            boolean producer = r % 2 == 1;          // odd ranks produce, as in the official test
            Pipeline pipe = Pipeline.make(g, state, producer ? PipelineRole.PRODUCER : PipelineRole.CONSUMER);
            MemorySegment src = MemorySegment.ofArray(new long[1]);
            for (int b = 0; b < batches; b++) {
                MemorySegment stage = stages[b % 2];
                if (producer) {
                    pipe.producerAcquire();
                    src.set(ValueLayout.JAVA_LONG, 0, 1000L * b + r);
                    MemcpyAsync.memcpyAsync(stage.asSlice(8L * (r / 2)), src, 8, pipe);
                    pipe.producerCommit();
                } else {
                    pipe.consumerWait();
                    for (int p = 0; p < 3; p++) {
                        assertEquals(1000L * b + 2 * p + 1, stage.getAtIndex(ValueLayout.JAVA_LONG, p));
                    }
                    checked.incrementAndGet();
                    pipe.consumerRelease();
                }
            }
            pipe.quit();
        });
        assertEquals(3 * batches, checked.get());
    }

    /**
     * CUDA's official group-concept test varies the integral types of size() and thread_rank(); in Java they
     * are int, so this scenario keeps its other half: a hand-written one-thread group drives a round trip.
     */
    @Test
    void s05_handWrittenGroupRoundTrips() {
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 1);
        Group solo = Teams.soloGroup();
        Pipeline pipe = Pipeline.make(solo, state);
        MemorySegment src = MemorySegment.ofArray(new byte[] {1, 2});
        MemorySegment dst = MemorySegment.ofArray(new byte[2]);
        pipe.producerAcquire();
        MemcpyAsync.memcpyAsync(solo, dst, src, 1, pipe);
        MemcpyAsync.memcpyAsync(solo, dst.asSlice(1), src.asSlice(1), AlignedSize.of(1, 1), pipe);
        pipe.producerCommit();
        pipe.consumerWait();
        assertEquals(1, dst.get(ValueLayout.JAVA_BYTE, 0));
        assertEquals(2, dst.get(ValueLayout.JAVA_BYTE, 1));
        pipe.consumerRelease();
        assertTrue(pipe.quit());
    }

    @Test
    void s06_reuseAfterEveryoneQuit() {
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.DEVICE, 2);
        AtomicInteger lastOwners = new AtomicInteger();
        AtomicInteger delivered = new AtomicInteger();
        Teams.run(4, g -> {
            Pipeline unified = Pipeline.make(g, state);
            for (int b = 0; b < 5; b++) {
                unified.producerAcquire();
                unified.producerCommit();
                unified.consumerWait();
                unified.consumerRelease();
            }
            if (unified.quit()) {
                lastOwners.incrementAndGet();
            }
            g.sync();
            boolean producer = g.threadRank() < 2;
            Pipeline partitioned = Pipeline.make(g, state, 2);
            for (int b = 0; b < 5; b++) {
                if (producer) {
                    partitioned.producerAcquire();
                    partitioned.producerCommit();
                } else {
                    partitioned.consumerWait();
                    delivered.incrementAndGet();
                    partitioned.consumerRelease();
                }
            }
            if (partitioned.quit()) {
                lastOwners.incrementAndGet();
            }
        });
        assertEquals(2, lastOwners.get(), "one last owner per pipeline");
        assertEquals(10, delivered.get());
    }

    /**
     * Upstream's group-concept test makes four pipelines on one state without quitting, the first three with
     * one thread partitioned into (1 producer, 0 consumers) or a single role. jpipeline rejects those three (a
     * partitioned pipeline needs at least one thread on each side, which CUDA leaves undefined); re-making
     * without quitting stays allowed, only the newest pipeline is used, and closing them all raises nothing.
     */
    @Test
    void s07_remakeWithoutQuitting() {
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.SYSTEM, 1);
        Group solo = Teams.soloGroup();
        IllegalArgumentException byCount = assertThrows(IllegalArgumentException.class,
            () -> Pipeline.make(solo, state, 1));
        assertTrue(byCount.getMessage().contains("needs 1..0 producers in a group of 1"), byCount.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Pipeline.make(solo, state, PipelineRole.CONSUMER));
        assertThrows(IllegalArgumentException.class, () -> Pipeline.make(solo, state, PipelineRole.PRODUCER));
        Pipeline first = Pipeline.make(solo, state);
        Pipeline second = Pipeline.make(solo, state);
        second.producerAcquire();
        second.producerCommit();
        second.consumerWait();
        second.consumerRelease();
        first.close();
        second.close();
        assertFalse(first.isActive());
        assertFalse(second.isActive());
    }

    @Test
    void s08_threadScopeMakeNeedsNothingAndIsPerThread() throws Exception {
        Pipeline mine = Pipeline.make();
        assertEquals(ThreadScope.THREAD, mine.scope());
        mine.producerAcquire();
        mine.producerCommit();
        long[] theirOutstanding = {-1, -1};         // read back here: an assertion in the other thread is lost
        Thread other = Thread.ofPlatform().start(() -> {
            Pipeline theirs = Pipeline.make();
            theirOutstanding[0] = Teams.outstanding(theirs);
            theirs.producerAcquire();
            theirs.producerCommit();
            theirs.producerAcquire();
            theirs.producerCommit();
            theirOutstanding[1] = Teams.outstanding(theirs);
        });
        other.join(Teams.LIMIT.toMillis());
        assertEquals(0, theirOutstanding[0], "a new handle starts empty");
        assertEquals(2, theirOutstanding[1], "the other thread's own two batches");
        assertEquals(1, Teams.outstanding(mine), "handles are independent");
    }

    @Test
    void s09_threadScopeSharedStateIsRejected() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> PipelineSharedState.create(ThreadScope.THREAD, 2));
        assertTrue(e.getMessage().contains("THREAD scope"), e.getMessage());
    }

    /**
     * Issue 8, promise 5: a mismatched collective make fails on every rank, never hangs; consecutive makes on one
     * state by one group each complete.
     */
    @Test
    void aMismatchedCollectiveMakeFailsOnEveryRankAndConsecutiveMakesEachComplete() {
        // the sub-cases run side by side; a make that detects a mismatch late (by a timeout) has MAKE_BOUND to do so
        PipelineSharedState countVsRole = PipelineSharedState.create(ThreadScope.BLOCK, 2);
        Bounded.Run countAndRole = Bounded.start("p05-count-vs-role", () -> Bounded.eachRank(2, MAKE_BOUND,
            g -> made(() -> g.threadRank() == 0 ? Pipeline.make(g, countVsRole, 1)
                : Pipeline.make(g, countVsRole, PipelineRole.CONSUMER))));
        PipelineSharedState[] states = {PipelineSharedState.create(ThreadScope.BLOCK, 2),
            PipelineSharedState.create(ThreadScope.BLOCK, 2)};
        Bounded.Run twoStates = Bounded.start("p05-states", () -> Bounded.eachRank(2, MAKE_BOUND,
            g -> made(() -> Pipeline.make(g, states[g.threadRank()]))));
        PipelineSharedState nullRole = PipelineSharedState.create(ThreadScope.BLOCK, 2);
        PipelineRole[] roles = {PipelineRole.PRODUCER, PipelineRole.CONSUMER, null};
        Bounded.Run withNull = Bounded.start("p05-null-role", () -> Bounded.eachRank(3, MAKE_BOUND,
            g -> made(() -> Pipeline.make(g, nullRole, roles[g.threadRank()]))));
        PipelineSharedState counts = PipelineSharedState.create(ThreadScope.BLOCK, 2);
        Bounded.Run twoCounts = Bounded.start("p05-counts", () -> Bounded.eachRank(4, MAKE_BOUND,
            g -> made(() -> Pipeline.make(g, counts, g.threadRank() == 3 ? 1 : 2))));
        PipelineSharedState reused = PipelineSharedState.create(ThreadScope.BLOCK, 2);
        int makes = 300;
        Bounded.Run consecutive = Bounded.start("p05-consecutive", () -> Bounded.eachRank(4, MAKE_BOUND, g -> {
            for (int i = 0; i < makes; i++) {
                int make = i;
                String made = made(() -> switch (make % 3) {
                    case 0 -> Pipeline.make(g, reused);
                    case 1 -> Pipeline.make(g, reused, g.threadRank() == 0 ? PipelineRole.PRODUCER
                        : PipelineRole.CONSUMER);
                    default -> Pipeline.make(g, reused, 2);
                });
                if (!made.equals("made")) {
                    return "make " + i + ": " + made;
                }
            }
            return "all made";
        }));
        long deadline = System.nanoTime() + MAKE_BOUND.toNanos() + 1_000_000_000L;
        List<String> outcomes = List.of(
            "make(g, s, 1) vs make(g, s, CONSUMER): " + countAndRole.resultBy(deadline),
            "a different state per rank: " + twoStates.resultBy(deadline),
            "roles PRODUCER, CONSUMER, null: " + withNull.resultBy(deadline),
            "producer counts 2, 2, 2, 1: " + twoCounts.resultBy(deadline),
            makes + " consecutive makes without quit: " + consecutive.resultBy(deadline));
        assertEquals(List.of(
                "make(g, s, 1) vs make(g, s, CONSUMER): rank 0: IllegalArgumentException | rank 1: "
                    + "IllegalArgumentException",
                "a different state per rank: rank 0: IllegalArgumentException | rank 1: IllegalArgumentException",
                "roles PRODUCER, CONSUMER, null: rank 0: IllegalArgumentException | rank 1: "
                    + "IllegalArgumentException | rank 2: IllegalArgumentException",
                "producer counts 2, 2, 2, 1: rank 0: IllegalArgumentException | rank 1: IllegalArgumentException | "
                    + "rank 2: IllegalArgumentException | rank 3: IllegalArgumentException",
                makes + " consecutive makes without quit: rank 0: all made | rank 1: all made | rank 2: all made | "
                    + "rank 3: all made"),
            outcomes, "a mismatched collective make must fail on every rank, never hang; consecutive makes on one "
                + "state by one group must each complete for all ranks");
    }

    /** "made", or the simple name of what the make threw (a mismatch message may be long; the class decides). */
    private static String made(Make make) {
        try {
            make.make();
            return "made";
        } catch (RuntimeException e) {
            return e instanceof IllegalArgumentException ? "IllegalArgumentException"
                : Bounded.describe(e).substring(0, Math.min(120, Bounded.describe(e).length()));
        }
    }

    private interface Make {
        Pipeline make();
    }

    /** The same group makes on one state 200 times without quitting (upstream's group test; issue 8). */
    @Test
    void consecutiveMakesOnOneStateNeverMix() {
        assertTimeoutPreemptively(Teams.LIMIT, () -> {
            PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 2);
            ThreadTeam.ofPlatform(3).run(Teams.LIMIT, g -> {
                for (int i = 0; i < 200; i++) {
                    Pipeline pipe = i % 3 == 0 ? Pipeline.make(g, state)
                        : i % 3 == 1 ? Pipeline.make(g, state, 1)
                        : Pipeline.make(g, state, g.threadRank() == 0 ? PipelineRole.PRODUCER : PipelineRole.CONSUMER);
                    if (i % 3 == 0) {
                        pipe.producerAcquire();
                        pipe.producerCommit();
                        pipe.consumerWait();
                        pipe.consumerRelease();
                    } else if (g.threadRank() == 0) {
                        pipe.producerAcquire();
                        pipe.producerCommit();
                    } else {
                        pipe.consumerWait();
                        pipe.consumerRelease();
                    }
                }
            });
        });
    }
}
