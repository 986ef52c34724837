package dev.jpipeline.examples;

import static dev.jpipeline.MemcpyAsync.memcpyAsync;

import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.simt.Dim3;
import dev.jpipeline.simt.Kernel;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * CUDA Programming Guide 4.10.5, early exit: in a unified pipeline the last quarter of the block leaves after
 * four batches with {@code quit()}; "the remaining participating threads can proceed normally". (With libcu++
 * they would hang: its quit keeps the leaver's arrivals expected.) Exactly one thread's quit returns true.
 */
public final class EarlyExit implements Example {

    static final int THREADS = 128;
    static final int BATCHES = 16;

    /** The example at its built-in size: {@value #THREADS} threads, {@value #BATCHES} batches. */
    public EarlyExit() {
    }

    @Override
    public String name() {
        return "4.10.5 early exit with quit()";
    }

    @Override
    public String source() {
        return "CUDA Programming Guide 4.10.5";
    }

    @Override
    public int threads() {
        return THREADS;
    }

    @Override
    public boolean run() {
        MemorySegment in = Floats.floats(THREADS * BATCHES, i -> i);
        MemorySegment out = Floats.floats(THREADS * BATCHES, i -> -1);
        AtomicInteger lastOwners = new AtomicInteger();
        Kernel.launch(Dim3.of(1), Dim3.of(THREADS), 4L * 2 * THREADS, ctx -> {
            var block = ctx.block();
            int t = block.threadRank();
            MemorySegment smem = ctx.dynamicShared();
            PipelineSharedState state = ctx.shared("state", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
            Pipeline pipe = Pipeline.make(block, state);
            int myBatches = t >= THREADS * 3 / 4 ? 4 : BATCHES;
            for (int b = 0; b < myBatches; b++) {
                pipe.producerAcquire();
                memcpyAsync(Floats.slice(smem, (long) (b % 2) * THREADS + t, 1),
                    Floats.slice(in, (long) b * THREADS + t, 1), 4, pipe);
                pipe.producerCommit();
                pipe.consumerWait();
                Floats.set(out, (long) b * THREADS + t, Floats.get(smem, (long) (b % 2) * THREADS + t) + 1);
                pipe.consumerRelease();
            }
            if (pipe.quit()) {                  // the leavers quit early; the others when they are done
                lastOwners.incrementAndGet();
            }
        });
        for (int b = 0; b < BATCHES; b++) {
            for (int t = 0; t < THREADS; t++) {
                float expected = b < 4 || t < THREADS * 3 / 4 ? b * THREADS + t + 1 : -1;
                if (Floats.get(out, (long) b * THREADS + t) != expected) {
                    return false;
                }
            }
        }
        return lastOwners.get() == 1;
    }
}
