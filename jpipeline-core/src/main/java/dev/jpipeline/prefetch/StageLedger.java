package dev.jpipeline.prefetch;

import dev.jpipeline.Pipeline;
import dev.jpipeline.StageFailedException;
import dev.jpipeline.prefetch.Source.Filled;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/**
 * The stage bookkeeping of one feed ({@link AheadFeed}, {@link ReaderFeed}, {@link ParallelRun}): its source, its
 * stage buffers and, by stage, the record of the chunk in it; when the feed stops; how a consumer drains; and who
 * frees the buffers and closes the source.
 *
 * <pre>
 *   stages   chunk k is in stage k mod stages: its buffer, and its record (length, end, failure).
 *   fill     the thread that fills chunk k (the producer; part 0 of several producers) writes its record between
 *            its producer_acquire and its producer_commit; the others only copy their shares. A consumer reads the
 *            record after its consumer_wait for chunk k returned (or threw): the commit happens-before the wait's
 *            return, so the record needs no fence of its own. It is rewritten only for chunk k + stages, whose
 *            acquire waits until every consumer released chunk k.
 *   end      a record marked end is the source's last chunk (empty when the end was found only then); a failed
 *            fill is marked end too: nothing is filled after it.
 *   stop     once stopped (a close, a failure), producers fill no further chunk and a stream's read ends at its
 *            next look; a stopping consumer drains: it waits for and releases every chunk still committed, so
 *            that no copy writes into a stage once it is freed.
 *   free     the buffers are freed and the source closed by the last user to leave (the thread that opened the
 *            feed, and each thread that enter() counted before it started), once: never while a thread may still
 *            write into a stage.
 * </pre>
 */
final class StageLedger {

    private final Source source;
    private final StageBuffers buffers;
    private final long chunk;
    /** The record of each stage's chunk: plain fields, ordered by the pipeline (see the class comment). */
    private final long[] lengths;
    private final boolean[] ends;
    private final Throwable[] failures;
    /** Volatile: set by any thread (a close, a failure), read by others between chunks and between reads. */
    private volatile boolean stopped;
    /** {@link #stopped} as a stream read looks at it between reads. */
    private final BooleanSupplier stop = () -> stopped;
    /** The users still using the buffers: its atomic count-down elects the one that frees them. */
    private final AtomicInteger users = new AtomicInteger(1);

    /** The ledger of a feed over {@code source}, in chunks of {@code chunk} bytes; its one user is the caller. */
    StageLedger(Source source, StageBuffers buffers, long chunk) {
        this.source = source;
        this.buffers = buffers;
        this.chunk = chunk;
        int stages = buffers.count();
        this.lengths = new long[stages];
        this.ends = new boolean[stages];
        this.failures = new Throwable[stages];
    }

    int stages() {
        return lengths.length;
    }

    /** The stage buffer of chunk {@code k}. */
    MemorySegment buffer(long k) {
        return buffers.stage(stage(k));
    }

    private int stage(long k) {
        return (int) (k % lengths.length);
    }

    /**
     * Fills share {@code part} of {@code parts} of chunk {@code k} into its stage, inside {@code pipe}'s acquired
     * stage ({@link Source#fill}); part 0 writes the chunk's record.
     *
     * @return what the fill put in, and the source's failure, which this part's caller reports
     */
    Filled fill(long k, Pipeline pipe, int part, int parts) {
        Filled filled = source.fill(k, chunk, buffer(k), pipe, part, parts, stop);
        if (part == 0) {
            int s = stage(k);
            lengths[s] = filled.length();
            ends[s] = filled.end();
            failures[s] = filled.failure();
        }
        return filled;
    }

    /** The length of chunk {@code k}, read after its wait. */
    long length(long k) {
        return lengths[stage(k)];
    }

    /** Whether chunk {@code k} is the source's last. */
    boolean end(long k) {
        return ends[stage(k)];
    }

    /** The source's failure while filling chunk {@code k}, else null. */
    Throwable failure(long k) {
        return failures[stage(k)];
    }

    /**
     * What the one consumer of a {@link ChunkFeed} gets for chunk {@code k} once its wait returned: its length, or
     * -1 for an empty last chunk (the end).
     *
     * @throws ChunkFeed.SourceFailure when the source failed while filling it
     */
    long delivered(long k) {
        int s = stage(k);
        if (failures[s] != null) {
            throw new ChunkFeed.SourceFailure(failures[s]);
        }
        return ends[s] && lengths[s] == 0 ? -1 : lengths[s];
    }

    /**
     * Reads chunk {@code k} again, synchronously, after its copy failed with {@code failure}, where the source can
     * ({@link Source#readAgain}).
     */
    boolean readAgain(long k, Throwable failure) {
        return source.readAgain(failure, k, chunk, length(k), buffer(k));
    }

    /** Stops the feed: producers fill no further chunk, and a stream's read ends at its next look. */
    void stop() {
        stopped = true;
    }

    boolean stopped() {
        return stopped;
    }

    /**
     * Waits for and releases {@code count} committed chunks so that no copy into their stages is in flight (an
     * async copy ends, landed or failed, before its wait returns); their failures are nobody's to see. With
     * {@link Long#MAX_VALUE}, drains until no producer is left: the wait's {@link IllegalStateException}, which
     * the draining thread expects.
     */
    static void drain(Pipeline pipe, long count) {
        for (long drained = 0; drained < count; drained++) {
            try {
                pipe.consumerWait();
            } catch (StageFailedException ignored) {
                // a chunk the feed will not deliver: its failure is nobody's to see
            }
            pipe.consumerRelease();
        }
    }

    /** Counts {@code count} more users (threads about to start); each will {@link #leave()}. */
    void enter(int count) {
        users.addAndGet(count);
    }

    /**
     * A user is done with the buffers; the last frees them and closes the source. A failure to close a file opened
     * by path is thrown (to whoever left last).
     */
    void leave() {
        if (users.decrementAndGet() == 0) {
            try {
                buffers.free();
            } finally {
                source.close(null);
            }
        }
    }

    /**
     * Where share {@code part} of {@code parts} of {@code length} bytes starts: shares are multiples of
     * {@code alignment} but the last, as equal as that allows; part {@code parts} is the end.
     */
    static long shareStart(long length, int parts, int part, long alignment) {
        long units = (length + alignment - 1) / alignment;
        long start = units / parts * part + Math.min(part, units % parts);
        return Math.min(length, start * alignment);
    }
}
