package dev.jpipeline.examples;

import static dev.jpipeline.MemcpyAsync.memcpyAsync;

import dev.jpipeline.Pipeline;
import dev.jpipeline.simt.Dim3;
import dev.jpipeline.simt.Kernel;
import dev.jpipeline.simt.KernelContext;
import java.lang.foreign.MemorySegment;

/**
 * CUDA Programming Guide 4.10.6, the {@code cuda::pipeline} version: each thread uses its own thread-scope
 * pipeline to copy its element of four blocks of {@code in} into shared memory, in three stages, and consumes
 * them stage by stage. (The guide's listing copies the first element in every thread; here thread t copies
 * element t, as its comments describe.) A thread's wait covers only its own copies, so each stage is used after
 * the {@code __syncthreads} that makes every thread's copies visible: thread t checks element
 * {@code blockSize - 1 - t} of each block of the stage, which the mirrored thread copied.
 */
public final class TrackingAsyncCopies implements Example {

    private final int blockSize;
    /** The planted mistake, or null for the documentation's code. */
    private final Fault fault;

    /** The example at its built-in size: one block of 128 threads. */
    public TrackingAsyncCopies() {
        this(128, null);
    }

    private TrackingAsyncCopies(int blockSize, Fault fault) {
        this.blockSize = blockSize;
        this.fault = fault;
    }

    /**
     * One block of 16 threads (32, one warp, for the {@code __syncwarp} mistake), with {@code fault} planted (or
     * none: null).
     */
    static TrackingAsyncCopies small(Fault fault) {
        return new TrackingAsyncCopies(fault == Fault.SYNCWARP_MASKS_DISAGREE ? 32 : 16, fault);
    }

    /** One block of 16 threads. */
    @Override
    public Example forChecking() {
        return small(null);
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
        return blockSize;
    }

    @Override
    public boolean run() {
        return Floats.equal(launch(), 4 * blockSize, i -> i * 0.5);
    }

    /** The elements each thread uses, stored where they were copied from: out[i] is buffer[i] as used. */
    @Override
    public int[] output() {
        return Floats.bits(launch(), 4 * blockSize);
    }

    private MemorySegment launch() {
        MemorySegment in = Floats.floats(4 * blockSize, i -> i * 0.5);
        MemorySegment out = Floats.floats(4 * blockSize, i -> -1);
        Kernel.launch(Dim3.of(1), Dim3.of(blockSize), 4L * 4 * blockSize, ctx -> {
            MemorySegment buffer = ctx.dynamicShared();        // __shared__ float buffer[4 * block_size]
            int t = ctx.threadIdx().x();
            Pipeline pipeline = Pipeline.make();
            // First stage of memory copies: one element of the first block
            pipeline.producerAcquire();
            memcpyAsync(Floats.slice(buffer, t, 1), Floats.slice(in, t, 1), 4, pipeline);
            pipeline.producerCommit();
            // Second stage: one element of the second and third blocks
            pipeline.producerAcquire();
            memcpyAsync(Floats.slice(buffer, blockSize + t, 1), Floats.slice(in, blockSize + t, 1), 4, pipeline);
            memcpyAsync(Floats.slice(buffer, 2 * blockSize + t, 1), Floats.slice(in, 2 * blockSize + t, 1), 4,
                pipeline);
            pipeline.producerCommit();
            // Third stage: one element of the last block
            pipeline.producerAcquire();
            memcpyAsync(Floats.slice(buffer, 3 * blockSize + t, 1), Floats.slice(in, 3 * blockSize + t, 1), 4,
                pipeline);
            pipeline.producerCommit();
            int[][] stageBlocks = {{0}, {1, 2}, {3}};
            for (int[] blocks : stageBlocks) {
                pipeline.consumerWait();                        // the oldest stage
                pipeline.consumerRelease();
                syncThreads(ctx);                               // __syncthreads()
                for (int block : blocks) {                      // use the stage's data
                    long i = (long) block * blockSize + blockSize - 1 - t;
                    Floats.set(out, i, ctx.loadFloat(buffer, i));
                }
            }
        });
        return out;
    }

    /** {@code __syncthreads()}, or the planted mistake in its place. */
    private void syncThreads(KernelContext ctx) {
        switch (fault) {
            case NO_SYNCTHREADS -> {
                // BUG: no __syncthreads: the other threads' copies may still be in flight
            }
            case DIVERGENT_SYNCTHREADS -> {
                if (ctx.threadIdx().x() % 2 == 0) {
                    ctx.syncThreads();                          // BUG: two call sites of __syncthreads
                } else {
                    ctx.syncThreads();
                }
            }
            case SYNCWARP_MASKS_DISAGREE -> {
                // BUG: the block is one warp; lane 0 names only the first half-warp, the others all lanes
                ctx.syncWarp(ctx.threadIdx().x() == 0 ? 0x0000ffff : 0xffffffff);
            }
            case null, default -> ctx.syncThreads();
        }
    }
}
