package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.jpipeline.copy.CopyEngine;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.LongPredicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * The contract every pipeline kind keeps, written once (JCTools' {@code QueueSanityTest} pattern): a small
 * subclass per kind and thread type supplies the {@link Kind} (how a team's handles are made, which ranks
 * produce and which consume) and the {@link Threads} the team runs on.
 *
 * <pre>
 *   kind          team   producers      consumers      handles
 *   THREAD_SCOPE  1      rank 0         rank 0         Pipeline.make(engine), one per thread
 *   UNIFIED       2      ranks 0, 1     ranks 0, 1     Pipeline.make(g, state)
 *   BY_COUNT      3      ranks 0, 1     rank 2         Pipeline.make(g, state, 2)   (sides taken by first use)
 *   BY_ROLE       3      rank 0         ranks 1, 2     Pipeline.make(g, state, role)
 * </pre>
 *
 * Each producer owns a 64-byte slot of every stage and fills it with a pattern naming the batch and itself,
 * by plain writes or by {@code memcpyAsync} on a copy engine that runs every copy asynchronously; consumers
 * check every slot. A rank that both produces and consumes runs {@code STAGES - 1} batches ahead, as the CUDA
 * examples prefetch. A stage is held back, where a test needs a pending one, by a producer's copy from a
 * {@link GatedFileChannel} whose gate is closed. Threads are ordered by observing them ({@link ThreadStates}) or
 * by the group's sync, never by sleeping; every team run is bounded by {@link #LIMIT}.
 */
abstract class PipelineContractTest {

    /** Stages of the shared kinds, and how far a thread-scope or unified thread runs ahead (minus one). */
    static final int STAGES = 3;
    /** Bytes each producer writes into a stage: 8 longs. */
    static final int SLOT = 64;
    /** Every team run is bounded: far longer than any test needs, far shorter than the surefire limit. */
    static final Duration LIMIT = Duration.ofSeconds(5);
    /** A poll (zero, negative or past limit) must return at once; this bounds "at once" on a loaded machine. */
    static final long POLL_MILLIS = 500;
    /** How much later than its limit a timed wait may return on a loaded machine. */
    static final long LATE_MILLIS = 1500;

    /** The kinds of pipeline: how a team's handles are made, and which ranks produce and consume. */
    enum Kind {
        THREAD_SCOPE(1) {
            @Override
            Pipeline make(Group group, PipelineSharedState state, CopyEngine engine) {
                return Pipeline.make(engine);               // each thread makes its own
            }
        },
        UNIFIED(2) {
            @Override
            Pipeline make(Group group, PipelineSharedState state, CopyEngine engine) {
                return Pipeline.make(group, state);
            }
        },
        BY_COUNT(3) {
            @Override
            Pipeline make(Group group, PipelineSharedState state, CopyEngine engine) {
                return Pipeline.make(group, state, 2);
            }

            @Override
            boolean produces(int rank) {
                return rank < 2;
            }

            @Override
            boolean consumes(int rank) {
                return rank >= 2;
            }
        },
        BY_ROLE(3) {
            @Override
            Pipeline make(Group group, PipelineSharedState state, CopyEngine engine) {
                return Pipeline.make(group, state, group.threadRank() == 0 ? PipelineRole.PRODUCER
                    : PipelineRole.CONSUMER);
            }

            @Override
            boolean produces(int rank) {
                return rank == 0;
            }

            @Override
            boolean consumes(int rank) {
                return rank != 0;
            }
        };

        final int teamSize;

        Kind(int teamSize) {
            this.teamSize = teamSize;
        }

        /** Makes the calling rank's handle (collectively, for the shared kinds). */
        abstract Pipeline make(Group group, PipelineSharedState state, CopyEngine engine);

        /** Whether the thread of {@code rank} produces; every thread does unless the kind partitions. */
        boolean produces(int rank) {
            return true;
        }

        /** Whether the thread of {@code rank} consumes; every thread does unless the kind partitions. */
        boolean consumes(int rank) {
            return true;
        }

        /** Whether handles share a state (so that there are peers, and one last owner). */
        boolean shared() {
            return this != THREAD_SCOPE;
        }

        /** Whether each thread is either a producer or a consumer. */
        boolean partitioned() {
            return this == BY_COUNT || this == BY_ROLE;
        }
    }

    /** The threads a team (and each helper thread of a test) runs on. */
    enum Threads {
        PLATFORM, VIRTUAL;

        ThreadTeam team(int size) {
            return this == PLATFORM ? ThreadTeam.ofPlatform(size) : ThreadTeam.ofVirtual(size);
        }

        Thread start(String name, Runnable body) {
            return (this == PLATFORM ? Thread.ofPlatform().daemon().name(name) : Thread.ofVirtual().name(name))
                .start(body);
        }
    }

    /** One rank's part of a test; may throw, as the pipeline's interruptible waits do. */
    @FunctionalInterface
    interface RankBody {
        void run(Group group) throws Exception;
    }

    /** What a rank does with one batch on one of its sides. */
    @FunctionalInterface
    interface Step {
        void run(Pipeline pipe, long batch) throws Exception;
    }

    /** Which producer slots a consumer checks in a batch. */
    @FunctionalInterface
    interface Written {
        boolean by(long batch, int producer);
    }

    private static final Written ALL = (batch, producer) -> true;

    private final Kind kind;
    private final Threads threads;
    private CopyEngine engine;
    /** Gates of the test's gated channels: opened after each test, so that no worker stays blocked. */
    private final List<CountDownLatch> gates = new CopyOnWriteArrayList<>();

    PipelineContractTest(Kind kind, Threads threads) {
        this.kind = kind;
        this.threads = threads;
    }

    @BeforeEach
    void startEngine() {
        engine = CopyEngine.builder().workers(2).inlineThreshold(0).name("contract-copy").build();
    }

    @AfterEach
    void stopEngine() {
        gates.forEach(CountDownLatch::countDown);
        engine.close();
    }

    // ---------------------------------------------------------------------------------------------------------
    // Data flow

    @Test
    void batchesReachEveryConsumerInOrderWithTheirData() {
        int batches = 300;
        PipelineSharedState state = newState();
        MemorySegment[] stages = newStages();
        AtomicIntegerArray consumed = new AtomicIntegerArray(kind.teamSize);
        runTeam(g -> {
            int rank = g.threadRank();
            try (Pipeline pipe = make(g, state)) {
                consumed.set(rank, stream(pipe, rank, batches, writeOrCopy(stages, rank, b -> b % 3 == 1),
                    verify(stages, rank, ALL)));
            }
        });
        for (int rank = 0; rank < kind.teamSize; rank++) {
            if (kind.consumes(rank)) {
                assertEquals(batches, consumed.get(rank), "batches that rank " + rank + " consumed");
            }
        }
    }

    @Test
    void acquireAndWaitAreIdempotentUntilCommitAndRelease() {
        PipelineSharedState state = newState();
        MemorySegment[] stages = newStages();
        runTeam(g -> {
            int rank = g.threadRank();
            try (Pipeline pipe = make(g, state)) {
                Step produce = (p, b) -> {
                    p.producerAcquire();
                    p.producerAcquire();
                    p.producerAcquireInterruptibly();
                    fill(slot(stages, b, producerIndex(rank)), b, producerIndex(rank));
                    p.producerCommit();
                };
                Step consume = (p, b) -> {
                    p.consumerWait();
                    p.consumerWait();
                    p.consumerWaitInterruptibly();
                    assertTrue(p.consumerWaitFor(Duration.ZERO), "rank " + rank + ": a completed wait polls true");
                    assertTrue(p.consumerWaitUntil(Instant.now().minusSeconds(1)),
                        "rank " + rank + ": a completed wait is true for a past deadline too");
                    checkSlots(stages, b, rank, ALL);
                    p.consumerRelease();
                };
                stream(pipe, rank, 2 * STAGES + 1, produce, consume);
            }
        });
    }

    // ---------------------------------------------------------------------------------------------------------
    // Timed waits

    @Test
    void timedWaitsAreTrueOnAReadyStageAndFalseWithinTheirLimitOnAPendingOne() {
        PipelineSharedState state = newState();
        MemorySegment[] stages = newStages();
        GatedFileChannel file = new GatedFileChannel(fileData(SLOT));
        CountDownLatch gate = gate(file, 0);
        runTeam(g -> {
            int rank = g.threadRank();
            try (Pipeline pipe = make(g, state)) {
                if (kind.produces(rank)) {
                    commitHeldBack(pipe, stages, rank, file);        // batch 0: held back by rank 0's copy
                }
                g.sync();
                if (kind.consumes(rank)) {
                    assertPendingWaitsReturnFalse(pipe, rank);
                }
                g.sync();
                if (rank == 0) {
                    gate.countDown();
                }
                if (kind.consumes(rank)) {
                    assertTrue(pipe.consumerWaitFor(LIMIT), "rank " + rank + ": batch 0 once its copy landed");
                    assertReadyWaitsReturnTrue(pipe, rank);
                    pipe.consumerRelease();
                }
                if (kind.produces(rank)) {                           // batch 1 has no copies: ready at commit
                    pipe.producerAcquire();
                    fill(slot(stages, 1, producerIndex(rank)), 1, producerIndex(rank));
                    pipe.producerCommit();
                }
                g.sync();
                if (kind.consumes(rank)) {
                    assertReadyWaitsReturnTrue(pipe, rank);         // the first call on batch 1 is a poll
                    checkSlots(stages, 1, rank, ALL);
                    pipe.consumerRelease();
                }
            }
        });
    }

    private static void assertPendingWaitsReturnFalse(Pipeline pipe, int rank) {
        assertPolls(rank, "consumerWaitFor(ZERO)", () -> pipe.consumerWaitFor(Duration.ZERO));
        assertPolls(rank, "consumerWaitFor(-5 ms)", () -> pipe.consumerWaitFor(Duration.ofMillis(-5)));
        assertPolls(rank, "consumerWaitUntil(a second ago)",
            () -> pipe.consumerWaitUntil(Instant.now().minusSeconds(1)));
        assertPolls(rank, "consumerWaitUntil(EPOCH)", () -> pipe.consumerWaitUntil(Instant.EPOCH));
        assertTimesOut(rank, "consumerWaitFor(100 ms)", 100, () -> pipe.consumerWaitFor(Duration.ofMillis(100)));
        assertTimesOut(rank, "consumerWaitUntil(now + 100 ms)", 90,
            () -> pipe.consumerWaitUntil(Instant.now().plusMillis(100)));
        assertPolls(rank, "consumerWaitFor(1 ns)", () -> pipe.consumerWaitFor(Duration.ofNanos(1)));
    }

    private static void assertReadyWaitsReturnTrue(Pipeline pipe, int rank) {
        assertTrue(pipe.consumerWaitFor(Duration.ZERO), "rank " + rank + ": consumerWaitFor(ZERO) on a ready stage");
        assertTrue(pipe.consumerWaitFor(Duration.ofMillis(-5)), "rank " + rank + ": negative timeout, ready stage");
        assertTrue(pipe.consumerWaitFor(Duration.ofNanos(1)), "rank " + rank + ": 1 ns timeout, ready stage");
        assertTrue(pipe.consumerWaitUntil(Instant.EPOCH), "rank " + rank + ": past deadline, ready stage");
    }

    private static void assertPolls(int rank, String call, BooleanSupplier wait) {
        long start = System.nanoTime();
        boolean ready = wait.getAsBoolean();
        long millis = Teams.millisSince(start);
        assertFalse(ready, "rank " + rank + ": " + call + " on a pending stage returned true");
        assertTrue(millis < POLL_MILLIS, "rank " + rank + ": " + call + " must poll once, but took " + millis + " ms");
    }

    private static void assertTimesOut(int rank, String call, long atLeastMillis, BooleanSupplier wait) {
        long start = System.nanoTime();
        boolean ready = wait.getAsBoolean();
        long millis = Teams.millisSince(start);
        assertFalse(ready, "rank " + rank + ": " + call + " on a pending stage returned true");
        assertTrue(millis >= atLeastMillis && millis <= 100 + LATE_MILLIS,
            "rank " + rank + ": " + call + " returned false after " + millis + " ms");
    }

    // ---------------------------------------------------------------------------------------------------------
    // Interrupts

    @Test
    void aWaitingConsumerIsInterruptibleOnlyInTheInterruptiblyVariant() {
        PipelineSharedState state = newState();
        MemorySegment[] stages = newStages();
        GatedFileChannel file = new GatedFileChannel(fileData(SLOT));
        CountDownLatch gate = gate(file, 0);
        int victim = firstConsumer();
        runTeam(g -> {
            int rank = g.threadRank();
            try (Pipeline pipe = make(g, state)) {
                if (kind.produces(rank)) {
                    commitHeldBack(pipe, stages, rank, file);
                }
                g.sync();
                if (rank == victim) {
                    assertInterruptibleWaitThrows(() -> pipe.consumerWaitInterruptibly(),
                        "consumerWaitInterruptibly");
                    assertUninterruptibleWaitGoesOn(pipe::consumerWait, "consumerWait", gate::countDown);
                    pipe.consumerRelease();
                } else if (kind.consumes(rank)) {
                    pipe.consumerWait();
                    pipe.consumerRelease();
                }
            }
        });
    }

    @Test
    void aWaitingProducerIsInterruptibleOnlyInTheInterruptiblyVariant() {
        assumeTrue(kind.shared(), "a thread-scope acquire never waits");
        PipelineSharedState state = newState();
        MemorySegment[] stages = newStages();
        CountDownLatch mayRelease = new CountDownLatch(1);
        int victim = 0;
        runTeam(g -> {
            int rank = g.threadRank();
            try (Pipeline pipe = make(g, state)) {
                if (kind.produces(rank)) {
                    for (int b = 0; b < STAGES; b++) {                  // every stage in use
                        produceBatch(pipe, stages, rank, b);
                    }
                }
                if (rank == victim) {
                    if (kind.consumes(rank)) {                          // unified: it releases its own part, so
                        for (int b = 0; b < STAGES; b++) {              // that it waits for its peer only
                            pipe.consumerWait();
                            pipe.consumerRelease();
                        }
                    }
                    assertInterruptibleWaitThrows(pipe::producerAcquireInterruptibly, "producerAcquireInterruptibly");
                    assertUninterruptibleWaitGoesOn(pipe::producerAcquire, "producerAcquire", mayRelease::countDown);
                    pipe.producerCommit();
                } else if (kind.consumes(rank)) {
                    assertTrue(mayRelease.await(LIMIT.toMillis(), TimeUnit.MILLISECONDS), "mayRelease");
                    pipe.consumerWait();
                    checkSlots(stages, 0, rank, ALL);
                    pipe.consumerRelease();                             // stage 0 becomes free for the victim
                }
            }
        });
    }

    /** Runs {@code waitCall}, which must block; a helper interrupts it there; it must throw InterruptedException. */
    private void assertInterruptibleWaitThrows(Executable waitCall, String method) throws Exception {
        Thread me = Thread.currentThread();
        AtomicReference<Throwable> helperFailure = new AtomicReference<>();
        Thread helper = threads.start("interrupter", () -> {
            try {
                ThreadStates.awaitWaitingIn(me, method);
                me.interrupt();
            } catch (Throwable t) {
                helperFailure.set(t);
            }
        });
        assertThrows(InterruptedException.class, waitCall, method + " interrupted while waiting must throw");
        Thread.interrupted();
        helper.join(LIMIT.toMillis());
        if (helperFailure.get() != null) {
            throw new AssertionError(helperFailure.get().getMessage(), helperFailure.get());
        }
    }

    /**
     * Runs {@code waitCall}, which must block; a helper interrupts it there, sees it take the interrupt and wait
     * again, and only then lets it complete ({@code unblock}). The wait must return only after that, with the
     * interrupt status set.
     */
    private void assertUninterruptibleWaitGoesOn(Runnable waitCall, String method, Runnable unblock) {
        Thread me = Thread.currentThread();
        AtomicBoolean waitedOn = new AtomicBoolean();
        AtomicReference<Throwable> helperFailure = new AtomicReference<>();
        threads.start("interrupter", () -> {
            try {
                ThreadStates.awaitWaitingIn(me, method);
                me.interrupt();
                ThreadStates.awaitWaitingAgainAfterInterrupt(me, method);
                waitedOn.set(true);
            } catch (Throwable t) {
                helperFailure.set(t);
            } finally {
                unblock.run();
            }
        });
        waitCall.run();
        boolean interrupted = Thread.interrupted();
        if (helperFailure.get() != null) {
            throw new AssertionError(helperFailure.get().getMessage(), helperFailure.get());
        }
        assertTrue(waitedOn.get(), method + " returned before it could: the interrupt ended it");
        assertTrue(interrupted, method + " must keep the interrupt status");
    }

    // ---------------------------------------------------------------------------------------------------------
    // Quit and close

    @Test
    void aThreadThatQuitsLetsTheOthersProceedAndExactlyOneQuitReturnsTrue() {
        assumeTrue(kind.shared(), "a thread-scope pipeline has no peers");
        int batches = 4 * STAGES;
        PipelineSharedState state = newState();
        MemorySegment[] stages = newStages();
        int quitter = quitter();
        int quitterSlot = kind.produces(quitter) ? producerIndex(quitter) : -1;
        AtomicInteger lastOwners = new AtomicInteger();
        AtomicIntegerArray consumed = new AtomicIntegerArray(kind.teamSize);
        runTeam(g -> {
            int rank = g.threadRank();
            Pipeline pipe = make(g, state);
            Written written = (b, p) -> b == 0 || p != quitterSlot;
            int n = rank == quitter ? 1 : batches;          // the quitter leaves after batch 0
            consumed.set(rank, stream(pipe, rank, n, writeOrCopy(stages, rank, b -> b % 2 == 0),
                verify(stages, rank, written)));
            if (pipe.quit()) {
                lastOwners.incrementAndGet();
            }
            assertFalse(pipe.quit(), "rank " + rank + ": a second quit on the same handle changes nothing");
            assertFalse(pipe.isActive(), "rank " + rank + ": a handle that quit is not active");
        });
        assertEquals(1, lastOwners.get(), "exactly one quit in the group returns true (the last owner's)");
        for (int rank = 0; rank < kind.teamSize; rank++) {
            if (kind.consumes(rank) && rank != quitter) {
                assertEquals(batches, consumed.get(rank), "batches that rank " + rank + " consumed");
            }
        }
    }

    @Test
    void closeQuitsOnceAndLetsTheOthersProceed() {
        int batches = 4 * STAGES;
        PipelineSharedState state = newState();
        MemorySegment[] stages = newStages();
        int closer = kind.shared() ? quitter() : 0;
        int closerSlot = kind.produces(closer) ? producerIndex(closer) : -1;
        runTeam(g -> {
            int rank = g.threadRank();
            Pipeline pipe = make(g, state);
            if (rank == closer) {
                try (pipe) {
                    stream(pipe, rank, 1, writeOrCopy(stages, rank, b -> true), verify(stages, rank, ALL));
                }
                assertFalse(pipe.isActive(), "a closed handle is not active");
                pipe.close();                                       // a second close does nothing
                assertEquals(!kind.shared(), pipe.quit(),
                    "quit after close: false for a shared pipeline (already quit), true for thread scope (always)");
                if (kind.produces(rank)) {
                    assertRuleBroken(rank, pipe::producerAcquire, "quit", List.of(), "producer_acquire",
                        "producerAcquire");
                } else {
                    assertRuleBroken(rank, pipe::consumerWait, "quit", List.of(), "consumer_wait", "consumerWait");
                }
            } else {
                stream(pipe, rank, batches, writeOrCopy(stages, rank, b -> b % 2 == 0),
                    verify(stages, rank, (b, p) -> b == 0 || p != closerSlot));
                pipe.close();
            }
        });
    }

    @Test
    void quitIsIdempotentAndEveryOperationAfterItThrowsNamingTheRule() {
        PipelineSharedState state = newState();
        AtomicInteger lastOwners = new AtomicInteger();
        runTeam(g -> {
            int rank = g.threadRank();
            Pipeline pipe = make(g, state);
            boolean first = pipe.quit();
            boolean second = pipe.quit();
            if (first) {
                lastOwners.incrementAndGet();
            }
            if (kind.shared()) {
                assertFalse(second, "rank " + rank + ": a second quit returns false");
            } else {
                assertTrue(first && second, "a thread-scope quit returns true every time, as in CUDA");
            }
            if (kind.produces(rank)) {
                assertRuleBroken(rank, pipe::producerAcquire, "quit", List.of(), "producer_acquire", "producerAcquire");
                assertRuleBroken(rank, pipe::producerAcquireInterruptibly, "quit", List.of(), "producer_acquire",
                    "producerAcquire");
                assertRuleBroken(rank, pipe::producerCommit, "quit", List.of(), "producer_commit", "producerCommit");
            }
            if (kind.consumes(rank)) {
                assertRuleBroken(rank, pipe::consumerWait, "quit", List.of(), "consumer_wait", "consumerWait");
                assertRuleBroken(rank, pipe::consumerWaitInterruptibly, "quit", List.of(), "consumer_wait",
                    "consumerWait");
                assertRuleBroken(rank, () -> pipe.consumerWaitFor(Duration.ZERO), "quit", List.of(), "consumer_wait",
                    "consumerWait");
                assertRuleBroken(rank, () -> pipe.consumerWaitUntil(Instant.now()), "quit", List.of(),
                    "consumer_wait", "consumerWait");
                assertRuleBroken(rank, pipe::consumerRelease, "quit", List.of(), "consumer_release",
                    "consumerRelease");
            }
            pipe.close();                                           // after quit: nothing more
        });
        if (kind.shared()) {
            assertEquals(1, lastOwners.get(), "exactly one quit in the group returns true");
        }
    }

    @Test
    void handlesReportTheirScopeAndWhetherTheyAreActive() {
        PipelineSharedState state = newState();
        runTeam(g -> {
            Pipeline pipe = make(g, state);
            assertEquals(kind.shared() ? ThreadScope.BLOCK : ThreadScope.THREAD, pipe.scope());
            assertTrue(pipe.isActive(), "a new handle is active");
            pipe.quit();
            assertFalse(pipe.isActive(), "a handle that quit is not active");
            assertEquals(kind.shared() ? ThreadScope.BLOCK : ThreadScope.THREAD, pipe.scope());
        });
    }

    @Test
    void waitingForWhatNoPeerCanDeliverThrows() {
        assumeTrue(kind.partitioned(), "only partitioned pipelines have a side that can be left empty");
        MemorySegment[] stages = newStages();
        PipelineSharedState noProducers = newState();
        runTeam(g -> {
            int rank = g.threadRank();
            Pipeline pipe = make(g, noProducers);
            if (kind.produces(rank)) {
                produceBatch(pipe, stages, rank, 0);
                pipe.quit();                                        // every producer leaves after batch 0
            }
            g.sync();
            if (kind.consumes(rank)) {
                pipe.consumerWait();
                checkSlots(stages, 0, rank, ALL);
                pipe.consumerRelease();
                assertRuleBroken(rank, pipe::consumerWait, "no producer", List.of(), "consumer_wait", "consumerWait");
                pipe.quit();
            }
        });
        PipelineSharedState noConsumers = newState();
        runTeam(g -> {
            int rank = g.threadRank();
            Pipeline pipe = make(g, noConsumers);
            if (kind.produces(rank)) {
                for (int b = 0; b < STAGES; b++) {
                    produceBatch(pipe, stages, rank, b);
                }
            }
            g.sync();
            if (kind.consumes(rank)) {
                pipe.consumerWait();
                pipe.quit();                                        // leaves holding batch 0: its release is dropped
            }
            g.sync();
            if (kind.produces(rank)) {
                assertRuleBroken(rank, pipe::producerAcquire, "no consumer", List.of(), "producer_acquire",
                    "producerAcquire");
                pipe.quit();
            }
        });
    }

    // ---------------------------------------------------------------------------------------------------------
    // Copy failure

    @Test
    void aFailedCopyFailsItsBatchForEveryConsumerAndLaterBatchesAreIntact() {
        int batches = 2 * STAGES + 1;
        int failing = 1;
        long failAt = 1 << 20;                                 // batch 1 of producer 0 reads here; nothing else does
        byte[] data = fileData(batches * producers() * SLOT);
        GatedFileChannel file = new GatedFileChannel(data);
        file.failFrom(failAt);
        PipelineSharedState state = newState();
        MemorySegment[] stages = newStages();
        AtomicIntegerArray failures = new AtomicIntegerArray(kind.teamSize);
        runTeam(g -> {
            int rank = g.threadRank();
            try (Pipeline pipe = make(g, state)) {
                Step produce = (p, b) -> {
                    int slot = producerIndex(rank);
                    p.producerAcquire();
                    long position = b == failing && slot == 0 ? failAt : filePosition(b, slot);
                    MemcpyAsync.memcpyAsync(slot(stages, b, slot), file, position, SLOT, p);
                    p.producerCommit();
                };
                Step consume = (p, b) -> {
                    if (b == failing) {
                        StageFailedException e = assertThrows(StageFailedException.class, p::consumerWait,
                            "rank " + rank + ": the wait for the batch whose copy failed");
                        assertEquals(b, e.batch(), "the failed batch");
                        assertEquals(kind.shared() ? (int) (b % STAGES) : -1, e.stage(), "the failed stage");
                        assertInstanceOf(IOException.class, e.getCause());
                        assertTrue(e.getCause().getMessage().contains("injected read error at position " + failAt),
                            e.getCause().getMessage());
                        failures.incrementAndGet(rank);
                    } else {
                        p.consumerWait();
                        for (int slot = 0; slot < producers(); slot++) {
                            MemorySegment s = slot(stages, b, slot);
                            long from = filePosition(b, slot);
                            for (int i = 0; i < SLOT; i++) {
                                assertEquals(data[(int) from + i], s.get(ValueLayout.JAVA_BYTE, i),
                                    "rank " + rank + ", batch " + b + ", producer " + slot + ", byte " + i);
                            }
                        }
                    }
                    p.consumerRelease();                            // a failed stage is still the consumer's
                };
                stream(pipe, rank, batches, produce, consume);
            }
        });
        for (int rank = 0; rank < kind.teamSize; rank++) {
            assertEquals(kind.consumes(rank) ? 1 : 0, failures.get(rank), "failed batches seen by rank " + rank);
        }
    }

    private long filePosition(long batch, int producer) {
        return (batch * producers() + producer) * SLOT;
    }

    // ---------------------------------------------------------------------------------------------------------
    // The thread-scope free functions

    @Test
    void waitPriorAndCommitToABarrierWaitForTheCopiesTheyCover() {
        assumeTrue(!kind.shared(), "pipeline_consumer_wait_prior and pipeline_producer_commit(pipe, barrier) are "
            + "defined for thread-scope pipelines only");
        byte[] data = fileData(4 * SLOT);
        GatedFileChannel file = new GatedFileChannel(data);
        CountDownLatch[] gate = new CountDownLatch[4];
        for (int b = 0; b < 4; b++) {
            gate[b] = gate(file, (long) b * SLOT);
        }
        MemorySegment[] dst = new MemorySegment[4];
        runTeam(g -> {
            try (Pipeline pipe = make(g, null)) {
                for (int b = 0; b < 3; b++) {
                    dst[b] = Arena.ofAuto().allocate(SLOT);
                    pipe.producerAcquire();
                    MemcpyAsync.memcpyAsync(dst[b], file, (long) b * SLOT, SLOT, pipe);
                    pipe.producerCommit();
                }
                gate[0].countDown();
                gate[1].countDown();                            // batch 2 stays held back
                Pipeline.consumerWaitPrior(pipe, 1);             // batches 0 and 1 only
                assertCopied(dst[0], data, 0);
                assertCopied(dst[1], data, SLOT);
                pipe.consumerRelease();                          // accepted after wait_prior, and changes nothing

                dst[3] = Arena.ofAuto().allocate(SLOT);
                Barrier barrier = new Barrier(1);
                pipe.producerAcquire();
                MemcpyAsync.memcpyAsync(dst[3], file, 3L * SLOT, SLOT, pipe);
                Pipeline.producerCommit(pipe, barrier);          // ties the copies in flight (batches 2, 3) to
                long token = barrier.arrive();                   // the phase, commits nothing; the only party
                assertFalse(barrier.tryWaitParity(false, Duration.ZERO),
                    "arrived, but the tied copies have not landed");
                gate[2].countDown();
                gate[3].countDown();
                barrier.await(token);
                assertCopied(dst[2], data, 2 * SLOT);
                assertCopied(dst[3], data, 3 * SLOT);
                pipe.producerCommit();

                pipe.consumerWait();                             // batch 2
                assertCopied(dst[2], data, 2 * SLOT);
                pipe.consumerRelease();
                pipe.consumerWait();                             // batch 3
                pipe.consumerRelease();
            }
        });
    }

    private static void assertCopied(MemorySegment dst, byte[] data, int from) {
        assertEquals(-1, MemorySegment.ofArray(data).asSlice(from, SLOT).mismatch(dst),
            "bytes " + from + ".." + (from + SLOT) + " of the file");
    }

    // ---------------------------------------------------------------------------------------------------------
    // Misuse

    @Test
    void commitWithoutAcquireAndReleaseWithoutWaitThrowNamingTheRuleAndChangeNothing() {
        PipelineSharedState state = newState();
        MemorySegment[] stages = newStages();
        runTeam(g -> {
            int rank = g.threadRank();
            try (Pipeline pipe = make(g, state)) {
                if (kind.produces(rank)) {
                    assertRuleBroken(rank, pipe::producerCommit, "acquire", List.of(), "producer_commit",
                        "producerCommit");
                }
                if (kind.consumes(rank)) {
                    assertRuleBroken(rank, pipe::consumerRelease, "wait", List.of(), "consumer_release",
                        "consumerRelease");
                }
                stream(pipe, rank, STAGES + 1, writeOrCopy(stages, rank, b -> b == 1), verify(stages, rank, ALL));
            }
        });
    }

    @Test
    void aSideCallingTheOtherSidesOperationThrowsNamingItsRankAndRole() {
        assumeTrue(kind.partitioned(), "only partitioned pipelines have sides");
        PipelineSharedState state = newState();
        MemorySegment[] stages = newStages();
        runTeam(g -> {
            int rank = g.threadRank();
            try (Pipeline pipe = make(g, state)) {
                if (kind.produces(rank)) {
                    pipe.producerAcquire();                         // takes its side (by count: by first use)
                    List<String> who = List.of("rank " + rank, "producer");
                    assertRuleBroken(rank, pipe::consumerWait, "consumer", who, "consumer_wait", "consumerWait");
                    assertRuleBroken(rank, () -> pipe.consumerWaitFor(Duration.ZERO), "consumer", who,
                        "consumer_wait", "consumerWait");
                    assertRuleBroken(rank, pipe::consumerRelease, "consumer", who, "consumer_release",
                        "consumerRelease");
                    fill(slot(stages, 0, producerIndex(rank)), 0, producerIndex(rank));
                    pipe.producerCommit();
                } else {
                    pipe.consumerWait();
                    List<String> who = List.of("rank " + rank, "consumer");
                    assertRuleBroken(rank, pipe::producerAcquire, "producer", who, "producer_acquire",
                        "producerAcquire");
                    assertRuleBroken(rank, pipe::producerCommit, "producer", who, "producer_commit",
                        "producerCommit");
                    checkSlots(stages, 0, rank, ALL);
                    pipe.consumerRelease();
                }
            }
        });
    }

    @Test
    void aHandleUsedFromAnotherThreadThrowsNamingBothThreads() {
        PipelineSharedState state = newState();
        MemorySegment[] stages = newStages();
        runTeam(g -> {
            int rank = g.threadRank();
            try (Pipeline pipe = make(g, state)) {
                String owner = Thread.currentThread().getName();
                String foreigner = "foreign-user-of-rank-" + rank;
                AtomicReference<Object> outcome = new AtomicReference<>();
                Thread foreign = threads.start(foreigner, () -> {
                    try {
                        if (kind.produces(rank)) {
                            pipe.producerAcquire();
                        } else {
                            pipe.consumerWaitFor(Duration.ZERO);
                        }
                        outcome.set("no exception");
                    } catch (Throwable t) {
                        outcome.set(t);
                    }
                });
                foreign.join(LIMIT.toMillis());
                Object seen = outcome.get();
                assertInstanceOf(IllegalStateException.class, seen,
                    "rank " + rank + ": a handle used by another thread than its owner; got " + seen);
                String message = ((Throwable) seen).getMessage();
                assertTrue(message.contains(owner) && message.contains(foreigner),
                    "the message must name the owner " + owner + " and the caller " + foreigner + ": " + message);
                // the owner's handle is untouched
                stream(pipe, rank, STAGES + 1, writeOrCopy(stages, rank, b -> false), verify(stages, rank, ALL));
            }
        });
    }

    /**
     * Asserts that {@code call} throws an IllegalStateException whose message names the operation (one of
     * {@code operation}'s spellings), the rule ({@code rule}) and every one of {@code also}.
     */
    private static void assertRuleBroken(int rank, Executable call, String rule, List<String> also,
                                         String... operation) {
        IllegalStateException e = assertThrows(IllegalStateException.class, call,
            "rank " + rank + ": " + operation[0] + " breaking the rule '" + rule + "'");
        String message = String.valueOf(e.getMessage());
        boolean namesOperation = false;
        for (String spelling : operation) {
            namesOperation |= message.contains(spelling);
        }
        assertTrue(namesOperation, "the message must name " + operation[0] + ": " + message);
        assertTrue(message.contains(rule), "the message must name the rule ('" + rule + "'): " + message);
        for (String part : also) {
            assertTrue(message.contains(part), "the message must name '" + part + "': " + message);
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // The fixture

    private void runTeam(RankBody body) {
        threads.team(kind.teamSize).run(LIMIT, g -> {
            try {
                body.run(g);
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
    }

    private Pipeline make(Group group, PipelineSharedState state) {
        return kind.make(group, state, engine);
    }

    private PipelineSharedState newState() {
        return PipelineSharedState.builder(ThreadScope.BLOCK, STAGES).copyEngine(engine).build();
    }

    private int producers() {
        int n = 0;
        for (int rank = 0; rank < kind.teamSize; rank++) {
            n += kind.produces(rank) ? 1 : 0;
        }
        return n;
    }

    /** The slot of a producing rank: its place among the producers. */
    private int producerIndex(int rank) {
        int index = 0;
        for (int r = 0; r < rank; r++) {
            index += kind.produces(r) ? 1 : 0;
        }
        return index;
    }

    private int firstConsumer() {
        for (int rank = 0; ; rank++) {
            if (kind.consumes(rank)) {
                return rank;
            }
        }
    }

    /** The highest rank whose side has another member: it can leave and the others can go on without it. */
    private int quitter() {
        for (int rank = kind.teamSize - 1; rank >= 0; rank--) {
            for (int other = 0; other < kind.teamSize; other++) {
                if (other != rank && kind.produces(other) == kind.produces(rank)
                    && kind.consumes(other) == kind.consumes(rank)) {
                    return rank;
                }
            }
        }
        throw new AssertionError("no rank of " + kind + " can leave without ending a side");
    }

    private CountDownLatch gate(GatedFileChannel file, long position) {
        CountDownLatch gate = file.gate(position);
        gates.add(gate);
        return gate;
    }

    private MemorySegment[] newStages() {
        MemorySegment[] stages = new MemorySegment[STAGES];
        for (int s = 0; s < STAGES; s++) {
            stages[s] = Arena.ofAuto().allocate((long) producers() * SLOT, 8);
        }
        return stages;
    }

    private static MemorySegment slot(MemorySegment[] stages, long batch, int producer) {
        return stages[(int) (batch % STAGES)].asSlice((long) producer * SLOT, SLOT);
    }

    /** The pattern of a producer's slot in a batch: every word names both. */
    private static long word(long batch, int producer, int i) {
        return batch * 1_000_003L + producer * 1_009L + i;
    }

    private static void fill(MemorySegment slot, long batch, int producer) {
        for (int i = 0; i < SLOT / 8; i++) {
            slot.setAtIndex(ValueLayout.JAVA_LONG, i, word(batch, producer, i));
        }
    }

    private void checkSlots(MemorySegment[] stages, long batch, int rank, Written written) {
        for (int p = 0; p < producers(); p++) {
            if (written.by(batch, p)) {
                MemorySegment slot = slot(stages, batch, p);
                for (int i = 0; i < SLOT / 8; i++) {
                    long got = slot.getAtIndex(ValueLayout.JAVA_LONG, i);
                    if (got != word(batch, p, i)) {
                        throw new AssertionError("rank " + rank + " read word " + i + " of producer " + p
                            + " in batch " + batch + ": " + got + " is not " + word(batch, p, i)
                            + (got % 1_000_003L == word(0, p, i) % 1_000_003L
                            ? " (batch " + got / 1_000_003L + "'s: out of order)" : ""));
                    }
                }
            }
        }
    }

    private static byte[] fileData(int n) {
        byte[] data = new byte[n];
        for (int i = 0; i < n; i++) {
            data[i] = (byte) (i * 31 + 7);
        }
        return data;
    }

    /** Producer step: acquire, write (or copy, when {@code byCopy}) this producer's slot, commit. */
    private Step writeOrCopy(MemorySegment[] stages, int rank, LongPredicate byCopy) {
        int p = producerIndex(rank);
        return (pipe, b) -> {
            pipe.producerAcquire();
            MemorySegment slot = slot(stages, b, p);
            if (byCopy.test(b)) {
                MemorySegment source = Arena.ofAuto().allocate(SLOT, 8);
                fill(source, b, p);
                MemcpyAsync.memcpyAsync(slot, source, SLOT, pipe);
            } else {
                fill(slot, b, p);
            }
            pipe.producerCommit();
        };
    }

    private void produceBatch(Pipeline pipe, MemorySegment[] stages, int rank, long batch) throws Exception {
        writeOrCopy(stages, rank, b -> false).run(pipe, batch);
    }

    /** Batch 0 with rank 0's slot copied from {@code file}'s gated position 0, so that it stays pending. */
    private void commitHeldBack(Pipeline pipe, MemorySegment[] stages, int rank, GatedFileChannel file) {
        int p = producerIndex(rank);
        pipe.producerAcquire();
        if (rank == 0) {
            MemcpyAsync.memcpyAsync(slot(stages, 0, p), file, 0, SLOT, pipe);
        } else {
            fill(slot(stages, 0, p), 0, p);
        }
        pipe.producerCommit();
    }

    /** Consumer step: wait, check the slots written, release. */
    private Step verify(MemorySegment[] stages, int rank, Written written) {
        return (pipe, b) -> {
            pipe.consumerWait();
            checkSlots(stages, b, rank, written);
            pipe.consumerRelease();
        };
    }

    /**
     * Runs batches 0..n-1 through this rank's handle: a producer side produces each, a consumer side consumes
     * each in order; a rank with both sides runs {@code STAGES - 1} batches ahead.
     *
     * @return the batches this rank consumed
     */
    private int stream(Pipeline pipe, int rank, int batches, Step produce, Step consume) throws Exception {
        boolean produces = kind.produces(rank);
        boolean consumes = kind.consumes(rank);
        int ahead = produces && consumes ? STAGES - 1 : 0;
        long next = 0;
        for (long b = 0; b < batches; b++) {
            if (produces) {
                produce.run(pipe, b);
                if (consumes && b >= ahead) {
                    consume.run(pipe, next++);
                }
            }
        }
        while (consumes && next < batches) {
            consume.run(pipe, next++);
        }
        return (int) next;
    }
}
