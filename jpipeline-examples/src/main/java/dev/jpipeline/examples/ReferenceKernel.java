package dev.jpipeline.examples;

import static dev.jpipeline.MemcpyAsync.memcpyAsync;

import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.simt.Dim3;
import dev.jpipeline.simt.Kernel;
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

    static final int GROUP = 128;
    static final int SUBSETS = 64;

    /** The example at its built-in size: a group of {@value #GROUP} threads, {@value #SUBSETS} subsets. */
    public ReferenceKernel() {
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
        return GROUP;
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
        int total = GROUP * SUBSETS;
        MemorySegment global0 = ints(total, i -> i);
        MemorySegment global1 = ints(total, i -> 7 * i);
        MemorySegment out = ints(total, i -> 0);
        Kernel.launch(Dim3.of(1), Dim3.of(GROUP), 4L * 4 * GROUP, ctx -> {
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
            for (int subset = 1; subset < SUBSETS; ++subset) {
                pipeline.producerAcquire();
                memcpyAsync(group, shared[subset % 2], global0.asSlice(subset * bytes), bytes, pipeline);
                memcpyAsync(group, shared[subset % 2].asSlice(bytes), global1.asSlice(subset * bytes), bytes, pipeline);
                pipeline.producerCommit();
                pipeline.consumerWait();
                compute(shared[(subset - 1) % 2], group, out, subset - 1);
                pipeline.consumerRelease();
            }
            // Drain the pipeline.
            pipeline.consumerWait();
            compute(shared[(SUBSETS - 1) % 2], group, out, SUBSETS - 1);
            pipeline.consumerRelease();
        });
        for (int i = 0; i < total; i++) {
            if (out.getAtIndex(ValueLayout.JAVA_INT, i) != 8 * i) {
                return false;
            }
        }
        return true;
    }

    private static void compute(MemorySegment ptr, ThreadBlock group, MemorySegment out, int subset) {
        int r = group.threadRank();
        int sum = ptr.getAtIndex(ValueLayout.JAVA_INT, r) + ptr.getAtIndex(ValueLayout.JAVA_INT, group.size() + r);
        out.setAtIndex(ValueLayout.JAVA_INT, (long) subset * group.size() + r, sum);
    }
}
