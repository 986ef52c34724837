package dev.jpipeline.examples;

import static dev.jpipeline.MemcpyAsync.memcpyAsync;

import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineRole;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.simt.Dim3;
import dev.jpipeline.simt.Kernel;
import dev.jpipeline.simt.KernelFailure;
import java.lang.foreign.MemorySegment;

/**
 * "Cuda Binary Partitions and Pipelines": even threads produce, odd threads consume, each thread copying two
 * floats. In the article's first version every thread runs both the producer and the consumer code, which
 * hangs on a GPU; jpipeline stops it with an error naming the rule. The corrected version guards each part
 * with the thread's role. {@code mistake = true} runs the first version and succeeds when the error is clear.
 */
public final class BinaryPartitions implements Example {

    static final int THREADS = 64;

    private final boolean mistake;

    /**
     * The article's first (unguarded) or corrected (guarded) version.
     *
     * @param mistake run the article's hanging version (true) or the corrected one (false)
     */
    public BinaryPartitions(boolean mistake) {
        this.mistake = mistake;
    }

    @Override
    public String name() {
        return mistake ? "binary partitions: unguarded roles (clear error)" : "binary partitions: guarded roles";
    }

    @Override
    public String source() {
        return "blog: Cuda Binary Partitions and Pipelines";
    }

    @Override
    public int threads() {
        return THREADS;
    }

    @Override
    public boolean run() {
        MemorySegment g = Floats.floats(2 * THREADS, i -> 10 + i);
        MemorySegment out = Floats.floats(2 * THREADS, i -> -1);
        try {
            Kernel.launch(Dim3.of(1), Dim3.of(THREADS), 4L * 2 * THREADS, ctx -> {
                var block = ctx.block();
                int t = block.threadRank();
                MemorySegment s = ctx.dynamicShared();
                PipelineSharedState state = ctx.shared("state", () -> PipelineSharedState.create(ThreadScope.BLOCK, 1));
                PipelineRole role = t % 2 == 0 ? PipelineRole.PRODUCER : PipelineRole.CONSUMER;
                Pipeline pipe = Pipeline.make(block, state, role);
                // the producer loads a pair of floats for itself and its odd neighbour
                if (mistake || role == PipelineRole.PRODUCER) {
                    pipe.producerAcquire();
                    memcpyAsync(Floats.slice(s, 2L * t, 4), Floats.slice(g, 2L * t, 4), 16, pipe);
                    pipe.producerCommit();
                }
                if (mistake || role == PipelineRole.CONSUMER) {
                    pipe.consumerWait();
                    Floats.set(out, 2L * t - 2, Floats.get(s, 2L * t - 2));     // the pair the neighbour loaded
                    Floats.set(out, 2L * t - 1, Floats.get(s, 2L * t - 1));
                    Floats.set(out, 2L * t, Floats.get(s, 2L * t));
                    Floats.set(out, 2L * t + 1, Floats.get(s, 2L * t + 1));
                    pipe.consumerRelease();
                }
                pipe.quit();
            });
        } catch (KernelFailure failure) {
            // whichever thread breaks the rule first is named: a consumer in producer code or the reverse
            return mistake && failure.getCause() instanceof IllegalStateException rule
                && rule.getMessage().matches("(producer|consumer)_\\w+ is a (producer|consumer) operation, but .*");
        }
        return !mistake && Floats.equal(out, 2 * THREADS, i -> 10 + i);
    }
}
