package dev.jpipeline.examples;

import static dev.jpipeline.MemcpyAsync.memcpyAsync;

import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.simt.Dim3;
import dev.jpipeline.simt.Kernel;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

/**
 * Timed waits ({@code consumer_wait_for}, {@code consumer_wait_until}): one slow producer thread, 31 consumers
 * that poll with a 1 ms limit (doing other work between polls) and finish with a deadline.
 */
public final class TimedWaits implements Example {

    static final int THREADS = 32;
    static final int BATCHES = 8;

    /** The example at its built-in size: {@value #THREADS} threads, {@value #BATCHES} batches. */
    public TimedWaits() {
    }

    @Override
    public String name() {
        return "timed waits (wait_for / wait_until)";
    }

    @Override
    public String source() {
        return "libcu++ consumer_wait_for / consumer_wait_until";
    }

    @Override
    public int threads() {
        return THREADS;
    }

    @Override
    public boolean run() {
        MemorySegment in = Floats.floats(BATCHES, i -> 100 + i);
        AtomicBoolean ok = new AtomicBoolean(true);
        Kernel.launch(Dim3.of(1), Dim3.of(THREADS), 4L * 2, ctx -> {
            var block = ctx.block();
            MemorySegment smem = ctx.dynamicShared();
            PipelineSharedState state = ctx.shared("state", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
            Pipeline pipe = Pipeline.make(block, state, 1);
            for (int b = 0; b < BATCHES; b++) {
                if (block.threadRank() == 0) {
                    LockSupport.parkNanos(2_000_000);         // a slow producer
                    pipe.producerAcquire();
                    memcpyAsync(Floats.slice(smem, b % 2, 1), Floats.slice(in, b, 1), 4, pipe);
                    pipe.producerCommit();
                } else {
                    boolean ready = b == BATCHES - 1
                        ? pipe.consumerWaitUntil(Instant.now().plusSeconds(30))
                        : pollUntilReady(pipe);
                    if (!ready || Floats.get(smem, b % 2) != 100 + b) {
                        ok.set(false);
                    }
                    pipe.consumerRelease();
                }
            }
            pipe.quit();
        });
        return ok.get();
    }

    private static boolean pollUntilReady(Pipeline pipe) {
        for (int polls = 0; polls < 30_000; polls++) {
            if (pipe.consumerWaitFor(Duration.ofMillis(1))) {
                return true;
            }
            Thread.onSpinWait();                                // "other work" between polls
        }
        return false;
    }
}
