package dev.jpipeline.bench;

import dev.jpipeline.CopyPolicy;
import dev.jpipeline.Group;
import dev.jpipeline.MemcpyAsync;
import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineRole;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.SharedRegion;
import dev.jpipeline.ThreadScope;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
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
 * Cross-process streaming: the 1 GiB source of {@link StreamingBenchmark} is copied in 1 MiB chunks into the
 * stages of a system-scope pipeline in a {@link SharedRegion} (under {@code /dev/shm}) by the benchmark thread
 * (the producer, rank 0: {@code producerAcquire}, {@code memcpyAsync} from the source chunk into the stage,
 * {@code producerCommit}), and a second JVM ({@link IpcPartner}, the consumer, rank 1) computes {@code op} over
 * every stage. An invocation ends when the partner has computed the last chunk; its sum of the invocation's chunks
 * must equal the source's checksum. Beside it, in the same run and the same JVM: {@code copyAlone}, the same
 * chunks copied by one thread with {@code MemorySegment.copy} into a region's stage buffers, and
 * {@code computeAlone}, the same compute over the source in one thread. Milliseconds per GiB.
 * Overlap efficiency = max(copy alone, compute alone) / the pipeline's time, as in {@link StreamingBenchmark}.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(value = 3, jvmArgsAppend = {"-Xmx2g", "--enable-native-access=ALL-UNNAMED"})
public class CrossProcessStreamingBenchmark {

    static final long CHUNK = StreamingBenchmark.CHUNK;
    static final int CHUNKS = StreamingBenchmark.CHUNKS;

    /** A region of {@code depth} 1 MiB stages after a pipeline state for a group of two. */
    static SharedRegion region(Path file, int depth) throws IOException {
        Files.deleteIfExists(file);
        return SharedRegion.create(file, PipelineSharedState.regionBytes(depth, 2) + depth * CHUNK,
            SharedRegion.Sharing.OWNER);
    }

    /** The stage buffers of such a region. */
    static MemorySegment[] stages(SharedRegion region, int depth) {
        MemorySegment[] stages = new MemorySegment[depth];
        long base = PipelineSharedState.regionBytes(depth, 2);
        for (int s = 0; s < depth; s++) {
            stages[s] = region.data().asSlice(base + s * CHUNK, CHUNK);
        }
        return stages;
    }

    /** A region's stage buffers with no pipeline, for {@code copyAlone}. */
    @State(Scope.Benchmark)
    public static class Stages {
        @Param({"4"})
        int depth;

        SharedRegion region;
        MemorySegment[] buffers;

        @Setup(Level.Trial)
        public void map() throws IOException {
            region = region(IpcCounts.directory().resolve("jpipeline-copy-" + ProcessHandle.current().pid()
                + ".region"), depth);
            buffers = stages(region, depth);
        }

        @TearDown(Level.Trial)
        public void unmap() throws IOException {
            region.close();
            Files.deleteIfExists(region.file());
        }
    }

    /** The pipeline: this thread produces; the partner process consumes. */
    @State(Scope.Benchmark)
    public static class Lane {
        @Param({"4"})
        int depth;

        /** Where the producer's copies run ({@link CopyPolicy}). */
        @Param({"AUTO"})
        String copyPolicy;

        IpcCounts counts;
        Process partner;
        SharedRegion region;
        MemorySegment[] stages;
        Pipeline pipe;
        long sent;
        long checkedSum;

        @Setup(Level.Trial)
        public void start(StreamingBenchmark.Source source) throws IOException {
            Path dir = IpcCounts.directory();
            counts = IpcCounts.create(dir);
            region = region(dir.resolve("jpipeline-stream-" + ProcessHandle.current().pid() + ".region"), depth);
            stages = stages(region, depth);
            partner = PartnerJvm.start(IpcPartner.class, "STREAM", counts.file.toString(), region.file().toString(),
                Integer.toString(depth), Long.toString(CHUNK), source.op.name());
            Group group = region.join(2, 0);
            PipelineSharedState state = PipelineSharedState.builder(ThreadScope.SYSTEM, depth).in(region, 0)
                .copyPolicy(CopyPolicy.valueOf(copyPolicy)).build();
            pipe = Pipeline.make(group, state, PipelineRole.PRODUCER);
        }

        @TearDown(Level.Trial)
        public void stop() throws IOException, InterruptedException {
            try {
                pipe.quit();
                boolean exited = PartnerJvm.stop(partner);
                if (!exited || counts.state() != IpcCounts.FINISHED || counts.consumed() != sent) {
                    throw new IllegalStateException("the partner " + (exited ? "exited" : "did not exit within 10 s")
                        + " in state " + counts.state() + " having computed " + counts.consumed() + " of " + sent
                        + " chunks");
                }
                counts.delete();
            } finally {
                region.close();
                Files.deleteIfExists(region.file());
            }
        }
    }

    @Benchmark
    public long copyAlone(StreamingBenchmark.Source source, Stages stages) {
        long touched = 0;
        MemorySegment[] b = stages.buffers;
        int depth = stages.depth;
        for (int c = 0; c < CHUNKS; c++) {
            MemorySegment dst = b[c % depth];
            MemorySegment.copy(source.chunk(c), 0, dst, 0, CHUNK);
            touched += dst.get(ValueLayout.JAVA_BYTE, c);
        }
        return touched;
    }

    @Benchmark
    public long computeAlone(StreamingBenchmark.Source source) {
        long result = 0;
        for (int c = 0; c < CHUNKS; c++) {
            result += source.op.apply(source.chunk(c));
        }
        return source.verify(result);
    }

    @Benchmark
    public long jpipeline(StreamingBenchmark.Source source, Lane lane) {
        Pipeline pipe = lane.pipe;
        MemorySegment[] stages = lane.stages;
        int depth = lane.depth;
        for (int c = 0; c < CHUNKS; c++) {
            pipe.producerAcquire();
            MemcpyAsync.memcpyAsync(stages[c % depth], source.chunk(c), CHUNK, pipe);
            pipe.producerCommit();
        }
        lane.sent += CHUNKS;
        lane.counts.awaitConsumed(lane.sent, lane.partner::isAlive);
        long sum = lane.counts.sum();
        long result = sum - lane.checkedSum;
        lane.checkedSum = sum;
        return source.verify(result);
    }
}
