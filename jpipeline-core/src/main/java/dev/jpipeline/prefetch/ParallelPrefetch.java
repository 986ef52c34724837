package dev.jpipeline.prefetch;

import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.function.BinaryOperator;
import java.util.function.Function;

/**
 * The parallel form of a {@link Prefetch}: {@code producers} threads read the source into the stages while
 * {@code consumers} threads compute on them, and the per-chunk results are combined in source order. No CUDA
 * counterpart: the front over a partitioned pipeline ({@code cuda::make_pipeline(group, &state,
 * producer_count)}), which stays the power tool.
 *
 * <pre>{@code
 * long sum = Prefetch.from(path).chunk(4 << 20).parallel(2, 4)
 *     .reduce(0L, chunk -> sumOfLongs(chunk), Long::sum);
 * long crc = Prefetch.from(path).parallel(1, 2).shares(1)
 *     .reduce(Crc32cPart.EMPTY, Crc32cPart::of, Crc32cPart::then).value();
 * }</pre>
 *
 * <p>By default whole chunks are dealt to the consumers (chunk k to consumer k mod consumers); with
 * {@link #shares} each consumer computes its share of every chunk. Either way the results are combined in source
 * order, as {@code forEachOrdered} would see them, so the combiner must be associative but need not be
 * commutative (a CRC's combine is not). A segment given to the mapper is valid during the call only, on the
 * consumer's thread: keeping it fails loudly, as a chunk of {@link Chunks} does.
 *
 * <p>Several producers split each chunk of a source with positions (a file, a memory segment); any other source
 * has one producer. Their copies and file reads run on the copy engine, or on the producers themselves when the
 * machine has no core to spare (at most two processors per thread of the run), where a producer would only wait
 * for a worker. A failure, of a read or of the mapper or the combiner, stops every thread at its next chunk
 * and is rethrown as a {@link ChunkFailedException} naming the lowest chunk that failed.
 */
public final class ParallelPrefetch {

    /** The most threads of one run. */
    public static final int MAX_THREADS = 1024;

    private final Prefetch prefetch;
    private final int producers;
    private final int consumers;
    private long shareAlignment;

    ParallelPrefetch(Prefetch prefetch, int producers, int consumers) {
        if (producers < 1 || consumers < 1 || producers + consumers > MAX_THREADS) {
            throw new IllegalArgumentException("a parallel prefetch needs at least 1 producer and 1 consumer, "
                + MAX_THREADS + " threads at most, got " + producers + " producers and " + consumers + " consumers");
        }
        if (producers > 1 && !prefetch.hasPositions()) {
            throw new IllegalArgumentException(prefetch.sourceName() + " is read in order by one producer, not "
                + producers + ": only a file or a memory segment can be split between producers");
        }
        this.prefetch = prefetch;
        this.producers = producers;
        this.consumers = consumers;
    }

    /**
     * Has each consumer compute its share of every chunk instead of whole chunks: the shares are as equal as
     * multiples of {@code alignment} bytes allow (the last may be shorter, and a share may be empty, whose result
     * is then the identity).
     *
     * @param alignment the bytes a share's length is a multiple of (8 for longs, 1 for bytes), 1 to the chunk
     *                  size
     * @return this
     * @throws IllegalArgumentException when {@code alignment} is out of range
     */
    public ParallelPrefetch shares(long alignment) {
        if (alignment < 1 || alignment > prefetch.chunkBytes()) {
            throw new IllegalArgumentException("a share alignment must be 1 to the chunk size "
                + prefetch.chunkBytes() + ", got " + alignment);
        }
        this.shareAlignment = alignment;
        return this;
    }

    /**
     * Reads the whole source, applies {@code mapper} to each chunk (or each share of one) on the consumer
     * threads, and combines the results in source order, starting from {@code identity}. Returns once every
     * thread has ended and no copy is in flight. A combiner may return null; the result is then whatever it
     * returned (null is passed on, not refused).
     *
     * @param identity the result of no bytes, and the identity of {@code combiner}
     * @param mapper   a chunk's (or a share's) result; the segment is valid during the call only
     * @param combiner combines two consecutive results; associative
     * @param <R>      the result type
     * @return the combined result of every chunk, in order
     * @throws ChunkFailedException         when a read, the mapper or the combiner failed (the lowest chunk)
     * @throws java.io.UncheckedIOException when a file cannot be opened, or is a directory
     * @throws IllegalArgumentException     when a {@code FileChannel} was not opened for reading, or the buffer
     *                                      allocator gives unusable segments (see
     *                                      {@link Prefetch#open()})
     * @throws IllegalStateException        when the copy engine is closed (a source other than a stream)
     * @throws java.util.concurrent.CancellationException when the calling thread is interrupted: every thread
     *                                      stops at its next chunk, the call returns at once (the interrupt
     *                                      status kept) without waiting for a mapper or a stream read that
     *                                      blocks, and the buffers are freed once the last thread has ended
     */
    public <R> R reduce(R identity, Function<? super MemorySegment, ? extends R> mapper, BinaryOperator<R> combiner) {
        Objects.requireNonNull(mapper, "mapper");
        Objects.requireNonNull(combiner, "combiner");
        return prefetch.runParallel(producers, consumers, shareAlignment, identity, mapper, combiner);
    }

    @Override
    public String toString() {
        return "ParallelPrefetch[" + prefetch + ", " + producers + " producers, " + consumers + " consumers, "
            + (shareAlignment == 0 ? "whole chunks" : "shares aligned to " + shareAlignment) + "]";
    }
}
