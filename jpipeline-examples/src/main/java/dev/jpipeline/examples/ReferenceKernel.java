package dev.jpipeline.examples;

import static dev.jpipeline.MemcpyAsync.memcpyAsync;

import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.simt.Dim3;
import dev.jpipeline.simt.Kernel;
import dev.jpipeline.simt.KernelContext;
import dev.jpipeline.simt.ThreadBlock;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The libcu++ {@code cuda::pipeline} reference example: a block double-buffers group copies from two global
 * arrays into shared memory (prime, pipelined copy/compute, drain). {@code compute} here stores
 * {@code global0[i] + global1[i]} of each subset in an output array.
 */
public final class ReferenceKernel implements Example {

    private final int groupSize;
    private final int subsets;

    /** The example at its built-in size: a group of 128 threads, 64 subsets. */
    public ReferenceKernel() {
        this(128, 64);
    }

    private ReferenceKernel(int groupSize, int subsets) {
        this.groupSize = groupSize;
        this.subsets = subsets;
    }

    /** A group of 16 threads, 4 subsets. */
    @Override
    public Example forChecking() {
        return new ReferenceKernel(16, 4);
    }

    @Override
    public String name() {
        return "libcu++ reference kernel (double buffer)";
    }

    @Override
    public String source() {
        return "libcu++ cuda::pipeline reference";
    }

    @Override
    public int threads() {
        return groupSize;
    }

    private static MemorySegment ints(int n, java.util.function.IntUnaryOperator f) {
        MemorySegment s = Arena.ofAuto().allocate(4L * n, 16);
        for (int i = 0; i < n; i++) {
            s.setAtIndex(ValueLayout.JAVA_INT, i, f.applyAsInt(i));
        }
        return s;
    }

    @Override
    public boolean run() {
        MemorySegment out = launch();
        for (int i = 0; i < groupSize * subsets; i++) {
            if (out.getAtIndex(ValueLayout.JAVA_INT, i) != 8 * i) {
                return false;
            }
        }
        return true;
    }

    /** {@code out}: {@code global0[i] + global1[i]}, ints. */
    @Override
    public int[] output() {
        return Floats.bits(launch(), groupSize * subsets);
    }

    private MemorySegment launch() {
        int total = groupSize * subsets;
        MemorySegment global0 = ints(total, i -> i);
        MemorySegment global1 = ints(total, i -> 7 * i);
        MemorySegment out = ints(total, i -> 0);
        Kernel.launch(Dim3.of(1), Dim3.of(groupSize), 4L * 4 * groupSize, ctx -> {
            MemorySegment s = ctx.dynamicShared();                           // extern __shared__ T s[]
            ThreadBlock group = ctx.block();
            long bytes = 4L * group.size();
            MemorySegment[] shared = {s.asSlice(0, 2 * bytes), s.asSlice(2 * bytes, 2 * bytes)};
            PipelineSharedState sharedState = ctx.shared("shared_state",
                () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
            Pipeline pipeline = Pipeline.make(group, sharedState);
            // Prime the pipeline.
            pipeline.producerAcquire();
            memcpyAsync(group, shared[0], global0.asSlice(0), bytes, pipeline);
            memcpyAsync(group, shared[0].asSlice(bytes), global1.asSlice(0), bytes, pipeline);
            pipeline.producerCommit();
            // Pipelined copy/compute.
            for (int subset = 1; subset < subsets; ++subset) {
                pipeline.producerAcquire();
                memcpyAsync(group, shared[subset % 2], global0.asSlice(subset * bytes), bytes, pipeline);
                memcpyAsync(group, shared[subset % 2].asSlice(bytes), global1.asSlice(subset * bytes), bytes, pipeline);
                pipeline.producerCommit();
                pipeline.consumerWait();
                compute(ctx, shared[(subset - 1) % 2], group, out, subset - 1);
                pipeline.consumerRelease();
            }
            // Drain the pipeline.
            pipeline.consumerWait();
            compute(ctx, shared[(subsets - 1) % 2], group, out, subsets - 1);
            pipeline.consumerRelease();
        });
        return out;
    }

    private static void compute(KernelContext ctx, MemorySegment ptr, ThreadBlock group, MemorySegment out,
                                int subset) {
        int r = group.threadRank();
        int sum = ctx.loadInt(ptr, r) + ctx.loadInt(ptr, group.size() + r);
        out.setAtIndex(ValueLayout.JAVA_INT, (long) subset * group.size() + r, sum);
    }
}
