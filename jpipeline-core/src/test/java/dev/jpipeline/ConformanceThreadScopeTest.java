package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.copy.CopyEngine;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/** Conformance scenarios 43-45 (libcudacxx-pipeline-semantics.md §15 F: thread-scope extras). */
class ConformanceThreadScopeTest {

    @Test
    void s43_threadScopeNeverBlocks() {
        Pipeline pipe = Pipeline.make();
        long start = System.nanoTime();
        for (int b = 0; b < 1000; b++) {             // unbounded stages: no release needed to go on
            pipe.producerAcquire();
            pipe.producerCommit();
        }
        assertTrue(pipe.consumerWaitFor(Duration.ofMillis(1)));
        pipe.consumerRelease();
        assertEquals(999, Teams.outstanding(pipe));
        assertTrue(Teams.millisSince(start) < 1000);
    }

    @Test
    void s44_waitPriorCompletesAndReleasesAllButTheNewest() {
        Pipeline pipe = Pipeline.make();
        MemorySegment[] stage = new MemorySegment[5];
        for (int b = 0; b < 5; b++) {
            stage[b] = MemorySegment.ofArray(new int[1]);
            pipe.producerAcquire();
            MemcpyAsync.memcpyAsync(stage[b], MemorySegment.ofArray(new int[] {b + 10}), 4, pipe);
            pipe.producerCommit();
        }
        Pipeline.consumerWaitPrior(pipe, 1);
        for (int b = 0; b < 4; b++) {
            assertEquals(b + 10, stage[b].get(ValueLayout.JAVA_INT, 0));
        }
        assertEquals(1, Teams.outstanding(pipe), "tail = head - 1: only batch 4 is left");
        pipe.consumerRelease();                       // the release CUDA code writes after wait_prior
        assertEquals(1, Teams.outstanding(pipe));
        pipe.consumerWait();                          // covers batch 4 only
        pipe.consumerRelease();
        assertEquals(0, Teams.outstanding(pipe));
        assertThrows(IllegalStateException.class, pipe::consumerRelease, "nothing waited for");

        for (int b = 0; b < 12; b++) {
            pipe.producerAcquire();
            pipe.producerCommit();
        }
        Pipeline.consumerWaitPrior(pipe, 20);         // behaves as 8: stricter, still correct
        assertEquals(8, Teams.outstanding(pipe));
        pipe.consumerRelease();                       // accepted after a wait_prior, and does nothing
        assertEquals(8, Teams.outstanding(pipe));
        Pipeline.consumerWaitPrior(pipe, 8);          // covers nothing: 8 batches are outstanding
        pipe.consumerRelease();                       // still the release CUDA code writes after it: accepted
        assertEquals(8, Teams.outstanding(pipe));
        IllegalArgumentException negative = assertThrows(IllegalArgumentException.class,
            () -> Pipeline.consumerWaitPrior(pipe, -1));
        assertTrue(negative.getMessage().contains("prior >= 0"), negative.getMessage());
    }

    @Test
    void s45_producerCommitWithBarrierNeitherArrivesNorMovesTheHead() {
        Pipeline pipe = Pipeline.make();
        Barrier barrier = new Barrier(1);
        pipe.producerAcquire();
        MemorySegment dst = MemorySegment.ofArray(new int[1]);
        MemcpyAsync.memcpyAsync(dst, MemorySegment.ofArray(new int[] {5}), 4, pipe);
        Pipeline.producerCommit(pipe, barrier);
        assertFalse(barrier.tryWaitParity(false, Duration.ofMillis(20)), "no arrival: net zero");
        barrier.arriveAndWait();
        assertTrue(barrier.tryWaitParity(false, Duration.ZERO));
        assertEquals(0, Teams.outstanding(pipe), "the head does not move");
        assertEquals(5, dst.get(ValueLayout.JAVA_INT, 0));
    }

    @Test
    void threadScopeFreeFunctionsRejectSharedPipelines() {
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 2);
        Pipeline shared = Pipeline.make(Teams.soloGroup(), state);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> Pipeline.consumerWaitPrior(shared, 0));
        assertTrue(e.getMessage().contains("only for thread-scope pipelines"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Pipeline.producerCommit(shared, new Barrier(1)));
    }

    /** Issue 8, promise 2: thread-scope timed and interruptible waits. */
    @Test
    void threadScopeWaitsForACopyThatHasNotLandedHonourTheirLimitAndInterrupts() {
        CopyEngine engine = CopyEngine.builder().workers(1).name("p02-copy").build();
        try {
            List<String> outcomes = new ArrayList<>();
            outcomes.add("consumerWaitFor(100 ms): " + withHeldBackCopy(engine, "p02-wait-for",
                pipe -> Outcomes.timedOut(100, () -> pipe.consumerWaitFor(Duration.ofMillis(100)))));
            outcomes.add("consumerWaitUntil(now + 100 ms): " + withHeldBackCopy(engine, "p02-wait-until",
                pipe -> Outcomes.timedOut(90, () -> pipe.consumerWaitUntil(Instant.now().plusMillis(100)))));
            outcomes.add("consumerWaitInterruptibly, interrupted: " + withHeldBackCopy(engine, "p02-interruptibly",
                pipe -> {
                    Thread me = Thread.currentThread();
                    Thread.ofPlatform().daemon().name("p02-interrupter").start(() -> {
                        try {
                            ThreadStates.awaitWaitingIn(me, "consumerWaitInterruptibly");
                            me.interrupt();
                        } catch (AssertionError notWaiting) {
                            // the wait returned at once: the outcome says so
                        }
                    });
                    try {
                        pipe.consumerWaitInterruptibly();
                        return "returned";
                    } catch (InterruptedException e) {
                        return "InterruptedException";
                    }
                }));
            assertEquals(List.of("consumerWaitFor(100 ms): false in time",
                    "consumerWaitUntil(now + 100 ms): false in time",
                    "consumerWaitInterruptibly, interrupted: InterruptedException"), outcomes,
                "thread-scope waits for a copy that has not landed must honour their limit and interrupts");
        } finally {
            engine.close();
        }
    }

    /** A thread-scope wait on a batch whose file copy is held back; the gate opens once the outcome is in. */
    private static String withHeldBackCopy(CopyEngine engine, String name, Outcomes.PipeBody check) {
        GatedFileChannel file = new GatedFileChannel(new byte[4096]);
        CountDownLatch gate = file.gate(0);
        try {
            return Bounded.outcome(name, Duration.ofSeconds(2), () -> {
                Pipeline pipe = Pipeline.make(engine);
                pipe.producerAcquire();
                MemcpyAsync.memcpyAsync(Arena.ofAuto().allocate(4096), file, 0, 4096, pipe);
                pipe.producerCommit();
                return check.run(pipe);
            });
        } finally {
            gate.countDown();
        }
    }
}
