package dev.jpipeline.bench;

import dev.jpipeline.CopyPolicy;
import dev.jpipeline.MemcpyAsync;
import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.ThreadTeam;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Streaming with teams: a 1 GiB source streamed through a partitioned pipeline of {@code team} producers and
 * {@code team} consumers ({@code max(4, 2 x team)} stages of {@code chunkMiB} MiB). Each producer copies its
 * share of every chunk with {@code memcpyAsync}; each consumer sums the longs of its share (every consumer sees
 * every batch, and the consumers split it by rank, as the CLI's {@code stream} does). Beside it, in the same run,
 * {@code copyBandwidth}: {@code team} threads copy the source in parallel slices into the same buffers, no
 * pipeline and no compute, the machine's copy bandwidth at that thread count. Milliseconds per 1 GiB.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(value = 3, jvmArgsAppend = "-Xmx2g")
@State(Scope.Benchmark)
public class StreamingTeamBenchmark {

    static final long SOURCE_BYTES = 1L << 30;

    @Param({"1", "2", "4", "8"})
    int team;

    @Param({"1", "4"})
    int chunkMiB;

    @Param({"AUTO", "ON_COPY_ENGINE"})
    String copyPolicy;

    Arena arena;
    MemorySegment source;
    MemorySegment[] stages;
    long expected;
    long chunk;
    int batches;

    @Setup(Level.Trial)
    public void fill() {
        arena = Arena.ofShared();
        source = arena.allocate(SOURCE_BYTES, 64);
        for (long i = 0; i < SOURCE_BYTES / 8; i++) {
            long v = i * 0x9E3779B97F4A7C15L;
            source.setAtIndex(ValueLayout.JAVA_LONG, i, v);
            expected += v;
        }
        chunk = (long) chunkMiB << 20;
        batches = (int) (SOURCE_BYTES / chunk);
        stages = new MemorySegment[Math.max(4, 2 * team)];
        for (int s = 0; s < stages.length; s++) {
            stages[s] = arena.allocate(chunk, 64);
        }
    }

    @TearDown(Level.Trial)
    public void free() {
        arena.close();
    }

    /** {offset, length} of part {@code index} of a chunk cut in {@code parts} (8-byte aligned). */
    private long[] share(int parts, int index) {
        long base = chunk / 8 / parts * 8;
        long from = index * base;
        return new long[] {from, index == parts - 1 ? chunk - from : base};
    }

    @Benchmark
    public long stream() {
        PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, stages.length)
            .copyPolicy(CopyPolicy.valueOf(copyPolicy)).build();
        AtomicLongArray sums = new AtomicLongArray(team * 16);           // one padded slot per consumer
        ThreadTeam.ofPlatform(2 * team).run(Duration.ofMinutes(1), g -> {
            int rank = g.threadRank();
            try (Pipeline pipe = Pipeline.make(g, state, team)) {
                if (rank < team) {
                    long[] share = share(team, rank);
                    for (int b = 0; b < batches; b++) {
                        pipe.producerAcquire();
                        MemorySegment dst = stages[b % stages.length].asSlice(share[0], share[1]);
                        MemcpyAsync.memcpyAsync(dst, source.asSlice(b * chunk + share[0], share[1]), share[1], pipe);
                        pipe.producerCommit();
                    }
                } else {
                    long[] share = share(team, rank - team);
                    long sum = 0;
                    for (int b = 0; b < batches; b++) {
                        pipe.consumerWait();
                        sum += ChunkCompute.SUM.apply(stages[b % stages.length].asSlice(share[0], share[1]));
                        pipe.consumerRelease();
                    }
                    sums.set((rank - team) * 16, sum);
                }
            }
        });
        long total = 0;
        for (int c = 0; c < team; c++) {
            total += sums.get(c * 16);
        }
        if (total != expected) {
            throw new IllegalStateException("stream sum " + total + ", expected " + expected);
        }
        return total;
    }

    @Benchmark
    public long copyBandwidth() {
        ThreadTeam.ofPlatform(team).run(Duration.ofMinutes(1), g -> {
            long[] share = share(team, g.threadRank());
            for (int b = 0; b < batches; b++) {
                MemorySegment.copy(source, b * chunk + share[0], stages[b % stages.length], share[0], share[1]);
            }
        });
        return stages[0].get(ValueLayout.JAVA_LONG, 0);
    }
}
