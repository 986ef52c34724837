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

    private final int threads;
    private final boolean mistake;
    /** The planted mistake, or null for the documentation's code. */
    private final Fault fault;

    /**
     * The article's first (unguarded) or corrected (guarded) version, with 64 threads.
     *
     * @param mistake run the article's hanging version (true) or the corrected one (false)
     */
    public BinaryPartitions(boolean mistake) {
        this(64, mistake, null);
    }

    private BinaryPartitions(int threads, boolean mistake, Fault fault) {
        this.threads = threads;
        this.mistake = mistake;
        this.fault = fault;
    }

    /** The corrected version with 16 threads, with {@code fault} planted (or none: null). */
    static BinaryPartitions small(Fault fault) {
        return new BinaryPartitions(16, false, fault);
    }

    /** The same version with 16 threads. */
    @Override
    public Example forChecking() {
        return new BinaryPartitions(16, mistake, null);
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
        return threads;
    }

    @Override
    public boolean run() {
        MemorySegment g = Floats.floats(2 * threads, i -> 10 + i);
        MemorySegment out = Floats.floats(2 * threads, i -> -1);
        if (!mistake) {
            launch(g, out);
            return Floats.equal(out, 2 * threads, i -> 10 + i);
        }
        try {
            launch(g, out);
        } catch (KernelFailure failure) {
            // whichever thread breaks the rule first is named: a consumer in producer code or the reverse
            return failure.getCause() instanceof IllegalStateException rule
                && rule.getMessage().matches("(producer|consumer)_\\w+ is a (producer|consumer) operation, but .*");
        }
        return false;
    }

    private void launch(MemorySegment g, MemorySegment out) {
        // the article's first version runs both parts in every thread; so does the faulty variant (BUG), whose
        // run() does not expect the failure
        boolean unguarded = mistake || fault == Fault.UNGUARDED_ROLES;
        Kernel.launch(Dim3.of(1), Dim3.of(threads), 4L * 2 * threads, ctx -> {
            var block = ctx.block();
            int t = block.threadRank();
            MemorySegment s = ctx.dynamicShared();
            PipelineSharedState state = ctx.shared("state", () -> PipelineSharedState.create(ThreadScope.BLOCK, 1));
            PipelineRole role = t % 2 == 0 ? PipelineRole.PRODUCER : PipelineRole.CONSUMER;
            Pipeline pipe = Pipeline.make(block, state, role);
            // the producer loads a pair of floats for itself and its odd neighbour
            if (unguarded || role == PipelineRole.PRODUCER) {
                pipe.producerAcquire();
                memcpyAsync(Floats.slice(s, 2L * t, 4), Floats.slice(g, 2L * t, 4), 16, pipe);
                pipe.producerCommit();
                if (fault == Fault.CLEAR_AFTER_COMMIT) {
                    for (int k = 0; k < 4; k++) {
                        ctx.storeFloat(out, 2L * t + k, 0);     // BUG: may overwrite what the consumer wrote
                    }
                }
            }
            if (unguarded || role == PipelineRole.CONSUMER) {
                pipe.consumerWait();
                ctx.storeFloat(out, 2L * t - 2, ctx.loadFloat(s, 2L * t - 2));     // the pair the neighbour loaded
                ctx.storeFloat(out, 2L * t - 1, ctx.loadFloat(s, 2L * t - 1));
                ctx.storeFloat(out, 2L * t, ctx.loadFloat(s, 2L * t));
                ctx.storeFloat(out, 2L * t + 1, ctx.loadFloat(s, 2L * t + 1));
                pipe.consumerRelease();
            }
            pipe.quit();
        });
    }
}
