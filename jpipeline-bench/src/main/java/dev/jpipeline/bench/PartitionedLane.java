package dev.jpipeline.bench;

import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.ThreadTeam;
import dev.jpipeline.WaitStrategy;

/**
 * A hand-off lane through a jpipeline partitioned pipeline of one producer and one consumer: a block-scope shared
 * state of {@code depth} stages, each stage carrying one item in a {@code long[]} slot. The public API only.
 */
final class PartitionedLane extends HandoffLane {

    private final int depth;
    private final long[] slots;
    private final PipelineSharedState state;
    private final ThreadTeam team = ThreadTeam.ofPlatform(2);
    private final Thread consumer;
    private Pipeline producer;

    PartitionedLane(int depth, WaitStrategy strategy, String name) {
        this.depth = depth;
        this.slots = new long[depth];
        this.state = PipelineSharedState.builder(ThreadScope.BLOCK, depth).waitStrategy(strategy).build();
        this.consumer = Thread.ofPlatform().daemon().name(name).start(this::consume);
    }

    private void consume() {
        try (Pipeline pipe = Pipeline.make(team.member(1), state, 1)) {
            for (int stage = 0; ; stage = stage + 1 == depth ? 0 : stage + 1) {
                pipe.consumerWait();
                items.accept(slots[stage]);
                pipe.consumerRelease();
            }
        } catch (IllegalStateException noProducerLeft) {
            // the producer quit: the lane is closed
        } catch (Throwable t) {
            items.fail(t);
        }
    }

    @Override
    void open() {
        producer = Pipeline.make(team.member(0), state, 1);
    }

    @Override
    void produce(long first) {
        Pipeline pipe = producer;
        long[] slots = this.slots;
        int depth = this.depth;
        for (int i = 0, stage = (int) (first % depth); i < ITEMS; i++, stage = stage + 1 == depth ? 0 : stage + 1) {
            pipe.producerAcquire();
            slots[stage] = (first + i) & CheckedItems.MASK;
            pipe.producerCommit();
        }
    }

    @Override
    void close() throws InterruptedException {
        producer.quit();
        join(consumer);
    }
}
