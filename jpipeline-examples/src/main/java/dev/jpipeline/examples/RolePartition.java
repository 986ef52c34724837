package dev.jpipeline.examples;

import static dev.jpipeline.MemcpyAsync.memcpyAsync;

import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineRole;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.simt.Dim3;
import dev.jpipeline.simt.Kernel;
import java.lang.foreign.MemorySegment;

/**
 * The role-partitioned pattern of the pipeline notes ("a pipeline is a proxy onto the shared state"): the
 * block's first quarter (its first warp of four) produces, each producer copying its share of the batch into
 * the stage's shared buffer; the other threads consume; {@code make} derives the counts from the roles.
 */
public final class RolePartition implements Example {

    static final int STAGES = 2;

    private final int threads;
    private final int batchLen;
    private final int batches;
    /** The planted mistake, or null for the documentation's code. */
    private final Fault fault;

    /** The example at its built-in size: 128 threads (32 producers), 64 batches of 512 floats. */
    public RolePartition() {
        this(128, 512, 64, null);
    }

    private RolePartition(int threads, int batchLen, int batches, Fault fault) {
        this.threads = threads;
        this.batchLen = batchLen;
        this.batches = batches;
        this.fault = fault;
    }

    /** 16 threads (4 producers), 4 batches of 32 floats, with {@code fault} planted (or none: null). */
    static RolePartition small(Fault fault) {
        return new RolePartition(16, 32, 4, fault);
    }

    /** 16 threads (4 producers), 4 batches of 32 floats. */
    @Override
    public Example forChecking() {
        return small(null);
    }

    @Override
    public String name() {
        return "role-partitioned pipeline (notes)";
    }

    @Override
    public String source() {
        return "notes: cuda::pipeline as a proxy pattern";
    }

    @Override
    public int threads() {
        return threads;
    }

    @Override
    public boolean run() {
        return Floats.equal(launch(), batchLen * batches, i -> 3.0 * i);
    }

    /** {@code globalOut}: {@code 3 * globalIn} for every element. */
    @Override
    public int[] output() {
        return Floats.bits(launch(), batchLen * batches);
    }

    private MemorySegment launch() {
        int producers = threads / 4;
        MemorySegment globalIn = Floats.floats(batchLen * batches, i -> i);
        MemorySegment globalOut = Floats.floats(batchLen * batches, i -> 0);
        Kernel.launch(Dim3.of(1), Dim3.of(threads), 4L * batchLen * STAGES, ctx -> {
            var block = ctx.block();
            int t = block.threadRank();
            MemorySegment shared = ctx.dynamicShared();
            PipelineSharedState state = ctx.shared("state", () -> PipelineSharedState.create(ThreadScope.BLOCK,
                STAGES));
            PipelineRole threadRole = t < producers ? PipelineRole.PRODUCER : PipelineRole.CONSUMER;
            Pipeline pipeline = Pipeline.make(block, state, threadRole);
            for (int batch = 0; batch < batches; batch++) {
                int sharedIdx = batch % STAGES;
                if (threadRole == PipelineRole.PRODUCER) {
                    // Only the producer threads schedule asynchronous copies: each its share of the batch
                    pipeline.producerAcquire();
                    int share = batchLen / producers;
                    memcpyAsync(Floats.slice(shared, (long) sharedIdx * batchLen + t * share, share),
                        Floats.slice(globalIn, (long) batch * batchLen + t * share, share), 4L * share, pipeline);
                    pipeline.producerCommit();
                } else {
                    // Only the consumer threads compute
                    pipeline.consumerWait();
                    if (fault == Fault.READ_AFTER_RELEASE) {
                        pipeline.consumerRelease();             // BUG: the producers may refill the stage now
                    }
                    for (int i = t - producers; i < batchLen; i += threads - producers) {
                        Floats.set(globalOut, (long) batch * batchLen + i,
                            ctx.loadFloat(shared, (long) sharedIdx * batchLen + i) * 3);
                    }
                    if (fault != Fault.READ_AFTER_RELEASE) {
                        pipeline.consumerRelease();
                    }
                }
            }
            pipeline.quit();
        });
        return globalOut;
    }
}
