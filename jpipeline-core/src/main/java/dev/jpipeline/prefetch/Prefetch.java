package dev.jpipeline.prefetch;

import dev.jpipeline.copy.CopyEngine;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.SelectableChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Objects;
import java.util.function.BinaryOperator;
import java.util.function.Function;

/**
 * Prefetching iteration over a file or memory, in three lines: read ahead while computing (double or quad
 * buffering) without the pipeline's bookkeeping. No CUDA counterpart: this is the Java front over
 * {@link dev.jpipeline.Pipeline}, which stays the power tool.
 *
 * <pre>{@code
 * try (Chunks chunks = Prefetch.from(channel).chunk(4 << 20).stages(4).open()) {
 *     for (MemorySegment chunk : chunks) crc.update(chunk.asByteBuffer());
 * }
 * }</pre>
 *
 * <p>A {@code Prefetch} is a reusable description of what to read and how; {@link #open()} starts reading, the
 * first {@code stages} chunks at once, and returns the {@link Chunks} to iterate. Sources:
 * <ul>
 *   <li>with positions, read ahead by the iterating thread's thread-scope pipeline, whose asynchronous copies run
 *       on the copy engine: a {@link FileChannel} (from its position to its size at {@code open()}, with
 *       positional reads that leave the channel's position as it was), a file by {@link Path}, a
 *       {@link MemorySegment}, and an {@code Iterable} of segments (each cut into chunks, a chunk never spanning
 *       two segments);</li>
 *   <li>read in order to their end by a reader thread, the producer of a block-scope pipeline whose consumer is
 *       the iteration: a {@link ReadableByteChannel} and an {@link InputStream} (blocking; their size is unknown).</li>
 * </ul>
 * Options: the chunk size ({@link #chunk}), the number of stages ({@link #stages}), the copy engine
 * ({@link #copyEngine}) and where the stage buffers come from ({@link #buffers}).
 *
 * <p>Not thread-safe: configure it on one thread; each {@link #open()} is an iteration of its own.
 */
public final class Prefetch {

    /** The default chunk size: 1 MiB, large enough that a stage's hand-off is small beside its read. */
    public static final long DEFAULT_CHUNK = 1 << 20;
    /** The default number of stages: quad buffering. */
    public static final int DEFAULT_STAGES = 4;
    /** The largest chunk: 1 GiB, so that every chunk has a {@code ByteBuffer} view. */
    public static final long MAX_CHUNK = 1L << 30;
    /** The most stages. */
    public static final int MAX_STAGES = 1024;

    /** Where the bytes come from; opened by {@link #open()}. */
    private sealed interface Source {
        String name();
    }

    private record FileSource(FileChannel channel) implements Source {
        @Override
        public String name() {
            return "a FileChannel";
        }
    }

    private record PathSource(Path path) implements Source {
        @Override
        public String name() {
            return "file " + path;
        }
    }

    private record SegmentSource(MemorySegment data) implements Source {
        @Override
        public String name() {
            return "a memory segment of " + data.byteSize() + " bytes";
        }
    }

    private record IterableSource(Iterable<MemorySegment> segments) implements Source {
        @Override
        public String name() {
            return "an Iterable of segments";
        }
    }

    private record StreamSource(ReadableByteChannel channel, String name) implements Source {
    }

    private final Source source;
    private long chunk = DEFAULT_CHUNK;
    private int stages = DEFAULT_STAGES;
    private CopyEngine engine = CopyEngine.shared();
    private SegmentAllocator buffers;

    private Prefetch(Source source) {
        this.source = source;
    }

    /**
     * Prefetches a file channel from its position to its size at {@link #open()}, with positional reads on the
     * copy engine; the channel's position is left as it was, and the channel is not closed.
     *
     * @param channel an open file channel, readable
     * @return a prefetch of it, with the default options
     */
    public static Prefetch from(FileChannel channel) {
        return new Prefetch(new FileSource(Objects.requireNonNull(channel, "channel")));
    }

    /**
     * Prefetches a file, opened for reading by {@link #open()} and closed by {@link Chunks#close()}.
     *
     * @param file the file
     * @return a prefetch of it, with the default options
     */
    public static Prefetch from(Path file) {
        return new Prefetch(new PathSource(Objects.requireNonNull(file, "file")));
    }

    /**
     * Prefetches bytes in memory, copied into the stage buffers with {@code memcpyAsync}. The segment must stay
     * valid until the iteration is closed.
     *
     * @param data the bytes
     * @return a prefetch of them, with the default options
     */
    public static Prefetch from(MemorySegment data) {
        return new Prefetch(new SegmentSource(Objects.requireNonNull(data, "data")));
    }

    /**
     * Prefetches the segments of {@code segments}, in order: each is cut into chunks of at most the chunk size,
     * a chunk never spanning two segments. The iterator runs on the iterating thread, up to {@code stages} chunks
     * ahead; each segment must stay valid until the iteration has passed it. Whatever the iterator throws
     * surfaces as the {@link ChunkFailedException} of the chunk it was producing.
     *
     * @param segments the segments, iterated once per {@link #open()}
     * @return a prefetch of them, with the default options
     */
    public static Prefetch from(Iterable<MemorySegment> segments) {
        return new Prefetch(new IterableSource(Objects.requireNonNull(segments, "segments")));
    }

    /**
     * Prefetches a blocking channel of unknown size, read in order to its end by a reader thread. The channel
     * is not closed. A non-blocking {@link SelectableChannel} is refused.
     *
     * @param channel the channel
     * @return a prefetch of it, with the default options
     * @throws IllegalArgumentException when the channel is a non-blocking selectable channel
     */
    public static Prefetch from(ReadableByteChannel channel) {
        Objects.requireNonNull(channel, "channel");
        if (channel instanceof SelectableChannel selectable && !selectable.isBlocking()) {
            throw new IllegalArgumentException("a prefetched channel must be blocking: " + channel
                + " is in non-blocking mode (its reads may return no bytes at any time)");
        }
        return new Prefetch(new StreamSource(channel, "a ReadableByteChannel"));
    }

    /**
     * Prefetches an input stream, read in order to its end by a reader thread. The stream is not closed.
     *
     * @param in the stream
     * @return a prefetch of it, with the default options
     */
    public static Prefetch from(InputStream in) {
        return new Prefetch(new StreamSource(Channels.newChannel(Objects.requireNonNull(in, "in")),
            "an InputStream"));
    }

    /**
     * Sets the chunk size: every chunk but the last of a segment or source has this many bytes.
     *
     * @param bytes 1 to {@link #MAX_CHUNK}
     * @return this
     * @throws IllegalArgumentException when {@code bytes} is out of range
     */
    public Prefetch chunk(long bytes) {
        if (bytes < 1 || bytes > MAX_CHUNK) {
            throw new IllegalArgumentException("a prefetch chunk must be 1 to " + MAX_CHUNK + " bytes (1 GiB), got "
                + bytes);
        }
        this.chunk = bytes;
        return this;
    }

    /**
     * Sets the number of stages: how many chunks are read ahead of the iteration (each has a buffer of the chunk
     * size). 2 is double buffering; 1 reads the next chunk only once the iteration has left the current one.
     *
     * @param count 1 to {@link #MAX_STAGES}
     * @return this
     * @throws IllegalArgumentException when {@code count} is out of range
     */
    public Prefetch stages(int count) {
        if (count < 1 || count > MAX_STAGES) {
            throw new IllegalArgumentException("a prefetch needs 1 to " + MAX_STAGES + " stages, got " + count);
        }
        this.stages = count;
        return this;
    }

    /**
     * Sets where the asynchronous copies of a source with positions run (default {@link CopyEngine#shared()});
     * a stream source is read by its own reader thread.
     *
     * @param engine an open copy engine
     * @return this
     */
    public Prefetch copyEngine(CopyEngine engine) {
        this.engine = Objects.requireNonNull(engine, "engine");
        return this;
    }

    /**
     * Sets where the stage buffers come from: {@code stages} segments of the chunk size, allocated by each
     * {@link #open()}. By default each iteration allocates them off-heap in an arena of its own and frees them at
     * {@link Chunks#close()}; memory from {@code allocator} is the caller's to free, after the close.
     *
     * @param allocator the allocator, or null for the default
     * @return this
     */
    public Prefetch buffers(SegmentAllocator allocator) {
        this.buffers = allocator;
        return this;
    }

    /**
     * Starts reading: allocates the stage buffers, issues the first {@code stages} reads, and returns the chunks
     * to iterate, which belong to the calling thread.
     *
     * @return the open iteration; close it
     * @throws UncheckedIOException     when a file cannot be opened, or its size read
     * @throws IllegalArgumentException when the buffer allocator gives too small or read-only segments
     */
    public Chunks open() {
        StageBuffers stageBuffers = new StageBuffers(stages, chunk, buffers);
        try {
            if (source instanceof StreamSource(ReadableByteChannel channel, String name)) {
                return new Chunks(new ReaderFeed(channel, stageBuffers, name), name, -1);
            }
            PieceSource pieces = openPieces();
            long size = pieces instanceof PieceSource.Positional positional ? positional.size() : -1;
            return new Chunks(new AheadFeed(pieces, stageBuffers, engine), source.name(), size);
        } catch (RuntimeException | Error e) {
            stageBuffers.free();
            throw e;
        }
    }

    /**
     * The parallel form: {@code producers} threads read, {@code consumers} threads compute, results combine in
     * order ({@link ParallelPrefetch#reduce}).
     *
     * @param producers threads that read; more than 1 only for a file or a memory segment
     * @param consumers threads that compute
     * @return the parallel form of this prefetch, with its options
     * @throws IllegalArgumentException when a count is below 1, they add up to more than
     *                                  {@link ParallelPrefetch#MAX_THREADS}, or a source without positions is
     *                                  given several producers
     */
    public ParallelPrefetch parallel(int producers, int consumers) {
        return new ParallelPrefetch(this, producers, consumers);
    }

    /** Opens a source other than a stream: its pieces, which {@link PieceSource#close} closes. */
    private PieceSource openPieces() {
        try {
            return switch (source) {
                case FileSource(FileChannel channel) -> {
                    long from = channel.position();
                    yield new PieceSource.FilePieces(channel, from, Math.max(from, channel.size()), false);
                }
                case PathSource(Path path) -> {
                    FileChannel channel = FileChannel.open(path, StandardOpenOption.READ);
                    try {
                        yield new PieceSource.FilePieces(channel, 0, channel.size(), true);
                    } catch (IOException e) {
                        channel.close();
                        throw e;
                    }
                }
                case SegmentSource(MemorySegment data) -> new PieceSource.SegmentPieces(data);
                case IterableSource(Iterable<MemorySegment> segments) ->
                    new PieceSource.IterablePieces(segments.iterator());
                case StreamSource stream -> throw new IllegalStateException("a stream has no pieces: " + stream);
            };
        } catch (IOException e) {
            throw new UncheckedIOException("opening " + source.name() + " for prefetching failed: " + e, e);
        }
    }

    /** Whether several producers can split the source's chunks (it has positions). */
    boolean hasPositions() {
        return source instanceof FileSource || source instanceof PathSource || source instanceof SegmentSource;
    }

    String sourceName() {
        return source.name();
    }

    long chunkBytes() {
        return chunk;
    }

    /** {@link ParallelPrefetch#reduce}: opens the source and the buffers, runs, closes both. */
    <R> R runParallel(int producers, int consumers, long shareAlignment, R identity,
                      Function<? super MemorySegment, ? extends R> mapper, BinaryOperator<R> combiner) {
        PieceSource pieces = source instanceof StreamSource ? null : openPieces();
        ReadableByteChannel stream = source instanceof StreamSource(ReadableByteChannel channel, String name)
            ? channel : null;
        try {
            StageBuffers stageBuffers = new StageBuffers(stages, chunk, buffers);
            try {
                return new ParallelRun<>(source.name(), pieces, stream, stageBuffers, engine, producers, consumers,
                    shareAlignment, chunk, identity, mapper, combiner).run();
            } finally {
                stageBuffers.free();        // every thread has ended: no copy writes into them any more
            }
        } finally {
            if (pieces != null) {
                pieces.close();
            }
        }
    }

    @Override
    public String toString() {
        return "Prefetch[" + source.name() + ", chunks of " + chunk + " bytes, " + stages + " stages]";
    }
}
