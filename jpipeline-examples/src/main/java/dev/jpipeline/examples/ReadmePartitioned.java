package dev.jpipeline.examples;

import dev.jpipeline.MemcpyAsync;
import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.ThreadTeam;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.Arrays;

/** Two threads produce, two consume, four stages in flight: the consumers sum 100 batches of 1024 longs. */
final class ReadmePartitioned {

    static final int STAGES = 4, PRODUCERS = 2, CONSUMERS = 2, BATCHES = 100, BATCH = 1024;   // BATCH longs

    /**
     * Prints the sum the pipeline computed and the expected one.
     *
     * @param args not used
     */
    public static void main(String[] args) {
        long n = (long) BATCHES * BATCH;
        System.out.println("sum " + run() + ", expected " + n * (n - 1) / 2);
    }

    /**
     * Streams the longs 0, 1, 2, ... through the pipeline.
     *
     * @return their sum, as the consumers computed it
     */
    public static long run() {
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, STAGES);
        MemorySegment[] stage = new MemorySegment[STAGES];                          // one buffer per stage
        for (int s = 0; s < STAGES; s++) stage[s] = MemorySegment.ofArray(new long[BATCH]);
        long[] data = new long[BATCHES * BATCH];
        Arrays.setAll(data, i -> i);
        MemorySegment input = MemorySegment.ofArray(data);
        long[] sums = new long[CONSUMERS];                                          // one per consumer

        ThreadTeam.ofPlatform(PRODUCERS + CONSUMERS).run(Duration.ofMinutes(1), group -> {
            int rank = group.threadRank();
            try (Pipeline pipe = Pipeline.make(group, state, PRODUCERS)) {  // we pick ranks 0 and 1 to produce
                for (int b = 0; b < BATCHES; b++) {
                    if (rank < PRODUCERS) {                                 // producer
                        pipe.producerAcquire();                             // waits until stage b % 4 is free
                        long share = 8L * BATCH / PRODUCERS;                // each producer copies half the batch
                        MemcpyAsync.memcpyAsync(stage[b % STAGES].asSlice(rank * share),
                                input.asSlice(8L * BATCH * b + rank * share), share, pipe);
                        pipe.producerCommit();
                    } else {                                                // consumer: sees every batch
                        pipe.consumerWait();                                // both producers have committed
                        sums[rank - PRODUCERS] += process(stage[b % STAGES], rank - PRODUCERS);
                        pipe.consumerRelease();                             // stage b % 4 may be refilled
                    }
                }
            }                                                               // close() = quit()
        });
        return Arrays.stream(sums).sum();
    }

    /**
     * The consumers' computation. Every consumer sees every batch, so each takes its own share: the longs
     * {@code consumer}, {@code consumer + CONSUMERS}, ... of the batch.
     *
     * @param batch the stage buffer holding one batch
     * @param consumer the consumer's index among the consumers (its rank minus the producers)
     * @return the sum of this consumer's share of the batch
     */
    static long process(MemorySegment batch, int consumer) {
        long sum = 0;
        for (int i = consumer; i < BATCH; i += CONSUMERS) sum += batch.getAtIndex(ValueLayout.JAVA_LONG, i);
        return sum;
    }
}
