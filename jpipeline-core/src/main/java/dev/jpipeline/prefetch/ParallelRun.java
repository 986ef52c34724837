package dev.jpipeline.prefetch;

import dev.jpipeline.CopyPolicy;
import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.StageFailedException;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.ThreadTeam;
import dev.jpipeline.copy.CopyEngine;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.ReadableByteChannel;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BinaryOperator;
import java.util.function.Function;

/**
 * One run of the parallel form ({@link ParallelPrefetch#reduce}): a block-scope pipeline partitioned by producer
 * count, {@code producers} threads filling each stage and {@code consumers} threads computing on it, on a
 * {@link ThreadTeam} that the calling thread waits for.
 *
 * <pre>
 * Producers  batch k (chunk k) goes to stage k mod stages. A source with positions is split: producer p copies
 *            its share of the chunk (memcpyAsync: on the copy engine, or on the producer itself when the machine has
 *            no core to spare, ISSUER_COPIES). Any other source has one producer, which
 *            issues the next piece of an Iterable, or reads a stream synchronously. Producer 0 writes the stage's
 *            record (length, end, failure of the source) before its commit; the batch completes only with every
 *            producer's commit and every copy landed, so a consumer reads the record after its wait.
 *            A source of unknown size ends with a batch marked end (empty when the end was found only then).
 * Consumers  every consumer waits for and releases every batch (a partitioned pipeline's consumers see every
 *            batch); whole chunks are dealt round-robin (consumer k mod C computes chunk k), or each consumer
 *            computes its share of every chunk. Each result goes to OrderedResults before the release.
 * Stopping   a failure (a copy's, the source's, the mapper's, the combiner's) is kept, the lowest chunk winning,
 *            and sets `stop`. A copy that throws on its producer (refused, or performed inline and faulting: a
 *            mapped file truncated under it) is its chunk's failure, kept before the producer commits, never an
 *            escape that would quit the pipeline with the stage acquired (its peers would report that quit). A
 *            failure's message never calls a user's toString unguarded (ChunkFailedException.describe), so
 *            that a broken exception cannot replace the failure and lose its chunk. Once stopped, producers
 *            leave at their next batch and quit; consumers drain: they wait for and release every batch still
 *            committed (its copies land, as a wait needs them: copies can outlive their
 *            producer's quit) until no producer is left. A peer's wait that then can never complete (no producer
 *            or consumer left) throws IllegalStateException, which a stopping thread ignores; any other throwable
 *            of a thread is kept and stops the run too (no thread fails the team early). The caller gets the
 *            failure once every thread has ended.
 * Freeing    the buffers (and a file opened by path) are freed by the last of the threads and the caller to leave
 *            (users counts down): normally the caller, after the team ended. An interrupt of the caller stops the
 *            run and returns at once (CancellationException, interrupt status kept) without waiting for a mapper
 *            or a stream read that blocks; the last thread to end frees them then.
 * </pre>
 */
final class ParallelRun<R> {

    /** The calling thread waits for the team without a time limit: a run takes as long as its source. */
    private static final Duration NO_LIMIT = Duration.ofDays(365L * 100);
    /**
     * Processors per run thread at or below which producers copy and read themselves (CopyPolicy.AUTO's rule for
     * memory copies, here for file reads too): a producer only waits for its copies, and a copy worker would be
     * one more busy thread on a machine without a core to spare (docs/performance.md section 17).
     */
    private static final int ISSUER_COPIES = 2;

    private final String source;
    private final PieceSource pieces;
    private final ReadableByteChannel stream;
    private final StageBuffers buffers;
    private final CopyEngine engine;
    private final int producers;
    private final int consumers;
    /** Shares of a chunk are multiples of this; 0: whole chunks, dealt. */
    private final long shareAlignment;
    private final long chunk;
    /** The number of batches when the size is known, else -1. */
    private final long batches;
    private final Function<? super MemorySegment, ? extends R> mapper;
    private final R identity;
    private final OrderedResults<R> results;
    /** Each stage's record, written by producer 0 before its commit, read by the consumers after their wait. */
    private final long[] lengths;
    private final boolean[] ends;
    private final Throwable[] failures;
    private final AtomicReference<ChunkFailedException> failure = new AtomicReference<>();
    /** A thread's throwable that is no chunk's failure (a bug, or a failure of the pipeline itself). */
    private final AtomicReference<Throwable> unexpected = new AtomicReference<>();
    private volatile boolean stop;
    /** Frees the buffers and closes a file opened by path: run by the last of {@link #users} to leave. */
    private final Runnable free;
    /** The threads and the caller still using the buffers. */
    private final AtomicInteger users;
    /** The chunks the source held, counted by consumer 0 (read after the team has ended). */
    private long chunks;

    ParallelRun(String source, PieceSource pieces, ReadableByteChannel stream, StageBuffers buffers, CopyEngine engine,
                int producers, int consumers, long shareAlignment, long chunk, R identity,
                Function<? super MemorySegment, ? extends R> mapper, BinaryOperator<R> combiner, Runnable free) {
        this.source = source;
        this.free = free;
        this.users = new AtomicInteger(producers + consumers + 1);
        this.pieces = pieces;
        this.stream = stream;
        this.buffers = buffers;
        this.engine = engine;
        this.producers = producers;
        this.consumers = consumers;
        this.shareAlignment = shareAlignment;
        this.chunk = chunk;
        this.batches = pieces instanceof PieceSource.Positional positional
            ? (positional.size() + chunk - 1) / chunk : -1;
        this.identity = identity;
        this.mapper = mapper;
        int stages = buffers.count();
        this.results = new OrderedResults<>(identity, combiner, stages, shareAlignment == 0 ? 1 : consumers, source);
        this.lengths = new long[stages];
        this.ends = new boolean[stages];
        this.failures = new Throwable[stages];
    }

    /** Runs the team and returns the combined result, or throws the lowest chunk's failure; frees the buffers. */
    R run() {
        ThreadTeam team;
        PipelineSharedState state;
        try {
            boolean spareCores = Runtime.getRuntime().availableProcessors() > ISSUER_COPIES * (producers + consumers);
            state = PipelineSharedState.builder(ThreadScope.BLOCK, buffers.count()).copyEngine(engine)
                .copyPolicy(spareCores ? CopyPolicy.AUTO : CopyPolicy.ON_ISSUING_THREAD).build();
            team = ThreadTeam.ofPlatform(producers + consumers);
        } catch (RuntimeException | Error e) {
            free.run();
            throw e;
        }
        try {
            team.run(NO_LIMIT, group -> {
                int rank = group.threadRank();
                try (Pipeline pipe = Pipeline.make(group, state, producers)) {
                    if (rank < producers) {
                        produce(pipe, rank);
                    } else {
                        consume(pipe, rank - producers);
                    }
                } catch (Throwable t) {
                    if (!(stop && t instanceof IllegalStateException)) {     // else: a peer gone, after a stop
                        unexpected.compareAndSet(null, t);
                        stop = true;
                    }
                } finally {
                    leave();
                }
            });
        } catch (ThreadTeam.TeamFailure e) {
            stop = true;
            if (e.getCause() instanceof InterruptedException) {
                CancellationException cancelled = new CancellationException("the parallel prefetch of " + source
                    + " was interrupted: every thread stops at its next chunk, and the buffers are freed once they "
                    + "have all ended");
                cancelled.initCause(e);
                throw cancelled;
            }
            throw e;
        } finally {
            leave();
        }
        ChunkFailedException failed = failure.get();
        Throwable other = unexpected.get();
        if (failed != null) {
            if (other != null) {
                failed.addSuppressed(other);
            }
            throw failed;
        }
        if (other instanceof RuntimeException e) {
            throw e;
        }
        if (other instanceof Error e) {
            throw e;
        }
        if (other != null) {
            throw new IllegalStateException("the parallel prefetch of " + source + " failed: "
                + ChunkFailedException.describe(other), other);
        }
        long expected = chunks * (shareAlignment == 0 ? 1 : consumers);
        if (results.folded() != expected) {
            throw new IllegalStateException("the parallel prefetch of " + source + " folded " + results.folded()
                + " results of " + expected + " (" + chunks + " chunks): a result was lost");
        }
        return results.result();
    }

    /** A thread, or the caller, is done with the buffers; the last frees them. */
    private void leave() {
        if (users.decrementAndGet() == 0) {
            free.run();
        }
    }

    private void produce(Pipeline pipe, int producer) {
        for (long k = 0; (batches < 0 || k < batches) && !stop; k++) {
            int stage = (int) (k % lengths.length);
            MemorySegment buffer = buffers.stage(stage);
            pipe.producerAcquire();
            boolean end;
            if (pieces instanceof PieceSource.Positional positional) {
                long position = k * chunk;
                long length = Math.min(chunk, positional.size() - position);
                long from = shareStart(length, producers, producer, 1);
                long to = shareStart(length, producers, producer + 1, 1);
                if (to > from) {
                    try {
                        positional.copy(buffer.asSlice(from, to - from), position + from, to - from, pipe);
                    } catch (RuntimeException | Error e) {
                        // refused (a source segment freed), or failed inline on this thread (a mapped file truncated
                        // under it faults: InternalError): the chunk's failure, kept before this producer commits.
                        // Letting an Error escape would quit the pipeline with the stage acquired, and the peers would
                        // report that quit, the real cause only suppressed in it.
                        fail(new ChunkFailedException(k, position, "reading", source, e));
                    }
                }
                end = k == batches - 1;
                if (producer == 0) {
                    record(stage, length, end, null);
                }
            } else {
                end = fillInOrder(stage, buffer, pipe);
            }
            pipe.producerCommit();
            if (end) {
                return;
            }
        }
    }

    /** The one producer of a source without positions fills stage {@code stage}; whether the source ended. */
    private boolean fillInOrder(int stage, MemorySegment buffer, Pipeline pipe) {
        try {
            if (stream != null) {
                StreamReads.Filled filled = StreamReads.fill(stream, buffer, () -> stop);
                record(stage, filled.length(), filled.end(), null);
                return filled.end();
            }
            if (!pieces.more()) {
                record(stage, 0, true, null);
                return true;
            }
            record(stage, pieces.issue(buffer, pipe), false, null);
            return false;
        } catch (IOException | RuntimeException | Error e) {       // the source's own Error is its chunk's failure
            record(stage, 0, true, e);
            return true;
        }
    }

    private void record(int stage, long length, boolean end, Throwable sourceFailure) {
        lengths[stage] = length;
        ends[stage] = end;
        failures[stage] = sourceFailure;
    }

    private void consume(Pipeline pipe, int consumer) {
        long position = 0;
        for (long k = 0; (batches < 0 || k < batches) && !stop; k++) {
            int stage = (int) (k % lengths.length);
            try {
                pipe.consumerWait();
            } catch (StageFailedException e) {
                fail(new ChunkFailedException(k, position, "reading", source, e.getCause()));
                pipe.consumerRelease();
                break;
            }
            long length = lengths[stage];
            boolean end = ends[stage] || k == batches - 1;
            if (failures[stage] != null) {
                fail(new ChunkFailedException(k, position, "reading", source, failures[stage]));
                pipe.consumerRelease();
                break;
            }
            if (stop) {                 // a producer's copy was refused (or a peer failed): the stage holds no chunk
                pipe.consumerRelease();
                break;
            }
            boolean isChunk = length > 0 || !ends[stage];       // an empty end batch is no chunk
            if (isChunk) {
                try {
                    compute(buffers.stage(stage), k, position, length, consumer);
                } catch (ChunkFailedException e) {
                    fail(e);
                    pipe.consumerRelease();
                    break;
                }
            }
            pipe.consumerRelease();
            position += length;
            if (consumer == 0 && isChunk) {
                chunks = k + 1;
            }
            if (end) {
                return;
            }
        }
        if (stop) {
            drain(pipe);
        }
    }

    /**
     * After a stop: waits for and releases every batch still committed, so that no copy is in flight once the
     * thread ends, until no producer is left (the wait's IllegalStateException, which the stopping thread ignores).
     */
    private void drain(Pipeline pipe) {
        while (true) {
            try {
                pipe.consumerWait();
            } catch (StageFailedException ignored) {
                // a chunk after the stop: its failure is nobody's to see
            }
            pipe.consumerRelease();
        }
    }

    /** Consumer {@code consumer}'s work on chunk {@code k}: its result, or its share's, goes to the results. */
    private void compute(MemorySegment buffer, long k, long position, long length, int consumer) {
        if (shareAlignment == 0) {
            if (k % consumers == consumer) {
                results.put(k, position, apply(buffer, 0, length, k, position));
            }
            return;
        }
        long from = shareStart(length, consumers, consumer, shareAlignment);
        long to = shareStart(length, consumers, consumer + 1, shareAlignment);
        R r = to > from ? apply(buffer, from, to - from, k, position) : identity;
        results.put(k * consumers + consumer, position, r);
    }

    /** The mapper on a view of {@code buffer}'s bytes that ends with the call. */
    private R apply(MemorySegment buffer, long from, long length, long k, long position) {
        try {
            StageBuffers.alive(buffer, source);
        } catch (IllegalStateException e) {
            throw new ChunkFailedException(k, position, "reading", source, e);
        }
        try (Arena scope = Arena.ofConfined()) {
            return mapper.apply(buffer.asSlice(from, length).reinterpret(scope, null));
        } catch (RuntimeException | Error e) {
            throw new ChunkFailedException(k, position, "computing on", source, e);
        }
    }

    /** Keeps the failure of the lowest chunk, and stops every thread. */
    private void fail(ChunkFailedException e) {
        failure.accumulateAndGet(e, (kept, next) -> kept == null || next.chunk() < kept.chunk() ? next : kept);
        stop = true;
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
