package dev.jpipeline.prefetch;

import dev.jpipeline.CopyPolicy;
import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.StageFailedException;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.ThreadTeam;
import dev.jpipeline.copy.CopyEngine;
import dev.jpipeline.prefetch.Source.Filled;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BinaryOperator;
import java.util.function.Function;

/**
 * One run of the parallel form ({@link ParallelPrefetch#reduce}): a block-scope pipeline partitioned by producer
 * count, {@code producers} threads filling each stage and {@code consumers} threads computing on it, on a
 * {@link ThreadTeam} that the calling thread waits for. The stage records, the stop and the drain are the
 * {@link StageLedger}'s.
 *
 * <pre>
 * Producers  batch k (chunk k) goes to stage k mod stages. Producer p fills its share of the chunk
 *            (Source.fill: a positional source is split between the producers, each copying with memcpyAsync, on
 *            the copy engine or, when the machine has no core to spare, on the producer itself, ISSUER_COPIES; any
 *            other source has one producer, which issues the next piece of an Iterable or reads a stream
 *            synchronously). Producer 0 writes the stage's record (length, end, failure of the source) before
 *            its commit; the batch completes only with every producer's commit and every copy landed, so a
 *            consumer reads the record after its wait. A producer leaves after the batch marked end.
 * Consumers  every consumer waits for and releases every batch (a partitioned pipeline's consumers see every
 *            batch); whole chunks are dealt round-robin (consumer k mod C computes chunk k), or each consumer
 *            computes its share of every chunk. Each result goes to OrderedResults before the release.
 * Stopping   a failure (a copy's, the source's, the mapper's, the combiner's) is kept, the lowest chunk winning, and
 *            stops the ledger. A fill's failure (a read, a copy refused, or performed inline and faulting: a mapped
 *            file truncated under it) is in the record, reported by the consumers at its chunk; with several producers,
 *            the one whose share failed keeps it at once too, before it commits and leaves, so that its peers stop
 *            rather than find it gone. It is never an escape that would quit the pipeline with the stage acquired (the
 *            peers would report that quit). A failure's message never calls a user's toString unguarded
 *            (ChunkFailedException.describe), so that a broken exception cannot replace the failure and lose its chunk.
 *            Once stopped, producers leave at their next batch and quit; consumers drain (StageLedger.drain): they wait
 *            for and release every batch still committed (its copies land, as a wait needs them: copies can outlive
 *            their producer's quit) until no producer is left. A peer's wait that then can never complete (no producer
 *            or consumer left) throws IllegalStateException, which a stopping thread ignores; any other throwable of a
 *            thread is kept and stops the run too (no thread fails the team early). The caller gets the failure once
 *            every thread has ended.
 * Freeing    the buffers (and a file opened by path) are freed by the last of the threads and the caller to leave
 *            the ledger: normally the caller, after the team ended. An interrupt of the caller stops the run and
 *            returns at once (CancellationException, interrupt status kept) without waiting for a mapper or a
 *            stream read that blocks; the last thread to end frees them then.
 * </pre>
 *
 * Cross-thread state besides the ledger's: {@link #failure} and {@link #unexpected} are atomic (any thread keeps
 * one); {@link #chunks} is written by consumer 0 and read by the caller after the team has ended, which orders
 * the two; {@link OrderedResults} is guarded by its monitor.
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
    private final StageLedger ledger;
    private final CopyEngine engine;
    private final int producers;
    private final int consumers;
    /** Shares of a chunk are multiples of this; 0: whole chunks, dealt. */
    private final long shareAlignment;
    private final long chunk;
    private final Function<? super MemorySegment, ? extends R> mapper;
    private final R identity;
    private final OrderedResults<R> results;
    /** The lowest chunk's failure: atomic, since any thread may keep one while others read or replace it. */
    private final AtomicReference<ChunkFailedException> failure = new AtomicReference<>();
    /** A thread's throwable that is no chunk's failure (a bug, or a failure of the pipeline itself); the first wins. */
    private final AtomicReference<Throwable> unexpected = new AtomicReference<>();
    /** The chunks the source held, counted by consumer 0; plain: the caller reads it after the team has ended. */
    private long chunks;

    /** @param ledger the run's ledger, whose one user is the caller until {@link #run} counts the threads */
    ParallelRun(String source, StageLedger ledger, CopyEngine engine, int producers, int consumers,
                long shareAlignment, long chunk, R identity, Function<? super MemorySegment, ? extends R> mapper,
                BinaryOperator<R> combiner) {
        this.source = source;
        this.ledger = ledger;
        this.engine = engine;
        this.producers = producers;
        this.consumers = consumers;
        this.shareAlignment = shareAlignment;
        this.chunk = chunk;
        this.identity = identity;
        this.mapper = mapper;
        this.results = new OrderedResults<>(identity, combiner, ledger.stages(), shareAlignment == 0 ? 1 : consumers,
            source);
    }

    /** Runs the team and returns the combined result, or throws the lowest chunk's failure; frees the buffers. */
    R run() {
        ThreadTeam team;
        PipelineSharedState state;
        try {
            boolean spareCores = Runtime.getRuntime().availableProcessors() > ISSUER_COPIES * (producers + consumers);
            state = PipelineSharedState.builder(ThreadScope.BLOCK, ledger.stages()).copyEngine(engine)
                .copyPolicy(spareCores ? CopyPolicy.AUTO : CopyPolicy.ON_ISSUING_THREAD).build();
            team = ThreadTeam.ofPlatform(producers + consumers);
        } catch (RuntimeException | Error e) {
            ledger.leave();
            throw e;
        }
        ledger.enter(producers + consumers);
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
                    if (!(ledger.stopped() && t instanceof IllegalStateException)) {    // else: a peer gone, stopped
                        unexpected.compareAndSet(null, t);
                        ledger.stop();
                    }
                } finally {
                    ledger.leave();
                }
            });
        } catch (ThreadTeam.TeamFailure e) {
            ledger.stop();
            if (e.getCause() instanceof InterruptedException) {
                CancellationException cancelled = new CancellationException("the parallel prefetch of " + source
                    + " was interrupted: every thread stops at its next chunk, and the buffers are freed once they "
                    + "have all ended");
                cancelled.initCause(e);
                throw cancelled;
            }
            throw e;
        } finally {
            ledger.leave();
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

    /** Producer {@code producer} fills its share of every chunk until the source ends or the run stops. */
    private void produce(Pipeline pipe, int producer) {
        for (long k = 0; !ledger.stopped(); k++) {
            pipe.producerAcquire();
            Filled filled = ledger.fill(k, pipe, producer, producers);
            if (producers > 1 && filled.failure() != null) {
                // kept before this producer commits and leaves (a failed fill is its last), so that its peers stop
                // before they find it gone; it never escapes, which would quit the pipeline with the stage acquired
                fail(new ChunkFailedException(k, k * chunk, "reading", source, filled.failure()));
            }
            pipe.producerCommit();
            if (filled.end()) {
                return;
            }
        }
    }

    private void consume(Pipeline pipe, int consumer) {
        long position = 0;
        for (long k = 0; !ledger.stopped(); k++) {
            try {
                pipe.consumerWait();
            } catch (StageFailedException e) {
                fail(new ChunkFailedException(k, position, "reading", source, e.getCause()));
                pipe.consumerRelease();
                break;
            }
            if (ledger.failure(k) != null) {
                fail(new ChunkFailedException(k, position, "reading", source, ledger.failure(k)));
                pipe.consumerRelease();
                break;
            }
            if (ledger.stopped()) {     // a producer's copy was refused (or a peer failed): the stage holds no chunk
                pipe.consumerRelease();
                break;
            }
            long length = ledger.length(k);
            boolean end = ledger.end(k);
            boolean isChunk = length > 0 || !end;           // an empty last batch is no chunk
            if (isChunk) {
                try {
                    compute(ledger.buffer(k), k, position, length, consumer);
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
        if (ledger.stopped()) {
            StageLedger.drain(pipe, Long.MAX_VALUE);        // until no producer is left: IllegalStateException
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
        long from = StageLedger.shareStart(length, consumers, consumer, shareAlignment);
        long to = StageLedger.shareStart(length, consumers, consumer + 1, shareAlignment);
        R r = to > from ? apply(buffer, from, to - from, k, position) : identity;
        results.put(k * consumers + consumer, position, r);
    }

    /** The mapper on a view of {@code buffer}'s bytes that ends with the call. */
    @SuppressWarnings("restricted")   // reinterpret: a view that ends with the mapper's call
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
        ledger.stop();
    }
}
