package dev.jpipeline.simt;

import static dev.jpipeline.simt.CompiledOrStrands.onStrands;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineRole;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code Pipeline.make(ctx.block(), ...)} in a kernel compiled on its blocks' schedulers (CompiledMake): the make's
 * two syncs are points where a thread gives its stack up, and the make means what it means on strands (the same
 * pipeline, the same exception on every rank when the ranks disagree).
 */
class CompiledMakeTest {

    @BeforeEach
    void compilationOn() {
        assumeTrue(ResumptionScan.switchedOn(), "compilation switched off for this run");
    }

    @Test
    void threadsMakingAPipelineGiveTheirStacksUp() {
        int[] produced = new int[1];
        KernelBody body = ctx -> {
            PipelineSharedState state = ctx.shared("state", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
            Pipeline pipe = Pipeline.make(ctx.block(), state);
            pipe.producerAcquire();
            pipe.producerCommit();
            pipe.consumerWait();
            pipe.consumerRelease();
            if (ctx.threadRank() == 0) {
                produced[0]++;
            }
            pipe.quit();
        };
        ResumptionScan.Verdict verdict = ResumptionScan.scan(body);
        assertTrue(verdict.onScheduler(), () -> "not compiled on the scheduler: " + verdict.reason());
        assertTrue(verdict.compiled().blockSyncs() >= 1, "the make is a block sync point");
        long strands = Strand.MADE.sum();
        Kernel.launch(Dim3.of(1), Dim3.of(256), 0, body);
        long made = Strand.MADE.sum() - strands;
        assertEquals(1, produced[0]);
        // a thread that waited in the make with its stack would hold a strand of its own: 256 of them
        assertTrue(made < 32, "the launch made " + made + " strands for 256 threads");
    }

    @Test
    void everyRankGetsTheSameExceptionWhenTheRanksDisagree() {
        KernelBody[] body = new KernelBody[1];
        ConcurrentHashMap<Integer, String> messages = new ConcurrentHashMap<>();
        body[0] = ctx -> {
            PipelineSharedState state = ctx.shared("state", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
            int producers = ctx.threadRank() == 5 ? 2 : 1;
            try {
                Pipeline.make(ctx.block(), state, producers).quit();
                messages.put(ctx.threadRank(), "made");
            } catch (IllegalArgumentException e) {
                messages.put(ctx.threadRank(), e.getMessage());
            }
            ctx.syncThreads();
        };
        assertTrue(ResumptionScan.scan(body[0]).onScheduler(), ResumptionScan.scan(body[0]).reason());
        Kernel.launch(Dim3.of(2), Dim3.of(64), 0, body[0]);
        java.util.Map<Integer, String> compiled = new java.util.TreeMap<>(messages);
        messages.clear();
        onStrands(() -> {
            Kernel.launch(Dim3.of(2), Dim3.of(64), 0, body[0]);
            return null;
        });
        assertEquals(new java.util.TreeMap<>(messages), compiled, "compiled and on strands alike");
        assertEquals(1, compiled.values().stream().distinct().count(), compiled::toString);
        assertTrue(compiled.get(0).contains("producer count 2"), compiled.get(0));
    }

    @Test
    void aPipelinePartitionedByRoleIsMadeInSteps() {
        int size = 96;
        float[] sums = new float[size];
        KernelBody body = ctx -> {
            PipelineSharedState state = ctx.shared("state", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
            int rank = ctx.threadRank();
            boolean producer = rank % 3 == 0;
            Pipeline pipe = Pipeline.make(ctx.block(), state, producer ? PipelineRole.PRODUCER
                : PipelineRole.CONSUMER);
            java.lang.foreign.MemorySegment stages = ctx.sharedArray("stages", 4L * 2 * size);
            for (int batch = 0; batch < 4; batch++) {
                java.lang.foreign.MemorySegment stage = stages.asSlice(4L * size * (batch % 2), 4L * size);
                if (producer) {
                    pipe.producerAcquire();
                    stage.setAtIndex(java.lang.foreign.ValueLayout.JAVA_FLOAT, rank, batch + rank);
                    pipe.producerCommit();
                } else {
                    pipe.consumerWait();
                    float s = 0;
                    for (int p = 0; p < size; p += 3) {
                        s += stage.getAtIndex(java.lang.foreign.ValueLayout.JAVA_FLOAT, p);
                    }
                    sums[rank] += s;
                    pipe.consumerRelease();
                }
            }
            pipe.quit();
        };
        assertTrue(ResumptionScan.scan(body).onScheduler(), ResumptionScan.scan(body).reason());
        Kernel.launch(Dim3.of(1), Dim3.of(size), 4L, body);
        float expected = 0;
        for (int batch = 0; batch < 4; batch++) {
            for (int p = 0; p < size; p += 3) {
                expected += batch + p;
            }
        }
        for (int r = 0; r < size; r++) {
            assertEquals(r % 3 == 0 ? 0f : expected, sums[r], "rank " + r);
        }
    }

    @Test
    void aMakeOnAGroupOtherThanTheBlockWaitsWithItsStackAndStillWorks() {
        AtomicInteger made = new AtomicInteger();
        KernelBody body = ctx -> {
            dev.jpipeline.Group tile = ctx.tiledPartition(32);
            PipelineSharedState state = ctx.shared("state" + ctx.threadRank() / 32,
                () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
            Pipeline pipe = Pipeline.make(tile, state);
            pipe.producerAcquire();
            pipe.producerCommit();
            pipe.consumerWait();
            pipe.consumerRelease();
            made.incrementAndGet();
            pipe.quit();
            ctx.syncThreads();
        };
        assertTrue(ResumptionScan.scan(body).onScheduler(), ResumptionScan.scan(body).reason());
        Kernel.launch(Dim3.of(2), Dim3.of(128), 0, body);
        assertEquals(256, made.get());
    }

    @Test
    void aFailureWhileOthersWaitInTheMakeFailsTheLaunchAndTheStateCanBeMadeAgain() {
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 2);
        AtomicInteger entered = new AtomicInteger();
        AtomicInteger unwound = new AtomicInteger();
        boolean[] fail = {true};
        KernelBody body = ctx -> {
            if (fail[0] && ctx.threadRank() == 7) {
                throw new IllegalStateException("thread 7 fails before the make");
            }
            entered.incrementAndGet();
            try {
                Pipeline.make(ctx.block(), state).quit();
            } finally {
                unwound.incrementAndGet();
            }
        };
        assertTrue(ResumptionScan.scan(body).onScheduler(), ResumptionScan.scan(body).reason());
        KernelFailure failure = assertThrows(KernelFailure.class, () -> assertTimeoutPreemptively(
            Duration.ofSeconds(30), () -> Kernel.launch(Dim3.of(1), Dim3.of(64), 0, body)));
        assertTrue(failure.getCause() instanceof IllegalStateException, String.valueOf(failure.getCause()));
        assertEquals(entered.get(), unwound.get(), "every thread that entered the make unwound from it");
        int before = unwound.get();
        fail[0] = false;    // the aborted make left no proposal behind: the same state makes again
        assertTimeoutPreemptively(Duration.ofSeconds(30), () -> Kernel.launch(Dim3.of(1), Dim3.of(64), 0, body));
        assertEquals(before + 64, unwound.get());
    }
}
