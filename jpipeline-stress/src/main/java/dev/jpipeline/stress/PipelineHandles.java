package dev.jpipeline.stress;

import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.ThreadTeam;

/**
 * A one-producer, one-consumer block-scope pipeline for a jcstress state: each actor makes its own handle on its
 * own thread (a handle belongs to the thread that made it), through a real two-thread group, so the make is
 * collective as in production; the races the tests look at come after it.
 */
final class PipelineHandles {

    private final PipelineSharedState state;
    private final ThreadTeam team = ThreadTeam.ofPlatform(2);

    PipelineHandles(int stages) {
        state = PipelineSharedState.builder(ThreadScope.BLOCK, stages).detectDeadlocks(java.time.Duration.ZERO)
            .build();
    }

    /** The producer's handle, made by the calling actor (rank 0). */
    Pipeline producer() {
        return Pipeline.make(team.member(0), state, 1);
    }

    /** The consumer's handle, made by the calling actor (rank 1). */
    Pipeline consumer() {
        return Pipeline.make(team.member(1), state, 1);
    }
}
