package dev.jpipeline.examples;

import static dev.jpipeline.MemcpyAsync.memcpyAsync;

import dev.jpipeline.Pipeline;
import dev.jpipeline.simt.Dim3;
import dev.jpipeline.simt.Kernel;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * CUDA Programming Guide 4.10.6, the {@code cuda::pipeline} version: each thread uses its own thread-scope
 * pipeline to copy its element of four blocks of {@code in} into shared memory, in three stages, and consumes
 * them stage by stage. (The guide's listing copies the first element in every thread; here thread t copies
 * element t, as its comments describe.)
 */
public final class TrackingAsyncCopies implements Example {

    static final int BLOCK_SIZE = 128;

    /** The example at its built-in size: one block of {@value #BLOCK_SIZE} threads. */
    public TrackingAsyncCopies() {
    }

    @Override
    public String name() {
        return "4.10.6 tracking copies (cuda::pipeline)";
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
        MemorySegment in = Floats.floats(4 * BLOCK_SIZE, i -> i * 0.5);
        AtomicBoolean ok = new AtomicBoolean(true);
        Kernel.launch(Dim3.of(1), Dim3.of(BLOCK_SIZE), 4L * 4 * BLOCK_SIZE, ctx -> {
            MemorySegment buffer = ctx.dynamicShared();        // __shared__ float buffer[4 * block_size]
            int t = ctx.threadIdx().x();
            Pipeline pipeline = Pipeline.make();
            // First stage of memory copies: one element of the first block
            pipeline.producerAcquire();
            memcpyAsync(Floats.slice(buffer, t, 1), Floats.slice(in, t, 1), 4, pipeline);
            pipeline.producerCommit();
            // Second stage: one element of the second and third blocks
            pipeline.producerAcquire();
            memcpyAsync(Floats.slice(buffer, BLOCK_SIZE + t, 1), Floats.slice(in, BLOCK_SIZE + t, 1), 4, pipeline);
            memcpyAsync(Floats.slice(buffer, 2 * BLOCK_SIZE + t, 1), Floats.slice(in, 2 * BLOCK_SIZE + t, 1), 4,
                pipeline);
            pipeline.producerCommit();
            // Third stage: one element of the last block
            pipeline.producerAcquire();
            memcpyAsync(Floats.slice(buffer, 3 * BLOCK_SIZE + t, 1), Floats.slice(in, 3 * BLOCK_SIZE + t, 1), 4,
                pipeline);
            pipeline.producerCommit();
            int[][] stageBlocks = {{0}, {1, 2}, {3}};
            for (int[] blocks : stageBlocks) {
                pipeline.consumerWait();                        // the oldest stage
                pipeline.consumerRelease();
                ctx.syncThreads();
                if (!Floats.sameBlocks(buffer, in, blocks, BLOCK_SIZE)) {   // use the stage's data
                    ok.set(false);
                }
            }
        });
        return ok.get();
    }
}
