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
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
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
 * Streaming copy + compute: a 1 GiB source is copied in 1 MiB chunks into stage buffers and each chunk is
 * computed on (a sum of its longs, or CRC32C). Reports, in one run, the copy alone, the compute alone, both one
 * after the other in one thread, two hand-written overlapping versions (a {@code CompletableFuture} prefetch and
 * an {@code ArrayBlockingQueue} double buffer), and jpipeline (a thread-scope pipeline whose copies run on the
 * copy engine, and a 1-producer/1-consumer partitioned pipeline), at depth 2, 4 and 8. Every variant returns the
 * stream's checksum, checked against the compute-alone figure so that no variant can skip work.
 * Overlap efficiency = max(copy alone, compute alone) / jpipeline's time.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(value = 5, jvmArgsAppend = "-Xmx2g")
public class StreamingBenchmark {

    static final long SOURCE_BYTES = 1L << 30;
    static final long CHUNK = 1L << 20;
    static final int CHUNKS = (int) (SOURCE_BYTES / CHUNK);

    /** The 1 GiB source and the expected checksum per compute kind. */
    @State(Scope.Benchmark)
    public static class Source {
        @Param({"SUM", "CRC32C"})
        ChunkCompute op;

        Arena arena;
        MemorySegment data;
        /** The chunks, sliced once, so that the benchmark loops themselves allocate nothing. */
        MemorySegment[] chunks;
        long expected;

        @Setup(Level.Trial)
        public void fill() {
            arena = Arena.ofShared();
            data = arena.allocate(SOURCE_BYTES, 64);
            for (long i = 0; i < SOURCE_BYTES / 8; i++) {
                data.setAtIndex(ValueLayout.JAVA_LONG, i, i * 0x9E3779B97F4A7C15L);
            }
            chunks = new MemorySegment[CHUNKS];
            for (int c = 0; c < CHUNKS; c++) {
                chunks[c] = data.asSlice(c * CHUNK, CHUNK);
            }
            for (int c = 0; c < CHUNKS; c++) {
                expected += op.apply(chunk(c));
            }
        }

        MemorySegment chunk(int c) {
            return chunks[c];
        }

        long verify(long result) {
            if (result != expected) {
                throw new IllegalStateException("stream checksum " + result + ", expected " + expected);
            }
            return result;
        }

        @TearDown(Level.Trial)
        public void free() {
            arena.close();
        }
    }

    /** Stage buffers for the pipelined variants. */
    @State(Scope.Benchmark)
    public static class Stages {
        @Param({"2", "4", "8"})
        int depth;

        Arena arena;
        MemorySegment[] buffers;

        @Setup(Level.Trial)
        public void allocate() {
            arena = Arena.ofShared();
            buffers = new MemorySegment[depth];
            for (int s = 0; s < depth; s++) {
                buffers[s] = arena.allocate(CHUNK, 64);
            }
        }

        @TearDown(Level.Trial)
        public void free() {
            arena.close();
        }
    }

    /** Two buffers and a helper thread for the hand-written double-buffer versions. */
    @State(Scope.Benchmark)
    public static class DoubleBuffer {
        Arena arena;
        MemorySegment[] buffers;
        ExecutorService copier;

        @Setup(Level.Trial)
        public void allocate() {
            arena = Arena.ofShared();
            buffers = new MemorySegment[] {arena.allocate(CHUNK, 64), arena.allocate(CHUNK, 64)};
            copier = Executors.newSingleThreadExecutor(r -> Thread.ofPlatform().daemon().unstarted(r));
        }

        @TearDown(Level.Trial)
        public void free() {
            copier.shutdownNow();
            arena.close();
        }
    }

    @Benchmark
    public long copyAlone(Source source, DoubleBuffer buffers) {
        long touched = 0;
        for (int c = 0; c < CHUNKS; c++) {
            MemorySegment dst = buffers.buffers[c & 1];
            MemorySegment.copy(source.chunk(c), 0, dst, 0, CHUNK);
            touched += dst.get(ValueLayout.JAVA_BYTE, c);
        }
        return touched;
    }

    @Benchmark
    public long computeAlone(Source source) {
        long result = 0;
        for (int c = 0; c < CHUNKS; c++) {
            result += source.op.apply(source.chunk(c));
        }
        return source.verify(result);
    }

    @Benchmark
    public long sequential(Source source, DoubleBuffer buffers) {
        long result = 0;
        MemorySegment buffer = buffers.buffers[0];
        for (int c = 0; c < CHUNKS; c++) {
            MemorySegment.copy(source.chunk(c), 0, buffer, 0, CHUNK);
            result += source.op.apply(buffer);
        }
        return source.verify(result);
    }

    /** The next chunk is copied by a helper thread (a CompletableFuture) while this one is computed. */
    @Benchmark
    public long completableFuturePrefetch(Source source, DoubleBuffer buffers) {
        long result = 0;
        MemorySegment[] b = buffers.buffers;
        MemorySegment.copy(source.chunk(0), 0, b[0], 0, CHUNK);
        for (int c = 0; c < CHUNKS; c++) {
            int next = c + 1;
            CompletableFuture<Void> prefetch = next < CHUNKS
                ? CompletableFuture.runAsync(() -> MemorySegment.copy(source.chunk(next), 0, b[next & 1], 0, CHUNK),
                    buffers.copier)
                : null;
            result += source.op.apply(b[c & 1]);
            if (prefetch != null) {
                prefetch.join();
            }
        }
        return source.verify(result);
    }

    /** A copier thread fills free buffers and hands them over through ArrayBlockingQueues. */
    @Benchmark
    public long blockingQueueDoubleBuffer(Source source, DoubleBuffer buffers) throws InterruptedException {
        ArrayBlockingQueue<MemorySegment> free = new ArrayBlockingQueue<>(2);
        ArrayBlockingQueue<MemorySegment> full = new ArrayBlockingQueue<>(2);
        free.add(buffers.buffers[0]);
        free.add(buffers.buffers[1]);
        buffers.copier.execute(() -> {
            try {
                for (int c = 0; c < CHUNKS; c++) {
                    MemorySegment buffer = free.take();
                    MemorySegment.copy(source.chunk(c), 0, buffer, 0, CHUNK);
                    full.put(buffer);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        long result = 0;
        for (int c = 0; c < CHUNKS; c++) {
            MemorySegment buffer = full.take();
            result += source.op.apply(buffer);
            free.put(buffer);
        }
        return source.verify(result);
    }

    /**
     * jpipeline, thread scope (the CUDA documentation's pattern): this thread primes {@code depth} stages, then
     * for each chunk waits for the oldest, computes on it, releases it and refills its stage. The copies run on
     * the shared copy engine while the thread computes.
     */
    @Benchmark
    public long jpipelineThreadScope(Source source, Stages stages) {
        Pipeline pipe = Pipeline.make();
        MemorySegment[] b = stages.buffers;
        int depth = stages.depth;
        int fetched = 0;
        for (; fetched < Math.min(depth, CHUNKS); fetched++) {
            pipe.producerAcquire();
            MemcpyAsync.memcpyAsync(b[fetched % depth], source.chunk(fetched), CHUNK, pipe);
            pipe.producerCommit();
        }
        long result = 0;
        for (int c = 0; c < CHUNKS; c++) {
            pipe.consumerWait();
            result += source.op.apply(b[c % depth]);
            pipe.consumerRelease();
            if (fetched < CHUNKS) {
                pipe.producerAcquire();
                MemcpyAsync.memcpyAsync(b[fetched % depth], source.chunk(fetched), CHUNK, pipe);
                pipe.producerCommit();
                fetched++;
            }
        }
        pipe.quit();
        return source.verify(result);
    }

    /**
     * Where the partitioned producer's copies run ({@link CopyPolicy} by name), and how its threads wait (a
     * built-in {@link dev.jpipeline.WaitStrategy} by name; ADAPTIVE, the default, unless asked).
     */
    @State(Scope.Benchmark)
    public static class Policy {
        @Param({"AUTO", "ON_ISSUING_THREAD", "ON_COPY_ENGINE"})
        String copyPolicy;

        @Param({"ADAPTIVE"})
        String strategy;
    }

    /**
     * jpipeline, partitioned: a producer thread acquires stages and issues the copies (on the copy engine or on
     * itself, as the copy policy says); this thread is the consumer and computes.
     */
    @Benchmark
    public long jpipelinePartitioned(Source source, Stages stages, Policy policy) {
        PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, stages.depth)
            .copyPolicy(CopyPolicy.valueOf(policy.copyPolicy)).waitStrategy(HandoffBenchmark.named(policy.strategy))
            .build();
        ThreadTeam team = ThreadTeam.ofPlatform(2);
        AtomicReference<Throwable> producerFailure = new AtomicReference<>();
        Thread producer = Thread.ofPlatform().start(() -> {
            try (Pipeline pipe = Pipeline.make(team.member(0), state, 1)) {
                for (int c = 0; c < CHUNKS; c++) {
                    pipe.producerAcquire();
                    MemcpyAsync.memcpyAsync(stages.buffers[c % stages.depth], source.chunk(c), CHUNK, pipe);
                    pipe.producerCommit();
                }
            } catch (Throwable t) {
                producerFailure.set(t);
            }
        });
        long result = 0;
        try (Pipeline pipe = Pipeline.make(team.member(1), state, 1)) {
            for (int c = 0; c < CHUNKS; c++) {
                pipe.consumerWait();
                result += source.op.apply(stages.buffers[c % stages.depth]);
                pipe.consumerRelease();
            }
        }
        try {
            producer.join(Duration.ofSeconds(30));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (producerFailure.get() != null) {
            throw new IllegalStateException("producer failed", producerFailure.get());
        }
        return source.verify(result);
    }
}
