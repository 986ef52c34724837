package dev.jpipeline.bench;

import dev.jpipeline.MemcpyAsync;
import dev.jpipeline.Pipeline;
import dev.jpipeline.prefetch.Crc32cPart;
import dev.jpipeline.prefetch.Prefetch;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;
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
 * Reading a file on a busy machine (issue 25): one pass over a page-cached test file, chunk by chunk, computing a
 * sum of longs ({@code SUM}) or the file's CRC-32C ({@code CRC32C}), in the plain loop a user writes without
 * jpipeline and in the forms jpipeline offers, each written the way the README writes it. Meant to run under
 * load: {@code jpipeline-bench/load.sh} pins the JMH JVM to 2 cores and starts 0, 1, 2 or 4 CPU hogs on the
 * same cores, and {@code jpipeline-bench/load-ratios.py} prints plainLoop time / form time (above 1: jpipeline
 * is faster). The score is milliseconds per pass over the file; GB/s = {@code sizeMiB} * 1.048576 / (ms per pass).
 *
 * <p>Every pass returns its result, the sum (modulo 2^64) of the file's 8-byte words or the CRC-32C of the whole
 * file, and the pass checks it against the result computed once per trial from the generated content (not from
 * the file): a form that skips, repeats or misplaces a chunk throws, and the trial fails. The file is written once
 * per trial ({@code sizeMiB}, 256 by default, in {@code dir}, {@code java.io.tmpdir} by default), flushed, only
 * read afterwards, and deleted at the trial's end; nothing drops it from the page cache, so "I/O" is the kernel's
 * copy from the page cache into the user's buffer.
 *
 * <p>The forms:
 * <ul>
 *   <li>{@link #plainLoop}: what a user writes without jpipeline: {@code FileChannel.open} of the file per pass,
 *       one direct {@code ByteBuffer} of the chunk size, allocated once per trial as a program keeps it, a
 *       {@code read} loop filling it, and the computation on each chunk. The baseline of the ratios.</li>
 *   <li>{@link #forEach}: the README's form exactly as written, a new {@code Prefetch} per pass:
 *       {@code try (var chunks = Prefetch.from(path).chunk(chunk).stages(4).open()) { for (MemorySegment c :
 *       chunks) ... }}, so its stage buffers are whatever the front gives an {@code open()} (its pool, since
 *       fb0e0ec).</li>
 *   <li>{@link #threadScope}: the hand-written thread-scope pipeline: {@code Pipeline.make()}, 4 stage buffers
 *       (allocated once per trial from a shared arena, page-aligned), {@code producerAcquire},
 *       {@code MemcpyAsync.memcpyAsync(stage, channel, position, bytes, pipe)} and {@code producerCommit} up to 4
 *       chunks ahead; then, in order, {@code consumerWait}, compute, {@code consumerRelease}. The file is opened
 *       per pass, as in the plain loop.</li>
 *   <li>{@link #parallel}: the front's parallel form, one producer and two consumers over 8 stages:
 *       {@code Prefetch.from(path).chunk(chunk).stages(8).parallel(1, 2).reduce(...)}, with
 *       {@code Crc32cPart} for the CRC-32C (as the README's {@code parallelCrc32c}) and a {@code Long} sum for
 *       {@code SUM}.</li>
 * </ul>
 * The CLI's streaming path ({@code jpipeline stream FILE --op sum|crc32c}) is not a form here: the CLI module
 * exports no package, and its {@code StreamJob} is package-private, so {@code load.sh} times it as a command
 * instead, over a file {@link LoadTool} writes with the same content.
 *
 * <p>The computation is the same in every form: {@link ChunkCompute#SUM} on each chunk for {@code SUM}; for
 * {@code CRC32C}, one {@code java.util.zip.CRC32C} updated with each chunk in file order (the README's
 * {@code crc32c}), and in the parallel form each chunk's {@code Crc32cPart} combined in order. (ChunkCompute's own
 * {@code CRC32C} adds up per-chunk CRCs, which is not the file's CRC-32C that the README and the CLI compute.)
 *
 * <p>The front's chunks are views made with {@code MemorySegment.reinterpret}, a restricted method: forks run with
 * {@code --enable-native-access=ALL-UNNAMED}, so that no warning lands in a run.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 4, time = 1)
@Fork(value = 3, jvmArgsAppend = {"-Xmx1g", "--enable-native-access=ALL-UNNAMED"})
public class LoadBenchmark {

    static final long MIB = 1L << 20;
    private static final long BUFFER_ALIGNMENT = 4096;
    /** Stage buffers of the for-each and thread-scope forms (the README's {@code stages(4)}). */
    static final int STAGES = 4;
    /** Stages of the parallel form (the README's {@code parallelCrc32c}). */
    static final int PARALLEL_STAGES = 8;
    /** Producers and consumers of the parallel form. */
    static final int PARALLEL_PRODUCERS = 1, PARALLEL_CONSUMERS = 2;
    /** Long {@code i} of a test file is {@code i * GOLDEN}. */
    private static final long GOLDEN = 0x9E3779B97F4A7C15L;

    /** What a pass computes. */
    public enum Compute {
        /** The sum, modulo 2^64, of the file's 8-byte words (native order; little-endian on x86 and AArch64). */
        SUM,
        /** The CRC-32C of the whole file. */
        CRC32C;

        /** A new fold of one pass's chunks, given in file order. */
        Fold fold() {
            return new Fold(this);
        }
    }

    /** One pass's result, folded chunk by chunk in file order. */
    static final class Fold {
        private final Compute compute;
        private final CRC32C crc = new CRC32C();
        private long sum;

        Fold(Compute compute) {
            this.compute = compute;
        }

        /** Folds in the next chunk. */
        void add(MemorySegment chunk) {
            if (compute == Compute.SUM) {
                sum += ChunkCompute.SUM.apply(chunk);
            } else {
                crc.update(chunk.asByteBuffer());
            }
        }

        /** The pass's result: the sum, or the CRC-32C. */
        long result() {
            return compute == Compute.SUM ? sum : crc.getValue();
        }
    }

    /** The expected results of a test file. */
    record Expected(long sum, long crc32c) {
        long of(Compute compute) {
            return compute == Compute.SUM ? sum : crc32c;
        }
    }

    /** The test file of a trial and its expected result; read-only after set-up. */
    @State(Scope.Benchmark)
    public static class TestFile {
        /** The file's size in MiB, a multiple of {@code chunkMiB}. */
        @Param("256")
        int sizeMiB;

        /** The chunk (and stage buffer) size in MiB. */
        @Param({"1", "4"})
        int chunkMiB;

        /** The computation of a pass. */
        @Param({"SUM", "CRC32C"})
        Compute compute;

        /** Where the file is written; empty: {@code java.io.tmpdir}. */
        @Param("")
        String dir;

        Path path;
        long size;
        long chunk;
        long expected;

        /**
         * Writes the file (see {@link #writeTestFile}), flushed so that no write-back runs during the measurement;
         * the tear-down deletes it, and the fork's exit does if a failed trial skipped the tear-down.
         */
        @Setup(Level.Trial)
        public void write() throws IOException {
            size = sizeMiB * MIB;
            chunk = chunkMiB * MIB;
            if (chunkMiB <= 0 || size % chunk != 0) {
                throw new IllegalArgumentException("sizeMiB " + sizeMiB + " is not a multiple of chunkMiB " + chunkMiB);
            }
            path = Files.createTempFile(dir.isEmpty() ? Path.of(System.getProperty("java.io.tmpdir")) : Path.of(dir),
                "jpipeline-load-", ".bin");
            path.toFile().deleteOnExit();
            expected = writeTestFile(path, size).of(compute);
        }

        long verify(long result) {
            if (result != expected) {
                throw new IllegalStateException(compute + " of " + path + " is 0x" + Long.toHexString(result)
                    + ", expected 0x" + Long.toHexString(expected));
            }
            return result;
        }

        /** Deletes the file. */
        @TearDown(Level.Trial)
        public void delete() throws IOException {
            Files.deleteIfExists(path);
        }
    }

    /** The plain loop's buffer: one direct {@code ByteBuffer} of the chunk size, kept for the trial. */
    @State(Scope.Benchmark)
    public static class PlainBuffer {
        ByteBuffer buffer;
        /** The same memory as a segment, for the computation. */
        MemorySegment segment;

        /** Allocates the buffer. */
        @Setup(Level.Trial)
        public void allocate(TestFile file) {
            buffer = ByteBuffer.allocateDirect(Math.toIntExact(file.chunk));
            segment = MemorySegment.ofBuffer(buffer);
        }
    }

    /** The thread-scope form's stage buffers, allocated once per trial from a shared arena. */
    @State(Scope.Benchmark)
    public static class StageBuffers {
        Arena arena;
        MemorySegment[] stages;

        /** Allocates {@link #STAGES} page-aligned buffers of the chunk size. */
        @Setup(Level.Trial)
        public void allocate(TestFile file) {
            arena = Arena.ofShared();
            MemorySegment pool = arena.allocate(STAGES * file.chunk, BUFFER_ALIGNMENT);
            stages = new MemorySegment[STAGES];
            for (int s = 0; s < STAGES; s++) {
                stages[s] = pool.asSlice(s * file.chunk, file.chunk);
            }
        }

        /** Frees the buffers. */
        @TearDown(Level.Trial)
        public void free() {
            arena.close();
        }
    }

    /** The loop without jpipeline: open, read a chunk into the buffer, compute, repeat. */
    @Benchmark
    public long plainLoop(TestFile file, PlainBuffer plain) throws IOException {
        return file.verify(plainPass(file.path, plain.buffer, plain.segment, file.compute));
    }

    /** The README's for-each form, a new {@code Prefetch} per pass. */
    @Benchmark
    public long forEach(TestFile file) {
        Fold fold = file.compute.fold();
        try (var chunks = Prefetch.from(file.path).chunk(file.chunk).stages(STAGES).open()) {
            for (MemorySegment c : chunks) {
                fold.add(c);
            }
        }
        return file.verify(fold.result());
    }

    /** A hand-written thread-scope pipeline keeping {@link #STAGES} reads ahead of the chunk computed on. */
    @Benchmark
    public long threadScope(TestFile file, StageBuffers buffers) throws IOException {
        Fold fold = file.compute.fold();
        MemorySegment[] stages = buffers.stages;
        long chunks = file.size / file.chunk;
        try (FileChannel channel = FileChannel.open(file.path, StandardOpenOption.READ);
             Pipeline pipe = Pipeline.make()) {
            long issued = 0;
            for (long c = 0; c < chunks; c++) {
                for (; issued < Math.min(c + STAGES, chunks); issued++) {
                    pipe.producerAcquire();
                    MemcpyAsync.memcpyAsync(stages[(int) (issued % STAGES)], channel, issued * file.chunk, file.chunk,
                        pipe);
                    pipe.producerCommit();
                }
                pipe.consumerWait();
                fold.add(stages[(int) (c % STAGES)]);
                pipe.consumerRelease();
            }
        }
        return file.verify(fold.result());
    }

    /** The front's parallel form: one producer, two consumers, 8 stages, results combined in file order. */
    @Benchmark
    public long parallel(TestFile file) {
        var prefetch = Prefetch.from(file.path).chunk(file.chunk).stages(PARALLEL_STAGES)
            .parallel(PARALLEL_PRODUCERS, PARALLEL_CONSUMERS);
        long result = file.compute == Compute.SUM
            ? prefetch.reduce(0L, ChunkCompute.SUM::apply, Long::sum)
            : prefetch.reduce(Crc32cPart.EMPTY, Crc32cPart::of, Crc32cPart::then).value();
        return file.verify(result);
    }

    /**
     * One pass of the plain loop over {@code path}: {@code buffer} filled by {@code FileChannel.read}s, then
     * computed on through {@code segment} (the same memory), until the file ends.
     *
     * @return the pass's result
     */
    static long plainPass(Path path, ByteBuffer buffer, MemorySegment segment, Compute compute) throws IOException {
        Fold fold = compute.fold();
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            boolean end = false;
            while (!end) {
                buffer.clear();
                while (buffer.hasRemaining()) {
                    if (channel.read(buffer) < 0) {
                        end = true;
                        break;
                    }
                }
                int bytes = buffer.position();
                if (bytes > 0) {
                    fold.add(bytes == segment.byteSize() ? segment : segment.asSlice(0, bytes));
                }
            }
        }
        return fold.result();
    }

    /**
     * Writes a test file of {@code size} bytes, a multiple of 8: long {@code i} of the file is
     * {@code i * 0x9E3779B97F4A7C15} (native order), written in 1 MiB pieces and flushed with {@code force}. The
     * expected results come from the generated pieces, not from the file.
     *
     * @return the file's sum of longs and CRC-32C
     */
    static Expected writeTestFile(Path path, long size) throws IOException {
        if (size < 0 || size % 8 != 0) {
            throw new IllegalArgumentException("a test file's size is a multiple of 8 bytes, got " + size);
        }
        long sum = 0;
        CRC32C crc = new CRC32C();
        try (Arena arena = Arena.ofConfined();
             FileChannel out = FileChannel.open(path, StandardOpenOption.WRITE, StandardOpenOption.CREATE,
                 StandardOpenOption.TRUNCATE_EXISTING)) {
            MemorySegment piece = arena.allocate(MIB, BUFFER_ALIGNMENT);
            for (long at = 0; at < size; at += MIB) {
                long bytes = Math.min(MIB, size - at);
                MemorySegment generated = piece.asSlice(0, bytes);
                long first = at / 8;
                for (long i = 0; i < bytes / 8; i++) {
                    generated.setAtIndex(ValueLayout.JAVA_LONG, i, (first + i) * GOLDEN);
                }
                sum += ChunkCompute.SUM.apply(generated);
                crc.update(generated.asByteBuffer());
                ByteBuffer view = generated.asByteBuffer();
                while (view.hasRemaining()) {
                    out.write(view);
                }
            }
            out.force(true);
            if (out.size() != size) {
                throw new IOException(path + " has " + out.size() + " bytes after writing " + size);
            }
        }
        return new Expected(sum, crc.getValue());
    }
}
