package dev.jpipeline.bench;

import dev.jpipeline.MemcpyAsync;
import dev.jpipeline.Pipeline;
import dev.jpipeline.prefetch.Chunks;
import dev.jpipeline.prefetch.Prefetch;
import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousFileChannel;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
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
 * Reading a file while computing on it (issue 14): one pass over a test file, chunk by chunk, computing
 * {@link ChunkCompute} (a sum of longs, CRC32C or SHA-256) on every chunk, written the ways a Java user would
 * write it. Each form returns the sum of its chunks' results, checked against the result computed once at set-up
 * from the generated content (not from the file), so that a form that skips, repeats or misplaces a chunk fails
 * the trial. The score is milliseconds per pass over the file; GB/s = {@code sizeMiB} * 1.048576 / (ms per pass).
 *
 * <p>The file is written once per trial and then only read: it stays in the page cache (nothing drops it), so
 * "I/O" here is the kernel's copy from the page cache into the user's buffer, not a disk read. That copy is
 * about as fast as the sum, much slower than CRC32C and much faster than SHA-256, which gives the three regimes
 * (comparable, I/O-bound, compute-bound).
 *
 * <p>The forms, each used the way its own users would:
 * <ul>
 *   <li>{@link #sequential}: one thread reads a chunk into a direct buffer with {@code FileChannel.read}, computes
 *       on it, and repeats: no overlap, the baseline.</li>
 *   <li>{@link #completableFuture}: double buffering: the next chunk is read by {@code supplyAsync} on a dedicated
 *       single-thread executor (not the common pool, which a 2-core machine sizes to one thread shared with
 *       everything else) into the other buffer while this thread computes on the current one.</li>
 *   <li>{@link #asyncFileChannel}: {@code AsynchronousFileChannel} with {@code stages} reads outstanding (the
 *       {@code Future} form, on the channel's default thread pool), computed in file order, each buffer read
 *       into again as soon as it is computed on.</li>
 *   <li>{@link #mapped}: the file mapped into a confined {@code Arena} ({@code FileChannel.map}) and computed on
 *       chunk by chunk; the mapping, its page faults and its unmapping are part of the pass, as they are for a
 *       program that reads a file once.</li>
 *   <li>{@link #handWritten}: the hand-written jpipeline code, CUDA's thread-scope pattern: {@code Pipeline.make()},
 *       {@code stages} stage buffers kept filled by {@code producerAcquire}, {@code memcpyAsync} from the file
 *       channel (a positional read on the shared copy engine) and {@code producerCommit}; then, in order,
 *       {@code consumerWait}, compute, {@code consumerRelease}.</li>
 *   <li>{@link #prefetch}: the prefetching front of issue 14, the loop its users write:
 *       {@code Prefetch.from(channel).chunk(..).stages(..).open()} and a for-each over the chunks; its stage buffers
 *       either its own, allocated by every {@code open()} ({@code buffers = PER_OPEN}, the default a user gets),
 *       or the trial's, reused through {@code buffers(SegmentAllocator)} ({@code REUSED}, the same memory as the
 *       hand-written form's).</li>
 *   <li>{@link #prefetchParallel}: the front's parallel form, one producer and {@code consumers} threads:
 *       {@code Prefetch.from(channel).chunk(..).stages(..).parallel(1, consumers).reduce(0L, compute, Long::sum)}.</li>
 * </ul>
 * Buffers are allocated once per trial from a shared arena, page-aligned (as the front's own), {@code chunkMiB}
 * each.
 *
 * <p>The front's chunks are views made with {@code MemorySegment.reinterpret}, a restricted method: forks run with
 * {@code --enable-native-access=ALL-UNNAMED}, as the jar's manifest grants, so that no warning lands in a run.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 3, jvmArgsAppend = {"-Xmx1g", "--enable-native-access=ALL-UNNAMED"})
public class PrefetchBenchmark {

    private static final long MIB = 1L << 20;
    private static final long BUFFER_ALIGNMENT = 4096;

    /** The test file, read-only after set-up, with two chunk buffers and the expected result of a pass. */
    @State(Scope.Benchmark)
    public static class TestFile {
        /** The file's size in MiB, a multiple of {@code chunkMiB}. */
        @Param("256")
        int sizeMiB;

        /** The chunk (and stage buffer) size in MiB. */
        @Param({"1", "4"})
        int chunkMiB;

        /** The computation on each chunk. */
        @Param({"SUM", "CRC32C", "SHA256"})
        ChunkCompute compute;

        /** Where the file is written; empty: {@code java.io.tmpdir}. */
        @Param("")
        String dir;

        Path path;
        FileChannel channel;
        long size;
        long chunk;
        int chunks;
        long expected;
        Arena arena;
        /** Two chunk buffers (the sequential form uses the first), and their direct {@code ByteBuffer} views. */
        MemorySegment[] pair;
        ByteBuffer[] pairViews;

        /**
         * Writes the file (long {@code i} of the file is {@code i * 0x9E3779B97F4A7C15}), flushed to disk so that no
         * write-back runs during the measurement, and computes the expected result from the generated chunks. The
         * tear-down deletes the file, and the fork's exit does if a failed trial skipped the tear-down.
         */
        @Setup(Level.Trial)
        public void write() throws IOException {
            size = sizeMiB * MIB;
            chunk = chunkMiB * MIB;
            if (size % chunk != 0) {
                throw new IllegalArgumentException("sizeMiB " + sizeMiB + " is not a multiple of chunkMiB " + chunkMiB);
            }
            chunks = (int) (size / chunk);
            arena = Arena.ofShared();
            pair = slices(arena.allocate(2 * chunk, BUFFER_ALIGNMENT), 2, chunk);
            pairViews = views(pair);
            path = Files.createTempFile(dir.isEmpty() ? Path.of(System.getProperty("java.io.tmpdir")) : Path.of(dir),
                "jpipeline-prefetch-", ".bin");
            path.toFile().deleteOnExit();                   // a failed trial skips the tear-down
            MemorySegment generated = pair[0];
            try (FileChannel out = FileChannel.open(path, StandardOpenOption.WRITE)) {
                for (int c = 0; c < chunks; c++) {
                    long first = c * chunk / 8;
                    for (long i = 0; i < chunk / 8; i++) {
                        generated.setAtIndex(ValueLayout.JAVA_LONG, i, (first + i) * 0x9E3779B97F4A7C15L);
                    }
                    expected += compute.apply(generated);
                    ByteBuffer bytes = pairViews[0].clear();
                    while (bytes.hasRemaining()) {
                        out.write(bytes);
                    }
                }
                out.force(true);
            }
            channel = FileChannel.open(path, StandardOpenOption.READ);
        }

        /**
         * Reads chunk {@code c} into buffer {@code b} of the pair with positional {@code FileChannel.read}s.
         *
         * @throws UncheckedIOException when the read fails or the file ends first
         */
        MemorySegment read(int c, int b) {
            ByteBuffer view = pairViews[b].clear();
            try {
                while (view.hasRemaining()) {
                    if (channel.read(view, c * chunk + view.position()) < 0) {
                        throw new EOFException(path + " ended before chunk " + c + " was read");
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return pair[b];
        }

        long verify(long result) {
            if (result != expected) {
                throw new IllegalStateException(compute + " of " + path + " is " + result + ", expected " + expected);
            }
            return result;
        }

        /** Closes the channel, deletes the file and frees the pair. */
        @TearDown(Level.Trial)
        public void delete() throws IOException {
            channel.close();
            Files.delete(path);
            arena.close();
        }
    }

    /** The stage buffers of the forms that keep several reads in flight. */
    @State(Scope.Benchmark)
    public static class Stages {
        /** How many chunks are read ahead of the one computed on (the number of buffers). */
        @Param({"2", "4"})
        int stages;

        Arena arena;
        /** The buffers, one after the other. */
        MemorySegment pool;
        MemorySegment[] buffers;
        ByteBuffer[] views;

        /** Allocates {@code stages} buffers of the file's chunk size. */
        @Setup(Level.Trial)
        public void allocate(TestFile file) {
            arena = Arena.ofShared();
            pool = arena.allocate(stages * file.chunk, BUFFER_ALIGNMENT);
            buffers = slices(pool, stages, file.chunk);
            views = views(buffers);
        }

        /** Frees the buffers. */
        @TearDown(Level.Trial)
        public void free() {
            arena.close();
        }
    }

    /** The completable-future form's reader thread. */
    @State(Scope.Benchmark)
    public static class Reader {
        ExecutorService executor;

        /** Starts the reader thread. */
        @Setup(Level.Trial)
        public void start() {
            executor = Executors.newSingleThreadExecutor(r -> Thread.ofPlatform().daemon().name("reader").unstarted(r));
        }

        /** Stops the reader thread. */
        @TearDown(Level.Trial)
        public void stop() {
            executor.shutdownNow();
        }
    }

    /** The test file opened as an {@code AsynchronousFileChannel}, on the default thread pool. */
    @State(Scope.Benchmark)
    public static class AsyncChannel {
        AsynchronousFileChannel channel;

        /** Opens the file. */
        @Setup(Level.Trial)
        public void open(TestFile file) throws IOException {
            channel = AsynchronousFileChannel.open(file.path, StandardOpenOption.READ);
        }

        /** Closes the channel. */
        @TearDown(Level.Trial)
        public void close() throws IOException {
            channel.close();
        }
    }

    /** Read, compute, repeat, on one thread: the baseline. */
    @Benchmark
    public long sequential(TestFile file) {
        long result = 0;
        for (int c = 0; c < file.chunks; c++) {
            result += file.compute.apply(file.read(c, 0));
        }
        return file.verify(result);
    }

    /** Double buffering: chunk c + 1 is read on the reader thread while this thread computes on chunk c. */
    @Benchmark
    public long completableFuture(TestFile file, Reader reader) {
        long result = 0;
        CompletableFuture<MemorySegment> next = CompletableFuture.supplyAsync(() -> file.read(0, 0), reader.executor);
        for (int c = 0; c < file.chunks; c++) {
            MemorySegment current = next.join();
            int following = c + 1;
            if (following < file.chunks) {
                next = CompletableFuture.supplyAsync(() -> file.read(following, following & 1), reader.executor);
            }
            result += file.compute.apply(current);
        }
        return file.verify(result);
    }

    /** {@code stages} reads outstanding on an {@code AsynchronousFileChannel}, awaited and computed in order. */
    @Benchmark
    public long asyncFileChannel(TestFile file, Stages stages, AsyncChannel async)
        throws IOException, ExecutionException, InterruptedException {
        ArrayDeque<Future<Integer>> reads = new ArrayDeque<>(stages.stages);
        long result = 0;
        int issued = 0;
        for (int c = 0; c < file.chunks; c++) {
            for (; issued < Math.min(c + stages.stages, file.chunks); issued++) {
                reads.add(async.channel.read(stages.views[issued % stages.stages].clear(), issued * file.chunk));
            }
            ByteBuffer view = stages.views[c % stages.stages];
            reads.remove().get();
            while (view.hasRemaining()) {           // a short read: read the rest
                if (async.channel.read(view, c * file.chunk + view.position()).get() < 0) {
                    throw new EOFException(file.path + " ended before chunk " + c + " was read");
                }
            }
            result += file.compute.apply(stages.buffers[c % stages.stages]);
        }
        return file.verify(result);
    }

    /** One pass over a fresh mapping of the file. */
    @Benchmark
    public long mapped(TestFile file) throws IOException {
        long result = 0;
        try (Arena mapping = Arena.ofConfined()) {
            MemorySegment map = file.channel.map(FileChannel.MapMode.READ_ONLY, 0, file.size, mapping);
            for (int c = 0; c < file.chunks; c++) {
                result += file.compute.apply(map.asSlice(c * file.chunk, file.chunk));
            }
        }
        return file.verify(result);
    }

    /** A thread-scope pipeline keeping {@code stages} reads ahead of the chunk computed on. */
    @Benchmark
    public long handWritten(TestFile file, Stages stages) {
        long result = 0;
        try (Pipeline pipe = Pipeline.make()) {
            int issued = 0;
            for (int c = 0; c < file.chunks; c++) {
                for (; issued < Math.min(c + stages.stages, file.chunks); issued++) {
                    pipe.producerAcquire();
                    MemcpyAsync.memcpyAsync(stages.buffers[issued % stages.stages], file.channel, issued * file.chunk,
                        file.chunk, pipe);
                    pipe.producerCommit();
                }
                pipe.consumerWait();
                result += file.compute.apply(stages.buffers[c % stages.stages]);
                pipe.consumerRelease();
            }
        }
        return file.verify(result);
    }

    /** Where the prefetching front's stage buffers come from. */
    @State(Scope.Benchmark)
    public static class FrontBuffers {
        /** {@code PER_OPEN}: the front's own, allocated by every {@code open()}; {@code REUSED}: the trial's. */
        @Param({"PER_OPEN", "REUSED"})
        String buffers;
    }

    /** The number of consumer threads of the front's parallel form. */
    @State(Scope.Benchmark)
    public static class Consumers {
        /** Threads that compute; one more thread reads. */
        @Param({"1", "2", "4"})
        int consumers;
    }

    /** The prefetching front's for-each loop over the file's chunks. */
    @Benchmark
    public long prefetch(TestFile file, Stages stages, FrontBuffers front) {
        Prefetch prefetch = Prefetch.from(file.channel).chunk(file.chunk).stages(stages.stages);
        if (front.buffers.equals("REUSED")) {
            prefetch.buffers(SegmentAllocator.slicingAllocator(stages.pool));
        }
        long result = 0;
        try (Chunks chunks = prefetch.open()) {
            for (MemorySegment chunk : chunks) {
                result += file.compute.apply(chunk);
            }
        }
        return file.verify(result);
    }

    /** The prefetching front's parallel form: one reader, {@code consumers} threads computing, summed in order. */
    @Benchmark
    public long prefetchParallel(TestFile file, Stages stages, Consumers consumers) {
        long result = Prefetch.from(file.channel).chunk(file.chunk).stages(stages.stages)
            .parallel(1, consumers.consumers).reduce(0L, file.compute::apply, Long::sum);
        return file.verify(result);
    }

    /** {@code pool} cut into {@code count} buffers of {@code bytes} bytes. */
    static MemorySegment[] slices(MemorySegment pool, int count, long bytes) {
        MemorySegment[] buffers = new MemorySegment[count];
        for (int b = 0; b < count; b++) {
            buffers[b] = pool.asSlice(b * bytes, bytes);
        }
        return buffers;
    }

    /** The direct {@code ByteBuffer} views of {@code buffers}. */
    static ByteBuffer[] views(MemorySegment[] buffers) {
        ByteBuffer[] views = new ByteBuffer[buffers.length];
        for (int b = 0; b < buffers.length; b++) {
            views[b] = buffers[b].asByteBuffer();
        }
        return views;
    }
}
