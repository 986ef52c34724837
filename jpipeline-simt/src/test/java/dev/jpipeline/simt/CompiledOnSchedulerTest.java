package dev.jpipeline.simt;

import static dev.jpipeline.simt.CompiledOrStrands.onStrands;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Kernels compiled on their blocks' schedulers (ResumptionScan's verdict onScheduler, Strand.runCompiledThread): their
 * threads give their stacks up at syncs and at pipeline waits, and every other wait blocks as on strands. Each test
 * runs the kernel compiled and asks for what strands give ({@code -Djpipeline.simt.compile=false}).
 */
class CompiledOnSchedulerTest {

    @BeforeEach
    void compilationOn() {
        assumeTrue(ResumptionScan.switchedOn(), "compilation switched off for this run");
    }

    /**
     * A block-scope partitioned pipeline written at the kernel's own level: {@code producers} threads fill each stage
     * (one float each), the others wait for it and add it up, batch after batch, then the block syncs and thread 0
     * writes the block's total.
     */
    private static KernelBody pipelineKernel(int stages, int producers, int batches, float[] totals) {
        return ctx -> {
            int size = ctx.block().size();
            int rank = ctx.threadRank();
            MemorySegment buffer = ctx.sharedArray("buffer", 4L * stages * producers);
            MemorySegment sums = ctx.sharedArray("sums", 4L * size);
            PipelineSharedState state = ctx.shared("state", () -> PipelineSharedState.create(ThreadScope.BLOCK,
                stages));
            Pipeline pipe = Pipeline.make(ctx.block(), state, producers);
            float sum = 0;
            for (int batch = 0; batch < batches; batch++) {
                int stage = batch % stages;
                if (rank < producers) {
                    pipe.producerAcquire();
                    buffer.setAtIndex(ValueLayout.JAVA_FLOAT, (long) stage * producers + rank,
                        batch * 1000 + rank + ctx.blockIdx().x());
                    pipe.producerCommit();
                } else {
                    pipe.consumerWait();
                    for (int p = 0; p < producers; p++) {
                        sum += buffer.getAtIndex(ValueLayout.JAVA_FLOAT, (long) stage * producers + p);
                    }
                    pipe.consumerRelease();
                }
            }
            sums.setAtIndex(ValueLayout.JAVA_FLOAT, rank, sum);
            ctx.syncThreads();
            if (rank == 0) {
                float total = 0;
                for (int r = 0; r < size; r++) {
                    total += sums.getAtIndex(ValueLayout.JAVA_FLOAT, r);
                }
                totals[ctx.blockIdx().x()] = total;
            }
            pipe.quit();
        };
    }

    private static float expectedTotal(int block, int size, int producers, int batches) {
        float perConsumer = 0;
        for (int batch = 0; batch < batches; batch++) {
            for (int p = 0; p < producers; p++) {
                perConsumer += batch * 1000 + p + block;
            }
        }
        float total = 0;
        for (int c = producers; c < size; c++) {
            total += perConsumer;
        }
        return total;
    }

    @Test
    void pipelineWaitsAtTheKernelsLevelSuspendWithoutAStack() {
        float[] totals = new float[3];
        KernelBody body = pipelineKernel(2, 4, 16, totals);
        ResumptionScan.Verdict verdict = ResumptionScan.scan(body);
        assertTrue(verdict.onScheduler(), () -> "not compiled on the scheduler: " + verdict.reason());
        assertTrue(verdict.compiled().waits() >= 2, "producerAcquire and consumerWait are points it suspends at");
        long suspended = BlockScheduler.SUSPENSIONS.sum();
        long compiledBlocks = Launch.COMPILED_BLOCKS.sum();
        Kernel.launch(Dim3.of(3), Dim3.of(64), 0, body);
        assertTrue(BlockScheduler.SUSPENSIONS.sum() > suspended, "no thread gave its stack up");
        assertEquals(3, Launch.COMPILED_BLOCKS.sum() - compiledBlocks, "blocks counted as compiled");
        float[] expected = new float[3];
        for (int b = 0; b < 3; b++) {
            expected[b] = expectedTotal(b, 64, 4, 16);
        }
        assertEquals(Arrays.toString(expected), Arrays.toString(totals));
    }

    /**
     * Seeded: random stage counts, producer counts, block sizes and batches, compiled against strands.
     * {@code -Djpipeline.simt.seed=N} repeats a run.
     */
    @Test
    void randomPipelinesGiveWhatStrandsGive() {
        long seed = Long.getLong("jpipeline.simt.seed", System.nanoTime());
        System.out.println("CompiledOnSchedulerTest.randomPipelines seed " + seed + " (-Djpipeline.simt.seed=" + seed
            + ")");
        Random random = new Random(seed);
        for (int round = 0; round < 12; round++) {
            int size = 2 + random.nextInt(140);
            int producers = 1 + random.nextInt(size - 1);
            int stages = 1 + random.nextInt(4);
            int batches = 1 + random.nextInt(12);
            int blocks = 1 + random.nextInt(3);
            String shape = "seed " + seed + ", round " + round + ": " + blocks + " x " + size + ", " + producers
                + " producers, " + stages + " stages, " + batches + " batches";
            float[] compiled = new float[blocks];
            assertTimeoutPreemptively(Duration.ofSeconds(60), () -> Kernel.launch(Dim3.of(blocks), Dim3.of(size), 0,
                pipelineKernel(stages, producers, batches, compiled)), shape);
            float[] strands = new float[blocks];
            onStrands(() -> {
                Kernel.launch(Dim3.of(blocks), Dim3.of(size), 0, pipelineKernel(stages, producers, batches, strands));
                return null;
            });
            assertEquals(Arrays.toString(strands), Arrays.toString(compiled), shape);
        }
    }

    @Test
    void aConsumerThatWaitsForABatchNoOneCommitsIsReportedAsAHangNamingItsWait() {
        KernelBody body = ctx -> {
            PipelineSharedState state = ctx.shared("state", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
            Pipeline pipe = Pipeline.make(ctx.block(), state, 1);
            if (ctx.threadRank() == 0) {
                pipe.producerAcquire();         // never commits: every consumer waits for ever
                ctx.syncThreads();
            } else {
                pipe.consumerWait();
                pipe.consumerRelease();
            }
        };
        assertTrue(ResumptionScan.scan(body).onScheduler(), ResumptionScan.scan(body).reason());
        KernelFailure failure = assertThrows(KernelFailure.class, () -> assertTimeoutPreemptively(
            Duration.ofSeconds(30), () -> Kernel.launch(Dim3.of(1), Dim3.of(32), 0, body)));
        String report = failure.getMessage();
        assertTrue(report.contains("hung"), report);
        assertTrue(report.contains("__syncthreads"), "thread 0's wait is named: " + report);
        assertTrue(report.contains("consumer_wait"), "the consumers' wait is named: " + report);
    }

    @Test
    void aFailedLaunchUnwindsThreadsSuspendedAtASyncSoTheirFinallyBlocksRun() {
        AtomicInteger unwound = new AtomicInteger();
        KernelBody body = ctx -> {
            PipelineSharedState state = ctx.shared("state", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
            Pipeline pipe = Pipeline.make(ctx.block(), state, 1);    // a pipeline: it runs on the scheduler
            try {
                if (ctx.threadRank() == ctx.block().size() - 1) {
                    throw new IllegalStateException("the last thread fails");    // the others wait at the sync
                }
                ctx.syncThreads();
            } finally {
                unwound.incrementAndGet();
                pipe.quit();
            }
        };
        assertTrue(ResumptionScan.scan(body).onScheduler(), ResumptionScan.scan(body).reason());
        KernelFailure failure = assertThrows(KernelFailure.class, () -> assertTimeoutPreemptively(
            Duration.ofSeconds(30), () -> Kernel.launch(Dim3.of(1), Dim3.of(64), 0, body)));
        assertTrue(failure.getCause() instanceof IllegalStateException, String.valueOf(failure.getCause()));
        assertEquals(64, unwound.get(), "every thread's finally block ran");
    }

    @Test
    void aKernelThatNamesTheJavaThreadRunsOnStrands() {
        KernelBody body = ctx -> {
            PipelineSharedState state = ctx.shared("state", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
            Pipeline pipe = Pipeline.make(ctx.block(), state, 1);
            Thread before = Thread.currentThread();
            ctx.syncThreads();
            if (before != Thread.currentThread()) {
                throw new AssertionError("a CUDA thread changed Java threads across a sync");
            }
            pipe.quit();
        };
        ResumptionScan.Verdict verdict = ResumptionScan.scan(body);
        assertEquals(null, verdict.compiled(), "a kernel that uses Thread.currentThread keeps its Java thread");
        Kernel.launch(Dim3.of(1), Dim3.of(64), 0, body);
    }
}
