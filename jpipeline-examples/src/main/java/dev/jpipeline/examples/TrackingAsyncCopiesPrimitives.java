package dev.jpipeline.examples;

import static dev.jpipeline.simt.PipelinePrimitives.pipelineCommit;
import static dev.jpipeline.simt.PipelinePrimitives.pipelineMemcpyAsync;
import static dev.jpipeline.simt.PipelinePrimitives.pipelineWaitPrior;

import dev.jpipeline.simt.Dim3;
import dev.jpipeline.simt.Kernel;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicBoolean;

/** CUDA Programming Guide 4.10.6, the primitives version ({@code __pipeline_memcpy_async} and friends). */
public final class TrackingAsyncCopiesPrimitives implements Example {

    static final int BLOCK_SIZE = 128;

    /** The example at its built-in size: one block of {@value #BLOCK_SIZE} threads. */
    public TrackingAsyncCopiesPrimitives() {
    }

    @Override
    public String name() {
        return "4.10.6 tracking copies (primitives)";
    }

    @Override
    public String source() {
        return "CUDA Programming Guide 4.10.6";
    }

    @Override
    public int threads() {
        return BLOCK_SIZE;
    }

    @Override
    public boolean run() {
        MemorySegment in = Floats.floats(4 * BLOCK_SIZE, i -> 3 * i + 1);
        AtomicBoolean ok = new AtomicBoolean(true);
        Kernel.launch(Dim3.of(1), Dim3.of(BLOCK_SIZE), 4L * 4 * BLOCK_SIZE, ctx -> {
            MemorySegment buffer = ctx.dynamicShared();
            int t = ctx.threadIdx().x();
            // First batch: one element of the first block
            pipelineMemcpyAsync(Floats.slice(buffer, t, 1), Floats.slice(in, t, 1), 4);
            pipelineCommit();
            // Second batch: one element of the second and third blocks
            pipelineMemcpyAsync(Floats.slice(buffer, BLOCK_SIZE + t, 1), Floats.slice(in, BLOCK_SIZE + t, 1), 4);
            pipelineMemcpyAsync(Floats.slice(buffer, 2 * BLOCK_SIZE + t, 1), Floats.slice(in, 2 * BLOCK_SIZE + t, 1), 4);
            pipelineCommit();
            // Third batch: one element of the last block
            pipelineMemcpyAsync(Floats.slice(buffer, 3 * BLOCK_SIZE + t, 1), Floats.slice(in, 3 * BLOCK_SIZE + t, 1), 4);
            pipelineCommit();
            int[] priors = {2, 1, 0};
            int[][] blocksReady = {{0}, {0, 1, 2}, {0, 1, 2, 3}};
            for (int step = 0; step < 3; step++) {
                pipelineWaitPrior(priors[step]);               // all but the `prior` newest batches
                ctx.syncThreads();
                if (!Floats.sameBlocks(buffer, in, blocksReady[step], BLOCK_SIZE)) {
                    ok.set(false);
                }
            }
        });
        return ok.get();
    }
}
