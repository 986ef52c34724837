package dev.jpipeline.examples;

import static dev.jpipeline.MemcpyAsync.memcpyAsync;

import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineRole;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.simt.Dim3;
import dev.jpipeline.simt.Kernel;
import java.lang.foreign.MemorySegment;

/**
 * CUDA Programming Guide 4.10.1, the ways to create a pipeline: thread scope, block scope (unified), and a
 * block-scope partitioned pipeline in which only thread 0 produces. Each is used for one round trip.
 */
public final class PipelineCreation implements Example {

    private final int threads;
    /** The planted mistake, or null for the documentation's code. */
    private final Fault fault;

    /** The example at its built-in size: one block of 64 threads. */
    public PipelineCreation() {
        this(64, null);
    }

    private PipelineCreation(int threads, Fault fault) {
        this.threads = threads;
        this.fault = fault;
    }

    /** One block of 16 threads, with {@code fault} planted (or none: null). */
    static PipelineCreation small(Fault fault) {
        return new PipelineCreation(16, fault);
    }

    /** One block of 16 threads. */
    @Override
    public Example forChecking() {
        return small(null);
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
        return threads;
    }

    @Override
    public boolean run() {
        MemorySegment in = input();
        MemorySegment out = launch(in);
        return Floats.equal(out, 3 * threads, i -> {
            int t = i % threads;
            return i < threads ? Floats.get(in, t)                      // the thread-scope round trip
                : i < 2 * threads ? Floats.get(in, threads - 1 - t)     // the unified block-scope one
                : t == 0 ? -1 : Floats.get(in, t);                      // the partitioned one: thread 0 produces
        });
    }

    /** Each thread's three reads, in out[3 * threads] (-1 for thread 0's, which produces in the third). */
    @Override
    public int[] output() {
        return Floats.bits(launch(input()), 3 * threads);
    }

    private MemorySegment input() {
        return Floats.floats(threads, i -> i + 0.25);
    }

    private MemorySegment launch(MemorySegment in) {
        MemorySegment out = Floats.floats(3 * threads, i -> -1);
        Kernel.launch(Dim3.of(1), Dim3.of(threads), 3L * 4 * threads, ctx -> {
            var group = ctx.block();
            int t = group.threadRank();
            MemorySegment smem = ctx.dynamicShared();
            // Create a pipeline at thread scope
            Pipeline threadPipeline = Pipeline.make();
            threadPipeline.producerAcquire();
            memcpyAsync(Floats.slice(smem, t, 1), Floats.slice(in, t, 1), 4, threadPipeline);
            threadPipeline.producerCommit();
            if (fault == Fault.WAIT_PRIOR_TOO_LARGE) {
                Pipeline.consumerWaitPrior(threadPipeline, 1);  // BUG: leaves in flight the batch it reads
            } else {
                threadPipeline.consumerWait();
            }
            Floats.set(out, t, ctx.loadFloat(smem, t));
            if (fault != Fault.WAIT_PRIOR_TOO_LARGE) {         // wait_prior has released what it waited for
                threadPipeline.consumerRelease();
            }
            // Create a pipeline at block scope
            PipelineSharedState sharedState = ctx.shared("unified", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
            Pipeline pipeline = Pipeline.make(group, sharedState);
            pipeline.producerAcquire();
            memcpyAsync(group, Floats.slice(smem, threads, threads), in, 4L * threads, pipeline);
            pipeline.producerCommit();
            pipeline.consumerWait();
            Floats.set(out, threads + t, ctx.loadFloat(smem, threads + (threads - 1 - t)));
            pipeline.consumerRelease();
            pipeline.quit();
            // Create a partitioned pipeline at block scope where only thread 0 is a producer
            PipelineSharedState partitionedState = ctx.shared("partitioned",
                () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
            PipelineRole threadRole = t == 0 ? PipelineRole.PRODUCER : PipelineRole.CONSUMER;
            Pipeline partitioned = Pipeline.make(group, partitionedState, threadRole);
            if (threadRole == PipelineRole.PRODUCER) {
                partitioned.producerAcquire();
                memcpyAsync(Floats.slice(smem, 2 * threads, threads), in, 4L * threads, partitioned);
                partitioned.producerCommit();
            } else {
                partitioned.consumerWait();
                Floats.set(out, 2 * threads + t, ctx.loadFloat(smem, 2 * threads + t));
                partitioned.consumerRelease();
            }
            partitioned.quit();
        });
        return out;
    }
}
