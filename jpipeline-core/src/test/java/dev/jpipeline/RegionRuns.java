package dev.jpipeline;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Test support: system-scope pipelines in a shared region whose ranks run on threads of this JVM, each running
 * {@link RegionPipelineChild#run} (stages of 4096 bytes; rank 0 produces, the others consume).
 */
final class RegionRuns {

    /** The bytes of each stage of the runs here. */
    static final int STAGE_BYTES = 4096;

    private RegionRuns() {
    }

    /** A system-scope state of {@code stages} stages at offset 0 of {@code region}. */
    static PipelineSharedState state(SharedRegion region, int stages) {
        return PipelineSharedState.builder(ThreadScope.SYSTEM, stages).in(region, 0).build();
    }

    /** Runs {@code group}'s rank of a RegionPipelineChild run on a thread of its own: what it returned. */
    static CompletableFuture<String> rank(SharedRegion region, Group group, int stages, long batches) {
        CompletableFuture<String> result = new CompletableFuture<>();
        Thread.ofPlatform().name("rank-" + group.threadRank()).start(() -> {
            try {
                result.complete(RegionPipelineChild.run(region, group,
                    RegionPipelineChild.roleOf(group.size(), group.threadRank()), stages, STAGE_BYTES, batches, false,
                    () -> { }));
            } catch (Throwable e) {
                result.completeExceptionally(e);
            }
        });
        return result;
    }

    /** Both ranks of a 1-producer, 1-consumer run on threads of this JVM: what each returned. */
    static List<String> runHere(SharedRegion region, int stages, long batches) throws Exception {
        CompletableFuture<String> producer = rank(region, region.join(2, 0), stages, batches);
        CompletableFuture<String> consumer = rank(region, region.join(2, 1), stages, batches);
        return List.of(producer.get(20, TimeUnit.SECONDS), consumer.get(20, TimeUnit.SECONDS));
    }

    /** What the two ranks of a run of {@code batches} return when every batch went through. */
    static List<String> ran(long batches) {
        return List.of("produced " + batches, "ok " + batches + " " + RegionPipelineChild.expectedSum(STAGE_BYTES,
            batches));
    }
}
