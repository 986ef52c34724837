package dev.jpipeline.examples;

import static dev.jpipeline.MemcpyAsync.memcpyAsync;

import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineRole;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.simt.Dim3;
import dev.jpipeline.simt.Kernel;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * CUDA Programming Guide 4.10.1, the ways to create a pipeline: thread scope, block scope (unified), and a
 * block-scope partitioned pipeline in which only thread 0 produces. Each is used for one round trip.
 */
public final class PipelineCreation implements Example {

    static final int THREADS = 64;

    /** The example at its built-in size: one block of {@value #THREADS} threads. */
    public PipelineCreation() {
    }

    @Override
    public String name() {
        return "4.10.1 creating pipelines";
    }

    @Override
    public String source() {
        return "CUDA Programming Guide 4.10.1";
    }

    @Override
    public int threads() {
        return THREADS;
    }

    @Override
    public boolean run() {
        MemorySegment in = Floats.floats(THREADS, i -> i + 0.25);
        AtomicBoolean ok = new AtomicBoolean(true);
        Kernel.launch(Dim3.of(1), Dim3.of(THREADS), 3L * 4 * THREADS, ctx -> {
            var group = ctx.block();
            int t = group.threadRank();
            MemorySegment smem = ctx.dynamicShared();
            // Create a pipeline at thread scope
            Pipeline threadPipeline = Pipeline.make();
            threadPipeline.producerAcquire();
            memcpyAsync(Floats.slice(smem, t, 1), Floats.slice(in, t, 1), 4, threadPipeline);
            threadPipeline.producerCommit();
            threadPipeline.consumerWait();
            check(ok, Floats.get(smem, t) == Floats.get(in, t));
            threadPipeline.consumerRelease();
            // Create a pipeline at block scope
            PipelineSharedState sharedState = ctx.shared("unified", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
            Pipeline pipeline = Pipeline.make(group, sharedState);
            pipeline.producerAcquire();
            memcpyAsync(group, Floats.slice(smem, THREADS, THREADS), in, 4L * THREADS, pipeline);
            pipeline.producerCommit();
            pipeline.consumerWait();
            check(ok, Floats.get(smem, THREADS + (THREADS - 1 - t)) == Floats.get(in, THREADS - 1 - t));
            pipeline.consumerRelease();
            pipeline.quit();
            // Create a partitioned pipeline at block scope where only thread 0 is a producer
            PipelineSharedState partitionedState = ctx.shared("partitioned",
                () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
            PipelineRole threadRole = t == 0 ? PipelineRole.PRODUCER : PipelineRole.CONSUMER;
            Pipeline partitioned = Pipeline.make(group, partitionedState, threadRole);
            if (threadRole == PipelineRole.PRODUCER) {
                partitioned.producerAcquire();
                memcpyAsync(Floats.slice(smem, 2 * THREADS, THREADS), in, 4L * THREADS, partitioned);
                partitioned.producerCommit();
            } else {
                partitioned.consumerWait();
                check(ok, Floats.get(smem, 2 * THREADS + t) == Floats.get(in, t));
                partitioned.consumerRelease();
            }
            partitioned.quit();
        });
        return ok.get();
    }

    private static void check(AtomicBoolean ok, boolean condition) {
        if (!condition) {
            ok.set(false);
        }
    }
}
