package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.fail;

import dev.jpipeline.internal.EngineProbe;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Groups that make pipelines on one shared state at the same time (a misuse): within each group every rank gets
 * the same answer (a pipeline for all, or IllegalArgumentException for all), no ring is ever shared between
 * groups, a pipeline a group got works for a round, nothing hangs, and the state serves one group afterwards.
 *
 * <p>The stress test's seed is printed; set {@code -Djpipeline.makeClash.seed=N} to replay its choices (the
 * interleaving itself is the scheduler's).
 */
class MakeClashTest {

    private static final Duration BOUND = Duration.ofSeconds(30);
    private static final long AWAIT_S = 10;

    /**
     * Group C (2 ranks, both on the state) has made: its rank 1 returned, its rank 0 is past the make's second
     * sync but has not yet left the make (its slot 0 is still taken). Group A (2 ranks) makes with rank 0 on
     * another state and rank 1 on C's state. From the state's view, C's rank 0 and A's rank 1 look like one
     * group of 2; A's rank 0 gets IllegalArgumentException on its own state, so A's rank 1 must get it too, and
     * must never hold a handle on C's ring.
     */
    @Test
    void aRankWhoseRankZeroMadeElsewhereNeverJoinsAnotherGroupsRing() {
        assertTimeoutPreemptively(BOUND, () -> {
            PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 2);
            PipelineSharedState elsewhere = PipelineSharedState.create(ThreadScope.BLOCK, 2);
            ThreadTeam teamC = ThreadTeam.ofPlatform(2);
            ThreadTeam teamA = ThreadTeam.ofPlatform(2);
            CountDownLatch c0PastSecondSync = new CountDownLatch(1);
            CountDownLatch releaseC0 = new CountDownLatch(1);
            Group c0 = Teams.afterSync(teamC.member(0), 2, () -> {
                c0PastSecondSync.countDown();
                awaitLatch(releaseC0, "the release of C's rank 0");
            });
            AtomicReference<Object> ringC = new AtomicReference<>();
            AtomicReference<Object> outcomeC0 = new AtomicReference<>();
            Thread tc0 = Thread.ofPlatform().start(() -> {
                Object o = makeOutcome(c0, state);
                outcomeC0.set(o);
                if (o instanceof Pipeline p) {
                    p.quit();
                }
            });
            Object c1 = makeOutcome(teamC.member(1), state);
            if (!(c1 instanceof Pipeline p)) {
                throw new AssertionError("C's rank 1 should get a pipeline, got " + c1);
            }
            ringC.set(EngineProbe.ring(p.handle()));
            awaitLatch(c0PastSecondSync, "C's rank 0 past its second sync");

            AtomicReference<Object> outcomeA0 = new AtomicReference<>();
            Thread ta0 = Thread.ofPlatform().start(() -> outcomeA0.set(makeOutcome(teamA.member(0), elsewhere)));
            Object a1 = makeOutcome(teamA.member(1), state);
            ta0.join(TimeUnit.SECONDS.toMillis(AWAIT_S));
            releaseC0.countDown();
            tc0.join(TimeUnit.SECONDS.toMillis(AWAIT_S));

            assertInstanceOf(Pipeline.class, outcomeC0.get(), "C's rank 0");
            assertInstanceOf(IllegalArgumentException.class, outcomeA0.get(), "A's rank 0 (alone on its state)");
            if (a1 instanceof Pipeline pa) {
                assertNotSame(ringC.get(), EngineProbe.ring(pa.handle()),
                    "A's rank 1 got a handle on group C's ring");
            }
            assertInstanceOf(IllegalArgumentException.class, a1,
                "A's rank 0 got IllegalArgumentException, so A's rank 1 must too");
            p.quit();
            roundOnFreshGroup(state, 2);
        });
    }

    /**
     * A rank interrupted while it waits in the make's first sync still makes (the syncs are uninterruptible) and
     * keeps its interrupt.
     */
    @Test
    void aRankInterruptedInsideTheMakeStillMakesAndKeepsItsInterrupt() {
        assertTimeoutPreemptively(BOUND, () -> {
            PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 2);
            AtomicInteger interruptedAfter = new AtomicInteger(-1);
            Teams.runSeeingPeers(2, (g, threads) -> {
                if (g.threadRank() == 1) {
                    Teams.awaitParked(threads[0], "makeUnified");
                    threads[0].interrupt();
                }
                Pipeline p = Pipeline.make(g, state);
                if (g.threadRank() == 0) {
                    interruptedAfter.set(Thread.interrupted() ? 1 : 0);
                }
                round(p, g, Kind.UNIFIED, 0);
                p.quit();
            });
            assertEquals(1, interruptedAfter.get(), "rank 0's interrupt was lost");
        });
    }

    enum Kind { UNIFIED, BY_COUNT, BY_ROLE }

    /**
     * Groups of 1, 2, 3 and 8 ranks, and a group of 3 whose rank 0 sometimes makes on a state of its own, loop
     * makes (of every kind) on one state; a rank sometimes interrupts itself before its make; every rank quits its
     * pipeline and makes again at once, while its peers may still be quitting. Checks: the ranks of a group agree,
     * no ring is ever held by two groups, every pipeline works for a round, and afterwards one group makes and
     * runs a round on the state.
     */
    @ParameterizedTest
    @EnumSource(value = ThreadScope.class, names = {"BLOCK", "DEVICE"})
    void groupsClashingOnOneStateAgreeAndNeverShareARing(ThreadScope scope) {
        long seed = Long.getLong("jpipeline.makeClash.seed", System.nanoTime());
        System.out.println("MakeClashTest seed " + seed + " (" + scope + "); replay with -Djpipeline.makeClash.seed="
            + seed);
        assertTimeoutPreemptively(BOUND, () -> {
            PipelineSharedState state = PipelineSharedState.create(scope, 2);
            PipelineSharedState elsewhere = PipelineSharedState.create(scope, 2);
            int[] sizes = {1, 2, 3, 8, 3};
            int split = 4;
            Map<Object, Integer> owners = new ConcurrentHashMap<>();
            long until = System.nanoTime() + Duration.ofMillis(1200).toNanos();
            AtomicInteger made = new AtomicInteger();
            AtomicInteger refused = new AtomicInteger();
            List<Thread> runners = new ArrayList<>();
            List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
            for (int gi = 0; gi < sizes.length; gi++) {
                int groupId = gi;
                int size = sizes[gi];
                runners.add(Thread.ofPlatform().name("clash-group-" + gi).start(() -> {
                    try {
                        runGroup(groupId, size, groupId == split, seed, until, state, elsewhere, owners, made,
                            refused);
                    } catch (Throwable t) {
                        failures.add(t);
                    }
                }));
            }
            for (Thread t : runners) {
                t.join();
            }
            if (!failures.isEmpty()) {
                AssertionError e = new AssertionError("seed " + seed + ": " + failures.getFirst(), failures.getFirst());
                failures.stream().skip(1).forEach(e::addSuppressed);
                throw e;
            }
            System.out.println("MakeClashTest " + scope + ": " + made.get() + " group makes, " + refused.get()
                + " refused");
            roundOnFreshGroup(state, 4);
        });
    }

    private static void runGroup(int groupId, int size, boolean split, long seed, long until,
                                 PipelineSharedState state, PipelineSharedState elsewhere, Map<Object, Integer> owners,
                                 AtomicInteger made, AtomicInteger refused) {
        Object[] outcomes = new Object[size];
        boolean[] stop = new boolean[1];
        ThreadTeam.ofPlatform(size).run(Duration.ofSeconds(25), g -> {
            int rank = g.threadRank();
            for (int iteration = 0; ; iteration++) {
                if (rank == 0) {
                    stop[0] = System.nanoTime() > until;
                }
                g.sync();
                if (stop[0]) {
                    return;
                }
                SplittableRandom choice = new SplittableRandom(seed ^ (groupId * 0x9E3779B97F4A7C15L) ^ iteration);
                Kind kind = size == 1 ? Kind.UNIFIED : Kind.values()[choice.nextInt(3)];
                int producers = size == 1 ? 0 : 1 + choice.nextInt(size - 1);
                boolean away = split && choice.nextInt(3) == 0;
                int interruptee = choice.nextInt(4 * size);
                PipelineSharedState mine = away && rank == 0 ? elsewhere : state;
                if (interruptee == rank) {
                    Thread.currentThread().interrupt();
                }
                Object outcome = switch (kind) {
                    case UNIFIED -> makeOutcome(() -> Pipeline.make(g, mine));
                    case BY_COUNT -> makeOutcome(() -> Pipeline.make(g, mine, producers));
                    case BY_ROLE -> makeOutcome(() -> Pipeline.make(g, mine,
                        rank < producers ? PipelineRole.PRODUCER : PipelineRole.CONSUMER));
                };
                if (interruptee == rank && !Thread.interrupted()) {
                    throw new AssertionError("group " + groupId + " rank " + rank + ": the make lost the interrupt");
                }
                outcomes[rank] = outcome;
                if (outcome instanceof Pipeline p) {
                    Object ring = EngineProbe.ring(p.handle());
                    Integer owner = owners.putIfAbsent(ring, groupId);
                    if (owner != null && owner != groupId) {
                        throw new AssertionError("group " + groupId + " rank " + rank + " (iteration " + iteration
                            + ") got a handle on group " + owner + "'s ring");
                    }
                } else if (!(outcome instanceof IllegalArgumentException)) {
                    throw new AssertionError("group " + groupId + " rank " + rank + ": make threw " + outcome,
                        (Throwable) outcome);
                }
                g.sync();
                boolean piped = outcomes[0] instanceof Pipeline;
                for (int r = 0; r < size; r++) {
                    if ((outcomes[r] instanceof Pipeline) != piped) {
                        throw new AssertionError("group " + groupId + " (size " + size + ", " + kind + (away
                            ? ", rank 0 elsewhere" : "") + ", iteration " + iteration + ") disagrees: rank 0 got "
                            + outcomes[0] + " but rank " + r + " got " + outcomes[r]);
                    }
                    if (piped && EngineProbe.ring(((Pipeline) outcomes[r]).handle())
                        != EngineProbe.ring(((Pipeline) outcomes[0]).handle())) {
                        throw new AssertionError("group " + groupId + ": ranks 0 and " + r + " got different rings");
                    }
                }
                if (away && piped) {
                    throw new AssertionError("group " + groupId + ": rank 0 made on another state, yet all got a "
                        + "pipeline");
                }
                g.sync();
                if (outcome instanceof Pipeline p) {
                    if (rank == 0) {
                        made.incrementAndGet();
                    }
                    round(p, g, kind, producers);
                    p.quit();   // and straight to the next make: peers may still be quitting
                } else if (rank == 0) {
                    refused.incrementAndGet();
                }
            }
        });
    }

    /** One round: every producer fills a stage, every consumer takes it. */
    private static void round(Pipeline p, Group g, Kind kind, int producers) {
        boolean produces = kind == Kind.UNIFIED || g.threadRank() < producers;
        boolean consumes = kind == Kind.UNIFIED || !produces;
        if (produces) {
            p.producerAcquire();
            p.producerCommit();
        }
        if (consumes) {
            p.consumerWait();
            p.consumerRelease();
        }
    }

    /** A fresh group of {@code size} makes a pipeline partitioned by count on {@code state} and runs a round. */
    private static void roundOnFreshGroup(PipelineSharedState state, int size) {
        Teams.run(size, g -> {
            Pipeline p = Pipeline.make(g, state, size / 2);
            round(p, g, Kind.BY_COUNT, size / 2);
            p.quit();
        });
    }

    private static Object makeOutcome(Group g, PipelineSharedState state) {
        return makeOutcome(() -> Pipeline.make(g, state));
    }

    private static Object makeOutcome(java.util.function.Supplier<Pipeline> make) {
        try {
            return make.get();
        } catch (Throwable t) {
            return t;
        }
    }

    private static void awaitLatch(CountDownLatch latch, String what) {
        try {
            if (!latch.await(AWAIT_S, TimeUnit.SECONDS)) {
                fail("timed out awaiting " + what);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            fail("interrupted awaiting " + what);
        }
    }

    /**
     * Hostile review of issue 8: two independent teams of 2 make a unified pipeline on the same shared state at the
     * same moment (a misuse: a shared state belongs to one group). Proposals used to be keyed by rank only, so the
     * teams overwrote each other's proposals, all four ranks passed the verdict, and all four got handles on ONE
     * ring that expects 2 arrivals: the two teams then completed each other's phases. Expected:
     * IllegalArgumentException (two threads claim the same rank), never one ring for two groups.
     */
    @Test
    void twoGroupsMakingOnOneSharedStateNeverShareAPipeline() {
        assertTimeoutPreemptively(BOUND, () -> {
            for (int attempt = 0; attempt < 20; attempt++) {
                PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 2);
                ThreadTeam teamA = ThreadTeam.ofPlatform(2);
                ThreadTeam teamB = ThreadTeam.ofPlatform(2);
                CyclicBarrier together = new CyclicBarrier(4);
                Object[] rings = new Object[4];
                Throwable[] errors = new Throwable[4];
                List<Thread> threads = new ArrayList<>();
                for (int i = 0; i < 4; i++) {
                    int who = i;
                    Group g = (who < 2 ? teamA : teamB).member(who % 2);
                    threads.add(Thread.ofPlatform().start(() -> {
                        try {
                            together.await();
                            Pipeline pipe = Pipeline.make(g, state);
                            rings[who] = EngineProbe.ring(pipe.handle());
                        } catch (Throwable t) {
                            errors[who] = t;
                        }
                    }));
                }
                for (Thread t : threads) {
                    t.join();
                }
                for (Throwable t : errors) {
                    if (t != null && !(t instanceof IllegalArgumentException)) {
                        fail("make failed with " + t, t);
                    }
                }
                for (int a = 0; a < 2; a++) {
                    for (int b = 2; b < 4; b++) {
                        if (rings[a] != null && rings[a] == rings[b]) {
                            fail("attempt " + attempt + ": team A's rank " + a + " and team B's rank " + (b - 2)
                                + " got handles on the same pipeline (" + rings[a] + ")");
                        }
                    }
                }
            }
        });
    }
}
