package dev.jpipeline.prefetch;

import dev.jpipeline.copy.CopyEngine;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.nio.channels.FileChannel;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.SelectableChannel;
import java.nio.file.Path;
import java.util.Objects;
import java.util.function.BiFunction;
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

    /** Opens a description's {@link Source} for one {@link #open()} or {@code reduce}. */
    @FunctionalInterface
    private interface Opener {
        /**
         * @param copying refuses a closed copy engine; an opener runs it before it makes a source that copies
         */
        Source open(Runnable copying) throws IOException;
    }

    /** What the source is, for messages: "a FileChannel", "file /tmp/x". */
    private final String name;
    /** Whether the source has positions (a file or memory), so that several producers can split its chunks. */
    private final boolean positions;
    private final Opener opener;
    private long chunk = DEFAULT_CHUNK;
    private int stages = DEFAULT_STAGES;
    private CopyEngine engine = CopyEngine.shared();
    private SegmentAllocator buffers;

    private Prefetch(String name, boolean positions, Opener opener) {
        this.name = name;
        this.positions = positions;
        this.opener = opener;
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
        Objects.requireNonNull(channel, "channel");
        return new Prefetch("a FileChannel", true, copying -> Source.ofChannel(channel, copying));
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
        Objects.requireNonNull(file, "file");
        return new Prefetch("file " + file, true, copying -> Source.ofPath(file, copying));
    }

    /**
     * Prefetches bytes in memory, copied into the stage buffers with {@code memcpyAsync}. The segment must stay
     * valid until the iteration is closed.
     *
     * @param data the bytes
     * @return a prefetch of them, with the default options
     */
    public static Prefetch from(MemorySegment data) {
        Objects.requireNonNull(data, "data");
        return new Prefetch("a memory segment of " + data.byteSize() + " bytes", true, copying -> {
            copying.run();
            return new Source.Memory(data);
        });
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
        Objects.requireNonNull(segments, "segments");
        return new Prefetch("an Iterable of segments", false, copying -> {
            copying.run();
            return new Source.Segments(segments.iterator());
        });
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
        return new Prefetch("a ReadableByteChannel", false, copying -> new Source.Stream(channel, null));
    }

    /**
     * Prefetches an input stream, read in order to its end by a reader thread. The stream is not closed.
     *
     * @param in the stream
     * @return a prefetch of it, with the default options
     */
    public static Prefetch from(InputStream in) {
        ReadableByteChannel channel = StreamReads.channel(Objects.requireNonNull(in, "in"));
        return new Prefetch("an InputStream", false, copying -> new Source.Stream(channel, null));
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
        return start((source, ledger) -> {
            ChunkFeed feed = source.blocks() ? new ReaderFeed(ledger, name) : new AheadFeed(ledger, engine);
            return new Chunks(feed, name, source.size(), chunk);
        });
    }

    /**
     * Opens the source, takes its stage buffers and hands both, in their ledger, to {@code start}; when opening or
     * {@code start} fails, frees the buffers and closes the source (both idempotent: a feed that failed may have
     * done so already) and rethrows.
     */
    private <T> T start(BiFunction<Source, StageLedger, T> start) {
        Source source;
        try {
            source = opener.open(this::checkEngine);
        } catch (IOException e) {
            throw new UncheckedIOException("opening " + name + " for prefetching failed: " + e, e);
        }
        StageBuffers stageBuffers = null;
        try {
            stageBuffers = stageBuffersFor(source);
            return start.apply(source, new StageLedger(source, stageBuffers, chunk));
        } catch (RuntimeException | Error e) {
            if (stageBuffers != null) {
                stageBuffers.free();
            }
            source.close(e);
            throw e;
        }
    }

    /**
     * The stage buffers for a source: no more and no larger than a source of known size needs, so that a small file
     * with large chunks does not allocate {@code stages} chunks (10 bytes with 1 GiB chunks: one buffer of 10 bytes).
     */
    private StageBuffers stageBuffersFor(Source source) {
        long size = source.size();
        if (size < 0) {
            return new StageBuffers(stages, chunk, buffers);
        }
        long batches = Math.max(1, size / chunk + (size % chunk == 0 ? 0 : 1));
        return new StageBuffers((int) Math.min(stages, batches), Math.max(1, Math.min(chunk, size)), buffers);
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

    /** A source that copies needs the copy engine: a closed one is refused before the source is made. */
    private void checkEngine() {
        if (engine.isClosed()) {
            throw new IllegalStateException("the copy engine of a prefetch of " + name
                + " is closed: give an open one to copyEngine(), or leave the default");
        }
    }

    /** Whether several producers can split the source's chunks (it has positions). */
    boolean hasPositions() {
        return positions;
    }

    String sourceName() {
        return name;
    }

    long chunkBytes() {
        return chunk;
    }

    /** {@link ParallelPrefetch#reduce}: opens the source and the buffers, runs; the run frees both. */
    <R> R runParallel(int producers, int consumers, long shareAlignment, R identity,
                      Function<? super MemorySegment, ? extends R> mapper, BinaryOperator<R> combiner) {
        return start((source, ledger) -> {
            // a source of unknown size (a stream, a file sized only at its end, an Iterable) is read in order, by one
            int readers = source.size() < 0 ? 1 : producers;
            return new ParallelRun<>(name, ledger, engine, readers, consumers, shareAlignment, chunk, identity, mapper,
                combiner);
        }).run();
    }

    @Override
    public String toString() {
        return "Prefetch[" + name + ", chunks of " + chunk + " bytes, " + stages + " stages]";
    }
}
