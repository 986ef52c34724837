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
import java.util.concurrent.locks.LockSupport;

/**
 * Timed waits ({@code consumer_wait_for}, {@code consumer_wait_until}): one slow producer thread, which pauses
 * before each of its 8 batches, and the block's other threads as consumers that poll with a 1 ms limit (doing
 * other work between polls) and finish with a deadline.
 */
public final class TimedWaits implements Example {

    static final int BATCHES = 8;

    private final int threads;
    private final Duration producerDelay;

    /** The example at its built-in size: 32 threads, the producer pausing 2 ms before each batch. */
    public TimedWaits() {
        this(32, Duration.ofMillis(2));
    }

    /**
     * A sized instance.
     *
     * @param threads threads in the block, at least 2: one producer, the others consumers
     * @param producerDelay how long the producer pauses before each batch; zero or more
     * @throws IllegalArgumentException when {@code threads < 2} or the delay is negative
     */
    public TimedWaits(int threads, Duration producerDelay) {
        if (threads < 2 || producerDelay.isNegative()) {
            throw new IllegalArgumentException("timed waits need at least 2 threads and a delay of 0 or more, got "
                + threads + " threads and " + producerDelay);
        }
        this.threads = threads;
        this.producerDelay = producerDelay;
    }

    /**
     * 8 threads and no pause: checked execution's timed waits run on a virtual clock, which moves only when every
     * thread waits, so a pause would cost real time and change nothing.
     */
    @Override
    public Example forChecking() {
        return new TimedWaits(8, Duration.ZERO);
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
        return threads;
    }

    @Override
    public boolean run() {
        return Floats.equal(launch(), BATCHES * threads, i -> i % threads == 0 ? -1 : 100 + i / threads);
    }

    /**
     * {@code out[b * threads + t]}: what consumer t read of batch b (-2 when its wait timed out; -1 for thread 0,
     * the producer).
     */
    @Override
    public int[] output() {
        return Floats.bits(launch(), BATCHES * threads);
    }

    private MemorySegment launch() {
        MemorySegment in = Floats.floats(BATCHES, i -> 100 + i);
        MemorySegment out = Floats.floats(BATCHES * threads, i -> -1);
        long delay = producerDelay.toNanos();
        Kernel.launch(Dim3.of(1), Dim3.of(threads), 4L * 2, ctx -> {
            var block = ctx.block();
            MemorySegment smem = ctx.dynamicShared();
            PipelineSharedState state = ctx.shared("state", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
            Pipeline pipe = Pipeline.make(block, state, 1);
            for (int b = 0; b < BATCHES; b++) {
                if (block.threadRank() == 0) {
                    LockSupport.parkNanos(delay);               // a slow producer
                    pipe.producerAcquire();
                    memcpyAsync(Floats.slice(smem, b % 2, 1), Floats.slice(in, b, 1), 4, pipe);
                    pipe.producerCommit();
                } else {
                    boolean ready = b == BATCHES - 1
                        ? pipe.consumerWaitUntil(Instant.now().plusSeconds(30))
                        : pollUntilReady(pipe);
                    Floats.set(out, (long) b * threads + block.threadRank(), ready ? ctx.loadFloat(smem, b % 2) : -2);
                    pipe.consumerRelease();
                }
            }
            pipe.quit();
        });
        return out;
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
