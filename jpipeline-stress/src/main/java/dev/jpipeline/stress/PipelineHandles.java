package dev.jpipeline.stress;

import dev.jpipeline.Group;
import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;

/**
 * A one-producer, one-consumer block-scope pipeline whose two handles are made up front by one thread (the
 * jcstress state constructor) and then used by two actor threads. Making both handles from one thread is
 * legal here because the group's {@code sync()} has nothing to wait for once rank 0 has made its handle.
 */
final class PipelineHandles {

    final Pipeline producer;
    final Pipeline consumer;

    PipelineHandles(int stages) {
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, stages);
        producer = Pipeline.make(rank(0), state, 1);
        consumer = Pipeline.make(rank(1), state, 1);
    }

    private static Group rank(int rank) {
        return new Group() {
            @Override
            public int size() {
                return 2;
            }

            @Override
            public int threadRank() {
                return rank;
            }

            @Override
            public void sync() {
            }
        };
    }
}
