package dev.jpipeline.cli;

import dev.jpipeline.AlignedSize;
import dev.jpipeline.Group;
import dev.jpipeline.MemcpyAsync;
import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.ThreadTeam;
import java.io.PrintWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLongArray;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code jpipeline demo}: streams a built-in data set through a block-scope partitioned pipeline (2 producers,
 * 2 consumers, 4 stages). The producers copy each chunk into a stage buffer with a cooperative
 * {@code memcpyAsync} (each copies half); the consumers checksum their halves of the stage. The result is
 * verified against a direct pass over the same data.
 *
 * <pre>
 *   source (off-heap, generated) --memcpyAsync--&gt; stage[b mod 4] --checksum--&gt; consumer totals
 *            producers 0,1 (halves)                               consumers 2,3 (halves)
 * </pre>
 */
@Command(name = "demo", mixinStandardHelpOptions = true, versionProvider = BuildVersion.class,
    description = "Stream built-in data through a 2-producer, 2-consumer, 4-stage pipeline and verify it.")
final class DemoCommand implements Callable<Integer> {

    private static final int PRODUCERS = 2;
    private static final int CONSUMERS = 2;
    private static final int STAGES = 4;

    @Spec
    private CommandSpec spec;

    @Option(names = "--size", defaultValue = "256m", converter = ByteSize.class, paramLabel = "SIZE",
        description = "Size of the built-in data set, a whole number of chunks (default ${DEFAULT-VALUE}).")
    private long total;

    @Option(names = "--chunk", defaultValue = "256k", converter = ByteSize.class, paramLabel = "SIZE",
        description = "Bytes per stage, a multiple of 16 (default ${DEFAULT-VALUE}).")
    private long chunk;

    @Override
    public Integer call() {
        if (chunk < 16 || chunk % 16 != 0 || chunk > Integer.MAX_VALUE) {
            throw new ParameterException(spec.commandLine(), "--chunk must be a multiple of 16 bytes below 2 GiB "
                + "(each consumer checksums half a stage in 8-byte words), got " + chunk);
        }
        if (total < chunk || total % chunk != 0) {
            throw new ParameterException(spec.commandLine(), "--size must be a whole number (at least 1) of --chunk "
                + "stages, got --size " + total + " and --chunk " + chunk);
        }
        PrintWriter out = spec.commandLine().getOut();
        int batches = (int) (total / chunk);
        try (Arena arena = Arena.ofShared()) {
            MemorySegment source;
            try {
                source = StreamJob.allocate(arena, total, "--size (the data is generated in memory)");
            } catch (StreamJob.TooLargeException e) {
                throw new ParameterException(spec.commandLine(), e.getMessage());
            }
            for (long i = 0; i < total / 8; i++) {
                source.setAtIndex(ValueLayout.JAVA_LONG, i, StreamChecksum.mix(i * 0x9E3779B97F4A7C15L));
            }
            MemorySegment[] stages = new MemorySegment[STAGES];
            for (int s = 0; s < STAGES; s++) {
                stages[s] = arena.allocate(chunk, 64);
            }
            long expected = StreamChecksum.of(source, 0, total / 8);

            PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, STAGES);
            ThreadTeam producerTeam = ThreadTeam.ofPlatform(PRODUCERS);
            AtomicLongArray partial = new AtomicLongArray(CONSUMERS);
            long start = System.nanoTime();
            ThreadTeam.ofPlatform(PRODUCERS + CONSUMERS).run(Duration.ofMinutes(10), group -> {
                int rank = group.threadRank();
                try (Pipeline pipe = Pipeline.make(group, state, PRODUCERS)) {
                    if (rank < PRODUCERS) {
                        Group producers = producerTeam.member(rank);
                        for (int b = 0; b < batches; b++) {
                            pipe.producerAcquire();
                            MemcpyAsync.memcpyAsync(producers, stages[b % STAGES], source.asSlice(b * chunk),
                                AlignedSize.of(8, chunk), pipe);
                            pipe.producerCommit();
                        }
                    } else {
                        int c = rank - PRODUCERS;
                        long half = chunk / CONSUMERS;
                        long sum = 0;
                        for (int b = 0; b < batches; b++) {
                            pipe.consumerWait();
                            sum += StreamChecksum.of(stages[b % STAGES].asSlice(c * half, half),
                                (b * chunk + c * half) / 8, half / 8);
                            pipe.consumerRelease();
                        }
                        partial.set(c, sum);
                    }
                }
            });
            double seconds = (System.nanoTime() - start) / 1e9;
            long actual = partial.get(0) + partial.get(1);
            boolean verified = actual == expected;
            out.printf("jpipeline demo: block-scope partitioned pipeline, %d producers + %d consumers, %d stages%n",
                PRODUCERS, CONSUMERS, STAGES);
            out.printf("  streamed %s as %d stages of %s through memcpyAsync%n", ByteSize.format(total), batches,
                ByteSize.format(chunk));
            out.printf("  checksum 0x%016x, direct pass 0x%016x: %s%n", actual, expected,
                verified ? "verified" : "MISMATCH");
            out.printf("  %.3f s, %.0f stages/s, %.2f GB/s%n", seconds, batches / seconds, total / seconds / 1e9);
            out.flush();
            return verified ? 0 : 1;
        }
    }
}
