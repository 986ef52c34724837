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
 * block's first warp produces (each producer copies its share of the batch into the stage's shared buffer),
 * the other three warps consume; {@code make} derives the counts from the roles.
 */
public final class RolePartition implements Example {

    static final int THREADS = 128;
    static final int PRODUCERS = 32;
    static final int BATCH = 512;
    static final int BATCHES = 64;
    static final int STAGES = 2;

    /**
     * The example at its built-in size: {@value #THREADS} threads, {@value #BATCHES} batches of {@value #BATCH}
     * floats.
     */
    public RolePartition() {
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
        return THREADS;
    }

    @Override
    public boolean run() {
        MemorySegment globalIn = Floats.floats(BATCH * BATCHES, i -> i);
        MemorySegment globalOut = Floats.floats(BATCH * BATCHES, i -> 0);
        Kernel.launch(Dim3.of(1), Dim3.of(THREADS), 4L * BATCH * STAGES, ctx -> {
            var block = ctx.block();
            int t = block.threadRank();
            MemorySegment shared = ctx.dynamicShared();
            PipelineSharedState state = ctx.shared("state", () -> PipelineSharedState.create(ThreadScope.BLOCK, STAGES));
            PipelineRole threadRole = t < PRODUCERS ? PipelineRole.PRODUCER : PipelineRole.CONSUMER;
            Pipeline pipeline = Pipeline.make(block, state, threadRole);
            for (int batch = 0; batch < BATCHES; batch++) {
                int sharedIdx = batch % STAGES;
                if (threadRole == PipelineRole.PRODUCER) {
                    // Only the producer threads schedule asynchronous copies: each its share of the batch
                    pipeline.producerAcquire();
                    int share = BATCH / PRODUCERS;
                    memcpyAsync(Floats.slice(shared, (long) sharedIdx * BATCH + t * share, share),
                        Floats.slice(globalIn, (long) batch * BATCH + t * share, share), 4L * share, pipeline);
                    pipeline.producerCommit();
                } else {
                    // Only the consumer threads compute
                    pipeline.consumerWait();
                    for (int i = t - PRODUCERS; i < BATCH; i += THREADS - PRODUCERS) {
                        Floats.set(globalOut, (long) batch * BATCH + i,
                            Floats.get(shared, (long) sharedIdx * BATCH + i) * 3);
                    }
                    pipeline.consumerRelease();
                }
            }
            pipeline.quit();
        });
        return Floats.equal(globalOut, BATCH * BATCHES, i -> 3.0 * i);
    }
}
