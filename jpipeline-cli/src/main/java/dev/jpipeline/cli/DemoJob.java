package dev.jpipeline.cli;

import dev.jpipeline.AlignedSize;
import dev.jpipeline.Group;
import dev.jpipeline.MemcpyAsync;
import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.ThreadTeam;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.Arrays;

/**
 * What {@code jpipeline demo} streams and what each of its threads does, whether they share one JVM
 * ({@link #run}) or the producers and the consumers run in two ({@link DemoProcesses}): the producers copy
 * each chunk of the built-in data into a stage with a cooperative {@code memcpyAsync} (each copies its part); the
 * consumers checksum their halves of the stage with {@link StreamChecksum}, which a direct pass over the data
 * must match.
 */
final class DemoJob {

    /** Producer threads. */
    static final int PRODUCERS = 2;
    /** Consumer threads. */
    static final int CONSUMERS = 2;
    /** Stages in flight. */
    static final int STAGES = 4;

    /** What a run computed: the consumers' checksum, and how long it took. */
    record Outcome(long checksum, long nanos) {
    }

    private DemoJob() {
    }

    /**
     * Streams {@code data} in chunks of {@code chunk} through a block-scope partitioned pipeline of this JVM's
     * threads, and returns the consumers' checksum and the time from the threads' start to their end.
     */
    static Outcome run(MemorySegment data, long chunk) {
        long[] partial = new long[CONSUMERS];
        long nanos;
        try (Arena arena = Arena.ofShared()) {
            MemorySegment[] stages = new MemorySegment[STAGES];
            for (int s = 0; s < STAGES; s++) {
                stages[s] = arena.allocate(chunk, 64);
            }
            PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, STAGES);
            ThreadTeam producerTeam = ThreadTeam.ofPlatform(PRODUCERS);
            long start = System.nanoTime();
            ThreadTeam.ofPlatform(PRODUCERS + CONSUMERS).run(Duration.ofMinutes(10), group -> {
                int rank = group.threadRank();
                try (Pipeline pipe = Pipeline.make(group, state, PRODUCERS)) {
                    if (rank < PRODUCERS) {
                        produce(pipe, producerTeam.member(rank), stages, data, chunk);
                    } else {
                        partial[rank - PRODUCERS] = consume(pipe, rank - PRODUCERS, stages,
                            data.byteSize() / chunk, chunk);
                    }
                }
            });
            nanos = System.nanoTime() - start;
        }
        return new Outcome(Arrays.stream(partial).sum(), nanos);  // the threads' writes happen-before run returns
    }

    /**
     * The built-in data set of {@code total} bytes (a multiple of 8), in {@code arena}.
     *
     * @throws StreamJob.TooLargeException when the JVM may not allocate that much
     */
    static MemorySegment data(Arena arena, long total) {
        MemorySegment data = StreamJob.allocate(arena, total, "--size (the data is generated in memory)");
        for (long i = 0; i < total / 8; i++) {
            data.setAtIndex(ValueLayout.JAVA_LONG, i, StreamChecksum.mix(i * 0x9E3779B97F4A7C15L));
        }
        return data;
    }

    /** The checksum of all of {@code data}, in one pass without a pipeline: what the consumers' sum must match. */
    static long direct(MemorySegment data) {
        return StreamChecksum.of(data, 0, data.byteSize() / 8);
    }

    /**
     * A producer's part: for each of the {@code data}'s chunks, acquires the next of {@code stages}, copies the
     * chunk in together with the other producers of {@code producers} (a group of this JVM's producer threads),
     * and commits.
     */
    static void produce(Pipeline pipe, Group producers, MemorySegment[] stages, MemorySegment data, long chunk) {
        long batches = data.byteSize() / chunk;
        for (long b = 0; b < batches; b++) {
            pipe.producerAcquire();
            MemcpyAsync.memcpyAsync(producers, stages[(int) (b % stages.length)], data.asSlice(b * chunk),
                AlignedSize.of(8, chunk), pipe);
            pipe.producerCommit();
        }
    }

    /** Consumer {@code consumer}'s part: the checksum of its half of each of {@code batches} stages of a chunk. */
    static long consume(Pipeline pipe, int consumer, MemorySegment[] stages, long batches, long chunk) {
        long half = chunk / CONSUMERS;
        long sum = 0;
        for (long b = 0; b < batches; b++) {
            pipe.consumerWait();
            sum += StreamChecksum.of(stages[(int) (b % stages.length)].asSlice(consumer * half, half),
                (b * chunk + consumer * half) / 8, half / 8);
            pipe.consumerRelease();
        }
        return sum;
    }
}
