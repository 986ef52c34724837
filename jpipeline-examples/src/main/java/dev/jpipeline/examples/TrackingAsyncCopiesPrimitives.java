package dev.jpipeline.examples;

import static dev.jpipeline.simt.PipelinePrimitives.pipelineCommit;
import static dev.jpipeline.simt.PipelinePrimitives.pipelineMemcpyAsync;
import static dev.jpipeline.simt.PipelinePrimitives.pipelineWaitPrior;

import dev.jpipeline.simt.Dim3;
import dev.jpipeline.simt.Kernel;
import java.lang.foreign.MemorySegment;

/**
 * CUDA Programming Guide 4.10.6, the primitives version ({@code __pipeline_memcpy_async} and friends): three
 * batches of copies, then three waits for all but the 2, 1 and 0 newest batches, each followed by
 * {@code __syncthreads} and a use of the blocks ready by then (thread t checks element {@code blockSize - 1 - t}
 * of each, which the mirrored thread copied).
 */
public final class TrackingAsyncCopiesPrimitives implements Example {

    /** The block of each read, in the order a thread reads them: blocks 0, then 0 to 2, then 0 to 3. */
    private static final int[] BLOCK_OF_READ = {0, 0, 1, 2, 0, 1, 2, 3};

    private final int blockSize;
    /** The planted mistake, or null for the documentation's code. */
    private final Fault fault;

    /** The example at its built-in size: one block of 128 threads. */
    public TrackingAsyncCopiesPrimitives() {
        this(128, null);
    }

    private TrackingAsyncCopiesPrimitives(int blockSize, Fault fault) {
        this.blockSize = blockSize;
        this.fault = fault;
    }

    /** One block of 16 threads, with {@code fault} planted (or none: null). */
    static TrackingAsyncCopiesPrimitives small(Fault fault) {
        return new TrackingAsyncCopiesPrimitives(16, fault);
    }

    /** One block of 16 threads. */
    @Override
    public Example forChecking() {
        return small(null);
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
        return blockSize;
    }

    @Override
    public boolean run() {
        return Floats.equal(launch(), 8 * blockSize,
            i -> 3 * (BLOCK_OF_READ[i / blockSize] * blockSize + i % blockSize) + 1);
    }

    /**
     * The elements each thread uses, in the order it reads them: the k-th read of thread t (element
     * {@code blockSize - 1 - t} of block {@code BLOCK_OF_READ[k]}) is out[k * blockSize + blockSize - 1 - t].
     */
    @Override
    public int[] output() {
        return Floats.bits(launch(), 8 * blockSize);
    }

    private MemorySegment launch() {
        MemorySegment in = Floats.floats(4 * blockSize, i -> 3 * i + 1);
        MemorySegment out = Floats.floats(8 * blockSize, i -> -1);
        Kernel.launch(Dim3.of(1), Dim3.of(blockSize), 4L * 4 * blockSize, ctx -> {
            MemorySegment buffer = ctx.dynamicShared();
            int t = ctx.threadIdx().x();
            // First batch: one element of the first block
            pipelineMemcpyAsync(Floats.slice(buffer, t, 1), Floats.slice(in, t, 1), 4);
            pipelineCommit();
            // Second batch: one element of the second and third blocks
            pipelineMemcpyAsync(Floats.slice(buffer, blockSize + t, 1), Floats.slice(in, blockSize + t, 1), 4);
            pipelineMemcpyAsync(Floats.slice(buffer, 2 * blockSize + t, 1), Floats.slice(in, 2 * blockSize + t, 1),
                4);
            pipelineCommit();
            // Third batch: one element of the last block
            pipelineMemcpyAsync(Floats.slice(buffer, 3 * blockSize + t, 1), Floats.slice(in, 3 * blockSize + t, 1),
                4);
            pipelineCommit();
            if (fault == Fault.RETURN_BEFORE_SYNCTHREADS && t == blockSize - 1) {
                return;                                     // BUG: the others wait for it in __syncthreads
            }
            int[] priors = {2, 1, 0};
            int[][] blocksReady = {{0}, {0, 1, 2}, {0, 1, 2, 3}};
            int k = 0;
            for (int step = 0; step < 3; step++) {
                pipelineWaitPrior(priors[step]);            // all but the `prior` newest batches
                ctx.syncThreads();
                for (int block : blocksReady[step]) {
                    long i = (long) block * blockSize + blockSize - 1 - t;
                    Floats.set(out, (long) k++ * blockSize + blockSize - 1 - t, ctx.loadFloat(buffer, i));
                }
            }
        });
        return out;
    }
}
