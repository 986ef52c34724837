package dev.jpipeline.stress;

import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.ThreadTeam;
import dev.jpipeline.WaitStrategy;

/**
 * A block-scope pipeline of two threads for two jcstress actors: partitioned (rank 0 produces, rank 1 consumes)
 * or unified, whichever the test makes. A handle belongs to the thread that
 * made it and {@code make} is collective, so each actor makes its own handle at the start of its method: the two
 * makes meet in the group's {@code sync()} (a two-thread {@link ThreadTeam}), which also lines the actors up
 * before the race. jcstress builds the state on another thread, and runs both actors of one state concurrently
 * (its sanity check too), so the makes always find each other.
 */
final class PipelineHandles {

    private final PipelineSharedState state;
    private final ThreadTeam team = ThreadTeam.ofPlatform(2);

    PipelineHandles(int stages) {
        this(stages, WaitStrategy.ADAPTIVE);
    }

    PipelineHandles(int stages, WaitStrategy strategy) {
        state = PipelineSharedState.builder(ThreadScope.BLOCK, stages).waitStrategy(strategy).build();
    }

    /** Rank 0's handle, the producer: call from the producing actor. */
    Pipeline makeProducer() {
        return Pipeline.make(team.member(0), state, 1);
    }

    /** Rank 1's handle, the consumer: call from the consuming actor. */
    Pipeline makeConsumer() {
        return Pipeline.make(team.member(1), state, 1);
    }

    /** Rank {@code rank}'s handle on a unified pipeline (both ranks make it unified). */
    Pipeline makeUnified(int rank) {
        return Pipeline.make(team.member(rank), state);
    }
}
