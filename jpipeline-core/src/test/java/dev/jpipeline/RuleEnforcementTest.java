package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/** The rules that upstream leaves undefined (silent corruption or a hang) and jpipeline enforces. */
class RuleEnforcementTest {

    /** A bound for sub-cases that must end at once (run on threads of their own, see {@link Bounded}). */
    private static final Duration SUB_CASE_BOUND = Duration.ofSeconds(2);

    private static void assertMessage(Throwable t, String... parts) {
        for (String part : parts) {
            assertTrue(t.getMessage().contains(part), "'" + part + "' missing from: " + t.getMessage());
        }
    }

    @Test
    void roleMismatchesThrowWithRankRoleAndStage() {
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 2);
        Teams.run(2, g -> {
            PipelineRole role = g.threadRank() == 0 ? PipelineRole.PRODUCER : PipelineRole.CONSUMER;
            Pipeline pipe = Pipeline.make(g, state, role);
            if (role == PipelineRole.PRODUCER) {
                assertMessage(assertThrows(IllegalStateException.class, pipe::consumerWait),
                    "consumer_wait is a consumer operation", "rank 0 (producer)", "stage 0");
                assertThrows(IllegalStateException.class, pipe::consumerRelease);
                assertThrows(IllegalStateException.class, () -> pipe.consumerWaitFor(Duration.ZERO));
            } else {
                assertMessage(assertThrows(IllegalStateException.class, pipe::producerAcquire),
                    "producer_acquire is a producer operation", "rank 1 (consumer)");
                assertThrows(IllegalStateException.class, pipe::producerCommit);
            }
            pipe.quit();
        });
    }

    /** The binary-partitions article's hang: consumer threads running producer code in a count partition. */
    @Test
    void moreProducersThanTheCountIsAnError() {
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 2);
        AtomicReference<Throwable> error = new AtomicReference<>();
        CountDownLatch[] acted = {new CountDownLatch(1), new CountDownLatch(1), new CountDownLatch(1)};
        Teams.run(4, g -> {
            int r = g.threadRank();
            Pipeline pipe = Pipeline.make(g, state, 2);
            if (r < 3) {                                    // three threads think they produce, in rank order
                if (r > 0) {
                    Teams.await(acted[r - 1], "rank " + (r - 1) + " acts as a producer");
                }
                try {
                    pipe.producerAcquire();
                } catch (IllegalStateException e) {
                    error.set(e);
                }
                acted[r].countDown();
            }
        });
        assertMessage(error.get(), "rank 2 is the 3rd thread to act as a producer",
            "made with 2 producers");
    }

    @Test
    void commitWithoutAcquireAndReleaseWithoutWait() {
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 2);
        Pipeline pipe = Pipeline.make(Teams.soloGroup(), state);
        assertMessage(assertThrows(IllegalStateException.class, pipe::producerCommit),
            "producer_commit without producer_acquire", "rank 0 (unified)", "stage 0");
        pipe.producerAcquire();
        pipe.producerCommit();
        assertMessage(assertThrows(IllegalStateException.class, pipe::consumerRelease),
            "consumer_release without a completed consumer_wait", "stage 0");
        Pipeline thread = Pipeline.make();
        assertThrows(IllegalStateException.class, thread::producerCommit);
        assertThrows(IllegalStateException.class, thread::consumerRelease);
    }

    @Test
    void unifiedSelfDeadlocksAreReportedNotHung() {
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 2);
        Pipeline pipe = Pipeline.make(Teams.soloGroup(), state);
        assertMessage(assertThrows(IllegalStateException.class, pipe::consumerWait),
            "consumer_wait would wait forever", "batch 0", "has not committed itself");
        for (int b = 0; b < 2; b++) {
            pipe.producerAcquire();
            pipe.producerCommit();
        }
        assertMessage(assertThrows(IllegalStateException.class, pipe::producerAcquire),
            "producer_acquire would wait forever", "committed 2 batches");
    }

    @Test
    void invalidCreationArguments() {
        assertMessage(assertThrows(IllegalArgumentException.class,
            () -> PipelineSharedState.create(ThreadScope.BLOCK, 0)), "1..255", "got 0");
        assertMessage(assertThrows(IllegalArgumentException.class,
            () -> PipelineSharedState.create(ThreadScope.BLOCK, 256)), "got 256");
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 2);
        Teams.run(3, g -> {
            assertMessage(assertThrows(IllegalArgumentException.class, () -> Pipeline.make(g, state, 3)),
                "1..2 producers in a group of 3", "is 3");
            assertThrows(IllegalArgumentException.class, () -> Pipeline.make(g, state, 0));
        });
        Teams.run(3, g -> assertMessage(assertThrows(IllegalArgumentException.class,
            () -> Pipeline.make(g, state, PipelineRole.PRODUCER)), "number of threads with role PRODUCER is 3"));
        assertThrows(IllegalArgumentException.class, () -> new Barrier(0));
        assertThrows(IllegalArgumentException.class, () -> new Barrier(Barrier.max() + 1));
    }

    @Test
    void threadsThatMakeThePipelineDifferentlyAreTold() {
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 2);
        AtomicReference<Throwable> error = new AtomicReference<>();
        Teams.run(4, g -> {
            try {
                Pipeline.make(g, state, g.threadRank() == 3 ? 1 : 2);
            } catch (IllegalArgumentException e) {
                error.set(e);
            }
        });
        assertMessage(error.get(), "every thread of the group must make the pipeline the same way",
            "(producer count 2)", "rank 3 asked for a pipeline partitioned by count (producer count 1)");
    }

    @Test
    void interruptibleWaitsThrowAndUninterruptibleOnesKeepTheStatus() throws Exception {
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 2);
        AtomicReference<Object> outcome = new AtomicReference<>();
        ThreadTeam team = ThreadTeam.ofPlatform(2);
        Thread consumer = Thread.ofPlatform().start(() -> {
            Pipeline pipe = Pipeline.make(team.member(1), state, 1);
            try {
                pipe.consumerWaitInterruptibly();
                outcome.set("returned");
            } catch (InterruptedException e) {
                outcome.set(e);
            }
            pipe.consumerWait();                          // uninterruptible: keeps waiting through an interrupt
            outcome.set(Thread.currentThread().isInterrupted() ? "status kept" : "status lost");
            pipe.consumerRelease();
        });
        Pipeline producer = Pipeline.make(team.member(0), state, 1);
        Teams.awaitParked(consumer, "consumerWaitInterruptibly");
        consumer.interrupt();
        Teams.awaitTrue("the interruptible wait ends", () -> outcome.get() != null);
        assertTrue(outcome.get() instanceof InterruptedException, String.valueOf(outcome.get()));
        Teams.awaitParked(consumer, "consumerWait");
        consumer.interrupt();
        // the wait takes the interrupt (clearing the status, to re-assert it when it returns) and parks again
        Teams.awaitTrue("the uninterruptible wait takes the interrupt", () -> !consumer.isInterrupted());
        Teams.awaitParked(consumer, "consumerWait");
        producer.producerAcquire();
        producer.producerCommit();
        consumer.join(10_000);
        assertEquals("status kept", outcome.get());
    }

    @Test
    void virtualThreadsParkAndComplete() {
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 2);
        long[] total = new long[1];
        ThreadTeam.ofVirtual(64).run(Teams.LIMIT, g -> {
            Pipeline pipe = Pipeline.make(g, state, 32);
            for (int b = 0; b < 200; b++) {
                if (g.threadRank() < 32) {
                    pipe.producerAcquire();
                    pipe.producerCommit();
                } else {
                    pipe.consumerWait();
                    if (g.threadRank() == 32) {
                        total[0]++;
                    }
                    pipe.consumerRelease();
                }
            }
            pipe.quit();
        });
        assertEquals(200, total[0]);
    }

    /** Issue 8, promise 6: a handle used by another thread than its owner. */
    @Test
    void aHandleUsedByAnotherThreadThrowsNamingTheOwnerAndTheCaller() {
        List<String> outcomes = new ArrayList<>();
        outcomes.add("thread scope, producerAcquire: " + foreignUse(Pipeline::make, pipe -> { },
            Pipeline::producerAcquire));
        outcomes.add("thread scope, producerCommit: " + foreignUse(Pipeline::make, Pipeline::producerAcquire,
            Pipeline::producerCommit));
        outcomes.add("unified, producerAcquire: " + foreignUse(RuleEnforcementTest::soloUnified, pipe -> { },
            Pipeline::producerAcquire));
        outcomes.add("unified, consumerWait: " + foreignUse(RuleEnforcementTest::soloUnified, pipe -> {
            pipe.producerAcquire();
            pipe.producerCommit();
        }, Pipeline::consumerWait));
        String named = "IllegalStateException naming both threads";
        assertEquals(List.of("thread scope, producerAcquire: " + named, "thread scope, producerCommit: " + named,
                "unified, producerAcquire: " + named, "unified, consumerWait: " + named), outcomes,
            "a handle used from another thread than its owner must throw IllegalStateException naming the owner "
                + "and the caller, with or without -ea");
    }

    private static Pipeline soloUnified() {
        return Pipeline.make(Teams.soloGroup(), PipelineSharedState.create(ThreadScope.BLOCK, 2));
    }

    private interface PipeOp {
        void apply(Pipeline pipe) throws Exception;
    }

    /** The owner thread makes a handle and prepares it; a foreign thread then applies {@code op} to it. */
    private static String foreignUse(Supplier<Pipeline> make, PipeOp ownerFirst, PipeOp op) {
        return Bounded.outcome("p06-owner", Duration.ofSeconds(5), () -> {
            Pipeline pipe = make.get();
            ownerFirst.apply(pipe);
            return Bounded.outcome("p06-foreign", SUB_CASE_BOUND, () -> {
                try {
                    op.apply(pipe);
                    return "no exception";
                } catch (IllegalStateException e) {
                    String m = String.valueOf(e.getMessage());
                    return m.contains("p06-owner") && m.contains("p06-foreign")
                        ? "IllegalStateException naming both threads" : "IllegalStateException: " + m;
                }
            });
        });
    }

    /**
     * Issue 8, promise 8: a unified thread waiting for a batch it never committed is told "would wait forever",
     * whatever the timeout.
     */
    @Test
    void aUnifiedThreadWaitingForABatchItNeverCommittedIsRefusedWhateverTheTimeout() {
        Bounded.Run untimed = selfWait("p08-wait", pipe -> {
            pipe.consumerWait();
            return "returned";
        });
        Bounded.Run century = selfWait("p08-100-years",
            pipe -> "returned " + pipe.consumerWaitFor(Duration.ofDays(36_525)));
        Bounded.Run milli = selfWait("p08-1-ms", pipe -> "returned " + pipe.consumerWaitFor(Duration.ofMillis(1)));
        long deadline = System.nanoTime() + SUB_CASE_BOUND.toNanos();
        List<String> outcomes = List.of("consumerWait: " + untimed.resultBy(deadline),
            "consumerWaitFor(100 years): " + century.resultBy(deadline),
            "consumerWaitFor(1 ms): " + milli.resultBy(deadline));
        String refused = "IllegalStateException 'would wait forever'";
        assertEquals(List.of("consumerWait: " + refused, "consumerWaitFor(100 years): " + refused,
                "consumerWaitFor(1 ms): " + refused), outcomes,
            "a unified thread waiting for a batch it has not committed itself can never be satisfied, whatever "
                + "its timeout");
    }

    private static Bounded.Run selfWait(String name, Outcomes.PipeBody wait) {
        return Bounded.start(name, () -> {
            Pipeline pipe = soloUnified();
            try {
                return wait.run(pipe);
            } catch (IllegalStateException e) {
                return String.valueOf(e.getMessage()).contains("would wait forever")
                    ? "IllegalStateException 'would wait forever'" : "IllegalStateException: " + e.getMessage();
            }
        });
    }

    /**
     * Issue 8, promise 9: absurd arguments get clear answers: a clamped patience; a closed arena named as such, not
     * as an overlap.
     */
    @Test
    void anAbsurdPatienceIsClampedAndACopyWithAClosedArenaNamesTheClosedSegment() {
        List<String> outcomes = new ArrayList<>();
        outcomes.add("detectDeadlocks(Long.MAX_VALUE s): " + Outcomes.thrown(() ->
            PipelineSharedState.builder(ThreadScope.BLOCK, 2).detectDeadlocks(Duration.ofSeconds(Long.MAX_VALUE))
                .build()));
        outcomes.add("detectDeadlocks(-1 ms): " + Outcomes.thrown(() ->
            PipelineSharedState.builder(ThreadScope.BLOCK, 2).detectDeadlocks(Duration.ofMillis(-1))));
        for (long size : new long[] {64, 1 << 20}) {
            for (boolean sourceClosed : new boolean[] {true, false}) {
                Arena arena = Arena.ofShared();
                MemorySegment closed = arena.allocate(size);
                arena.close();
                MemorySegment open = Arena.ofAuto().allocate(size);
                Barrier barrier = new Barrier(1);
                String outcome = Outcomes.thrown(() -> MemcpyAsync.memcpyAsync(sourceClosed ? open : closed,
                    sourceClosed ? closed : open, size, barrier));
                outcomes.add((sourceClosed ? "source" : "destination") + " arena closed, " + size + " B: " + outcome);
            }
        }
        String named = "IllegalArgumentException naming the closed segment";
        assertEquals(List.of("detectDeadlocks(Long.MAX_VALUE s): no exception",
                "detectDeadlocks(-1 ms): IllegalArgumentException",
                "source arena closed, 64 B: " + named, "destination arena closed, 64 B: " + named,
                "source arena closed, 1048576 B: " + named, "destination arena closed, 1048576 B: " + named),
            outcomes, "an absurd patience is clamped (a negative one rejected); a barrier copy with a closed arena "
                + "names the closed segment ('closed'), not an overlap");
    }
}
