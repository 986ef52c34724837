package dev.jpipeline.examples;

import dev.jpipeline.Group;
import dev.jpipeline.MemcpyAsync;
import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.simt.Dim3;
import dev.jpipeline.simt.Kernel;
import dev.jpipeline.simt.KernelContext;
import java.lang.foreign.MemorySegment;

/**
 * CUDA Programming Guide 4.10.7, the producer-consumer pattern: a partitioned block-scope pipeline with two
 * stages, half of each block producing (a cooperative {@code memcpyAsync} of a batch into a stage buffer) and
 * half consuming ({@code out = 2 * in + 1}). The guide elides the bodies of {@code produce} and
 * {@code consume}; each block here streams its own slice of {@code in}.
 */
public final class ProducerConsumer implements Example {

    private final int n;
    private final int blocks;
    private final int blockSize;
    private final int bufferLen;
    /** The planted mistake, or null for the documentation's code. */
    private final Fault fault;

    /** The example's default size: 1 Mi floats, 4 blocks of 256 threads, batches of 1024 floats. */
    public ProducerConsumer() {
        this(1 << 20, 4, 256, 1024);
    }

    /**
     * A sized instance: each block streams {@code n / blocks} floats, which must be a multiple of
     * {@code bufferLen}.
     *
     * @param n floats in the input and the output
     * @param blocks blocks in the grid
     * @param blockSize threads per block, half of them producers
     * @param bufferLen floats per batch (one stage buffer)
     */
    public ProducerConsumer(int n, int blocks, int blockSize, int bufferLen) {
        this(n, blocks, blockSize, bufferLen, null);
    }

    private ProducerConsumer(int n, int blocks, int blockSize, int bufferLen, Fault fault) {
        this.n = n;
        this.blocks = blocks;
        this.blockSize = blockSize;
        this.bufferLen = bufferLen;
        this.fault = fault;
    }

    /** 2 blocks of 16 threads, 4 batches of 32 floats each, with {@code fault} planted (or none: null). */
    static ProducerConsumer small(Fault fault) {
        return new ProducerConsumer(256, 2, 16, 32, fault);
    }

    /**
     * 256 floats, 2 blocks of 16 threads, batches of 32 floats: each block streams 4 batches through the 2
     * stages.
     */
    @Override
    public Example forChecking() {
        return small(null);
    }

    @Override
    public String name() {
        return "4.10.7 producer-consumer (" + n + " floats)";
    }

    @Override
    public String source() {
        return "CUDA Programming Guide 4.10.7";
    }

    @Override
    public int threads() {
        return blocks * blockSize;
    }

    @Override
    public boolean run() {
        return Floats.equal(launch(), n, i -> 2f * (i % 1000 - 500) + 1);
    }

    /** {@code out}: {@code 2 * in + 1} for every element. */
    @Override
    public int[] output() {
        return Floats.bits(launch(), n);
    }

    private MemorySegment launch() {
        MemorySegment in = Floats.floats(n, i -> i % 1000 - 500);
        MemorySegment out = Floats.floats(n, i -> 0);
        int perBlock = n / blocks;
        Kernel.launch(Dim3.of(blocks), Dim3.of(blockSize), 2L * bufferLen * 4, ctx -> producerConsumerPattern(ctx,
            Floats.slice(in, (long) ctx.blockIdx().x() * perBlock, perBlock),
            Floats.slice(out, (long) ctx.blockIdx().x() * perBlock, perBlock), perBlock, bufferLen));
        return out;
    }

    private static void produce(Pipeline pipe, Group producers, int numStages, int stage, int numBatches, int batch,
                                MemorySegment buffer, int bufferLen, MemorySegment in) {
        if (batch < numBatches) {
            pipe.producerAcquire();
            // copy data from in(batch) to buffer(stage), shared by the producers
            MemcpyAsync.memcpyAsync(producers, Floats.slice(buffer, (long) stage * bufferLen, bufferLen),
                Floats.slice(in, (long) batch * bufferLen, bufferLen), 4L * bufferLen, pipe);
            pipe.producerCommit();
        }
    }

    private void consume(KernelContext ctx, Pipeline pipe, int consumer, int consumers, int stage, int batch,
                         MemorySegment buffer, int bufferLen, MemorySegment out) {
        if (fault != Fault.READ_BEFORE_WAIT) {
            pipe.consumerWait();
        }
        // consume buffer(stage) and update out(batch)
        for (int i = consumer; i < bufferLen; i += consumers) {
            Floats.set(out, (long) batch * bufferLen + i, 2 * ctx.loadFloat(buffer, (long) stage * bufferLen + i) + 1);
        }
        if (fault == Fault.READ_BEFORE_WAIT) {
            pipe.consumerWait();        // BUG: too late, the loop above has read the stage already
        }
        pipe.consumerRelease();
    }

    private void producerConsumerPattern(KernelContext ctx, MemorySegment in, MemorySegment out, int n,
                                         int bufferLen) {
        var block = ctx.block();
        MemorySegment buffer = ctx.dynamicShared();             // 2 * buffer_len floats
        int numBatches = n / bufferLen;
        int numStages = 2;
        int producerCount = block.size() / 2;
        PipelineSharedState sharedState = ctx.shared("shared_state",
            () -> PipelineSharedState.create(ThreadScope.BLOCK, numStages));
        Pipeline pipe = Pipeline.make(block, sharedState, producerCount);
        boolean producer = block.threadRank() < producerCount;
        Group producers = producer ? ctx.tiledPartition(producerCount) : null;   // ranks 0 .. producerCount-1
        int consumer = block.threadRank() - producerCount;
        // Fill the pipeline
        if (producer) {
            for (int s = 0; s < numStages; ++s) {
                produce(pipe, producers, numStages, s, numBatches, s, buffer, bufferLen, in);
            }
        }
        // Process the batches
        int stage = 0;
        for (int b = 0; b < numBatches; ++b) {
            if (producer) {
                // Prefetch the next batch
                produce(pipe, producers, numStages, stage, numBatches, b + numStages, buffer, bufferLen, in);
            } else {
                // Consume the oldest batch
                consume(ctx, pipe, consumer, block.size() - producerCount, stage, b, buffer, bufferLen, out);
            }
            stage = (stage + 1) % numStages;
        }
        pipe.quit();
    }
}
