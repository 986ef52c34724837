package dev.jpipeline.prefetch;

import dev.jpipeline.copy.CopyEngine;
import dev.jpipeline.internal.copy.CopyWorkers;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.NonReadableChannelException;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.SelectableChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
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
    /**
     * The most stages: the pipeline's ({@link dev.jpipeline.PipelineSharedState#MAX_STAGES}, CUDA's {@code uint8_t}),
     * which a stream source and the parallel form are built on.
     */
    public static final int MAX_STAGES = dev.jpipeline.PipelineSharedState.MAX_STAGES;

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

    /** @param owned a file channel opened for this prefetch, closed once the reader is done with it, else null */
    private record StreamSource(ReadableByteChannel channel, String name, Closeable owned) implements Source {
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
     * copy engine; the channel's position is left as it was, and the channel is not closed. A channel with no bytes
     * past its position by its size (a {@code /proc} file, whose size is known only at its end, a FIFO, a device),
     * or that ends before the byte its size names last (a {@code /sys} attribute states 4096 bytes and holds a few;
     * {@code open()} reads that one byte to see), is read in order to its real end instead, as a stream is, which
     * moves its position.
     *
     * @param channel an open file channel, readable
     * @return a prefetch of it, with the default options
     */
    public static Prefetch from(FileChannel channel) {
        return new Prefetch(new FileSource(Objects.requireNonNull(channel, "channel")));
    }

    /**
     * Prefetches a file, opened for reading by {@link #open()} and closed by {@link Chunks#close()}. A file whose
     * size is 0 (a {@code /proc} file, whose size is known only at its end, a FIFO, a device, or an empty file),
     * or that ends before the byte its size names last (a {@code /sys} attribute states 4096 bytes and holds a few;
     * {@code open()} reads that one byte to see), is read in order to its real end, as a stream is; a directory is
     * refused at {@code open()}.
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
        return new Prefetch(new StreamSource(channel, "a ReadableByteChannel", null));
    }

    /**
     * Prefetches an input stream, read in order to its end by a reader thread. The stream is not closed.
     *
     * @param in the stream
     * @return a prefetch of it, with the default options
     */
    public static Prefetch from(InputStream in) {
        return new Prefetch(new StreamSource(StreamReads.channel(Objects.requireNonNull(in, "in")),
            "an InputStream", null));
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
     * Sets the number of stages: how many chunks are in buffers at once (each has a buffer of the chunk size), the
     * one the loop holds and {@code count - 1} read ahead of it. 2 is double buffering; 1 reads the next chunk only
     * once the iteration has left the current one.
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
     * {@link #open()} (for a source of known size, no more and no larger than it needs). By default each iteration takes them from a pool of off-heap buffers that
     * {@link Chunks#close()} gives them back to, so that an {@code open()} per pass allocates, zeroes and faults in
     * no fresh memory (at most 256 MiB kept idle, each buffer freed after 2 s unused; system properties
     * {@code jpipeline.prefetch.pooledBytes} and {@code jpipeline.prefetch.idleMillis}); two open iterations never
     * share a buffer. Memory from {@code allocator} is the caller's to free, after the close.
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
     * @throws IllegalArgumentException when the buffer allocator gives segments that are too small, read-only, on
     *                                  the heap, of a confined arena, or overlapping one another
     * @throws IllegalStateException    when the copy engine is closed (a source other than a stream)
     * @throws IllegalArgumentException when a {@code FileChannel} with bytes to read was not opened for reading
     */
    public Chunks open() {
        Route route = route();
        if (route.stream() instanceof StreamSource(ReadableByteChannel channel, String name, Closeable owned)) {
            StageBuffers stageBuffers = null;
            try {
                stageBuffers = new StageBuffers(stages, chunk, buffers);
                return new Chunks(new ReaderFeed(channel, stageBuffers, name, owned), name, -1, chunk);
            } catch (RuntimeException | Error e) {
                if (stageBuffers != null) {
                    stageBuffers.free();
                }
                closeOwned(owned, e);
                throw e;
            }
        }
        PieceSource pieces = openPieces(route.opened());
        StageBuffers stageBuffers = null;
        try {
            stageBuffers = stageBuffersFor(pieces);
            long size = pieces instanceof PieceSource.Positional positional ? positional.size() : -1;
            return new Chunks(new AheadFeed(pieces, stageBuffers, engine), source.name(), size, chunk);
        } catch (RuntimeException | Error e) {
            try {
                pieces.close();                 // a file opened by path is closed on every failure (idempotent)
            } catch (RuntimeException closing) {
                e.addSuppressed(closing);
            }
            if (stageBuffers != null) {
                stageBuffers.free();
            }
            throw e;
        }
    }

    /**
     * The stage buffers for a source with pieces: no more and no larger than a source of known size needs, so that
     * a small file with large chunks does not allocate {@code stages} chunks (10 bytes with 1 GiB chunks: one
     * buffer of 10 bytes).
     */
    private StageBuffers stageBuffersFor(PieceSource pieces) {
        if (pieces instanceof PieceSource.Positional positional) {
            long size = positional.size();
            long batches = Math.max(1, size / chunk + (size % chunk == 0 ? 0 : 1));
            return new StageBuffers((int) Math.min(stages, batches), Math.max(1, Math.min(chunk, size)), buffers);
        }
        return new StageBuffers(stages, chunk, buffers);
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

    /** A source with pieces copies on the copy engine: a closed one is refused before anything is opened. */
    private void checkEngine() {
        if (engine.isClosed()) {
            throw new IllegalStateException("the copy engine of a prefetch of " + source.name()
                + " is closed: give an open one to copyEngine(), or leave the default");
        }
    }

    /**
     * Opens a source other than a stream: its pieces, which {@link PieceSource#close} closes. A source with pieces
     * copies on the copy engine: a closed one is refused, and {@code opened} (the file of a path, opened by
     * {@link #route}) closed.
     */
    private PieceSource openPieces(FileChannel opened) {
        try {
            checkEngine();
        } catch (RuntimeException e) {
            closeOwned(opened, e);
            throw e;
        }
        try {
            return switch (source) {
                case FileSource(FileChannel channel) -> {
                    long from = channel.position();
                    yield new PieceSource.FilePieces(channel, from, Math.max(from, channel.size()), false);
                }
                case PathSource(Path path) -> {
                    FileChannel channel = Objects.requireNonNull(opened, "a file given by path is opened by route()");
                    CopyWorkers.waitersMayRead(channel);    // ours: the iterating thread may read it (issue 25)
                    try {
                        yield new PieceSource.FilePieces(channel, path, 0, channel.size(), true);
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

    /**
     * How {@link #open()} reads the source: in order to its end ({@code stream}), or by pieces ({@code stream} null;
     * {@code opened} is then the file of a path, opened by {@link #route}, else null).
     */
    private record Route(StreamSource stream, FileChannel opened) {
    }

    /**
     * The source as a stream when it must be read in order: a stream, or a file whose size does not say how many
     * bytes it holds, opened here when given by path. A file whose size is 0 (or no more than its position) is
     * sized only at its end ({@code /proc}, a FIFO, a device; or it is empty); a file that ends before the byte
     * its size names last holds fewer bytes than it states ({@code /sys} attributes state 4096 and hold a few):
     * {@link #sizeHolds} reads that byte. A directory given by path is refused.
     *
     * @throws UncheckedIOException when the file cannot be opened or sized, or is a directory
     */
    private Route route() {
        try {
            return switch (source) {
                case StreamSource stream -> new Route(stream, null);
                case FileSource(FileChannel channel) -> {
                    long from = channel.position();
                    long size = channel.size();
                    boolean holds;
                    try {
                        holds = size > from && sizeHolds(channel, size);    // a read: checks readability first
                    } catch (NonReadableChannelException e) {
                        throw new IllegalArgumentException("a prefetched FileChannel must be open for reading: "
                            + channel + " was opened without READ", e);
                    }
                    yield holds ? new Route(null, null) : new Route(new StreamSource(channel, source.name(), null),
                        null);
                }
                case PathSource(Path path) -> {
                    BasicFileAttributes file = Files.readAttributes(path, BasicFileAttributes.class);
                    if (file.isDirectory()) {
                        throw new IOException(path + " is a directory");
                    }
                    FileChannel channel = FileChannel.open(path, StandardOpenOption.READ);
                    try {
                        if (file.isRegularFile() && sizeHolds(channel, channel.size())) {
                            yield new Route(null, channel);
                        }
                    } catch (IOException | RuntimeException | Error e) {
                        closeOwned(channel, e);
                        throw e;
                    }
                    yield new Route(new StreamSource(channel, source.name(), channel), null);
                }
                case SegmentSource segment -> new Route(null, null);
                case IterableSource iterable -> new Route(null, null);
            };
        } catch (IOException e) {
            throw new UncheckedIOException("opening " + source.name() + " for prefetching failed: " + e, e);
        }
    }

    /**
     * Whether a file of {@code size} bytes by its own account holds them: its byte {@code size - 1} can be read
     * (one positional read of a byte, which leaves the channel's position as it was). A file that ends before it
     * (a {@code /sys} attribute, which states 4096 bytes and holds a few; a file truncated since it was sized) is
     * read in order to its real end instead, as a stream is, as {@code cat} reads it: positional reads of the size
     * it states would fail at its first chunk. A file that shrinks after this look fails at the chunk it no longer
     * holds.
     *
     * <p>Only the file's end says no: a read that fails or returns no byte leaves the size as stated, and the
     * chunk that reads that byte fails (or succeeds) as it would have.
     *
     * @return false when {@code size} is 0 (sized only at its end) or the byte is past the file's end
     * @throws NonReadableChannelException when the channel was not opened for reading
     */
    static boolean sizeHolds(FileChannel channel, long size) {
        if (size <= 0) {
            return false;
        }
        try {
            return channel.read(ByteBuffer.allocate(1), size - 1) >= 0;
        } catch (IOException e) {
            return true;                // not this look's to report: the read of that chunk fails, at its chunk
        }
    }

    /**
     * Closes a file opened for a stream read (null: none): once its reader is done, or when the set-up failed, then
     * keeping {@code failure} first (a failure to close is added to it; without one it is dropped, since a file only
     * read from loses nothing when its close fails).
     */
    static void closeOwned(Closeable owned, Throwable failure) {
        if (owned != null) {
            try {
                owned.close();
            } catch (IOException | RuntimeException closing) {
                if (failure != null) {
                    failure.addSuppressed(closing);
                }
            }
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

    /** {@link ParallelPrefetch#reduce}: opens the source and the buffers, runs; the run frees both. */
    <R> R runParallel(int producers, int consumers, long shareAlignment, R identity,
                      Function<? super MemorySegment, ? extends R> mapper, BinaryOperator<R> combiner) {
        Route route = route();
        StreamSource asStream = route.stream();
        PieceSource pieces = asStream == null ? openPieces(route.opened()) : null;
        ReadableByteChannel stream = asStream == null ? null : asStream.channel();
        Closeable owned = asStream == null ? null : asStream.owned();
        StageBuffers stageBuffers;
        try {
            stageBuffers = pieces != null ? stageBuffersFor(pieces) : new StageBuffers(stages, chunk, buffers);
        } catch (RuntimeException | Error e) {
            if (pieces != null) {
                pieces.close();
            }
            closeOwned(owned, e);
            throw e;
        }
        // Called once nothing can write into the buffers or read the file any more (ParallelRun says when).
        Runnable free = () -> {
            try {
                stageBuffers.free();
            } finally {
                if (pieces != null) {
                    pieces.close();
                }
                closeOwned(owned, null);
            }
        };
        ParallelRun<R> run;
        try {
            // a file read as a stream (sized only at its end) is read in order, by one producer
            int readers = stream == null ? producers : 1;
            run = new ParallelRun<>(source.name(), pieces, stream, stageBuffers, engine, readers, consumers,
                shareAlignment, chunk, identity, mapper, combiner, free);
        } catch (RuntimeException | Error e) {
            free.run();
            throw e;
        }
        return run.run();
    }

    @Override
    public String toString() {
        return "Prefetch[" + source.name() + ", chunks of " + chunk + " bytes, " + stages + " stages]";
    }
}
