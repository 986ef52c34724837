package dev.jpipeline.prefetch;

import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineRole;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.ThreadTeam;
import java.io.Closeable;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.channels.ReadableByteChannel;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A feed over a source that can only be read in order (a {@code ReadableByteChannel}, an {@code InputStream}):
 * a reader thread is the producer of a block-scope pipeline by role, the iterating thread its consumer. Reads are
 * blocking and of unknown length, so they cannot go to the copy engine, whose workers every pipeline shares.
 *
 * <pre>
 *   reader     loop: producer_acquire; stop if the iteration closed; read into the stage until it is full, the
 *              source ends, or it fails; record length, end and failure for the stage; producer_commit; stop
 *              after the stage that ended or failed. Then quit.
 *   iteration  advance: release the held stage, consumer_wait for the next, read its record (published by the
 *              commit, seen after the wait): its failure is thrown, an empty last stage is the end.
 *   close      the iteration quits at once and does not wait for the reader, which may be blocked in a read
 *              that never returns (a terminal, a pipe whose writer is gone quiet). The reader stops at its next
 *              acquire (which then finds no consumer) or commit. The buffers are freed by whichever side ends
 *              last (owners counts down from 2).
 * </pre>
 *
 * The source is never closed and its thread never interrupted: interrupting a thread in a read of an
 * interruptible channel would close the user's channel.
 */
final class ReaderFeed implements ChunkFeed {

    private final ReadableByteChannel source;
    private final StageBuffers buffers;
    private final Pipeline pipe;
    /** Each stage's record, written by the reader before its commit, read by the iteration after its wait. */
    private final long[] lengths;
    private final boolean[] ends;
    private final Throwable[] failures;
    /** Set by close: the reader stops at its next look. */
    private volatile boolean closed;
    /** Sides still using the buffers: the last to end frees them. */
    private final AtomicInteger owners = new AtomicInteger(2);
    /** A file opened for this feed (a file sized only at its end), closed when the buffers are freed; or null. */
    private final Closeable owned;
    /** Chunks waited for. */
    private long next;
    private boolean holding;
    private boolean ended;

    /** @param owned a file opened for this feed, closed with the buffers; null for the user's stream */
    ReaderFeed(ReadableByteChannel source, StageBuffers buffers, String name, Closeable owned) {
        this.source = source;
        this.owned = owned;
        this.buffers = buffers;
        int stages = buffers.count();
        this.lengths = new long[stages];
        this.ends = new boolean[stages];
        this.failures = new Throwable[stages];
        // The reader may block in a read for as long as the source likes: that is not a hang of the pipeline.
        PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, stages)
            .detectDeadlocks(Duration.ZERO).build();
        ThreadTeam pair = ThreadTeam.ofPlatform(2);
        Thread.ofPlatform().daemon().name("jpipeline-prefetch-reader (" + name + ")")
            .start(() -> read(Pipeline.make(pair.member(1), state, PipelineRole.PRODUCER)));
        this.pipe = Pipeline.make(pair.member(0), state, PipelineRole.CONSUMER);
    }

    /** The reader thread's loop (see the class comment). */
    private void read(Pipeline producer) {
        try (producer) {
            for (long k = 0; ; k++) {
                producer.producerAcquire();     // throws once the iteration has quit: no consumer is left
                if (closed) {
                    return;
                }
                int stage = (int) (k % lengths.length);
                fill(stage);
                producer.producerCommit();
                if (ends[stage]) {
                    return;
                }
            }
        } catch (IllegalStateException afterClose) {
            if (!closed) {
                throw afterClose;
            }
        } finally {
            release();
        }
    }

    /** Reads into stage {@code stage} until it is full or the source ends or fails, and records the outcome. */
    private void fill(int stage) {
        try {
            StreamReads.Filled filled = StreamReads.fill(source, buffers.stage(stage), () -> closed);
            lengths[stage] = filled.length();
            ends[stage] = filled.end();
            failures[stage] = null;
        } catch (IOException | RuntimeException | Error e) {       // the source's own Error is its chunk's failure
            lengths[stage] = 0;
            ends[stage] = true;
            failures[stage] = e;
        }
    }

    @Override
    public long advance() {
        if (holding) {
            holding = false;
            pipe.consumerRelease();
        }
        if (ended) {
            return -1;
        }
        int stage = (int) (next++ % lengths.length);
        pipe.consumerWait();
        holding = true;
        ended = ends[stage];
        if (failures[stage] != null) {
            throw new SourceFailure(failures[stage]);
        }
        return ended && lengths[stage] == 0 ? -1 : lengths[stage];
    }

    @Override
    public MemorySegment buffer() {
        return buffers.stage((int) ((next - 1) % lengths.length));
    }

    @Override
    public void close() {
        closed = true;
        try {
            if (holding) {
                holding = false;
                pipe.consumerRelease();
            }
            pipe.quit();
        } finally {
            release();
        }
    }

    /** One side is done with the buffers; the second frees them. */
    private void release() {
        if (owners.decrementAndGet() == 0) {
            try {
                buffers.free();
            } finally {
                Prefetch.closeOwned(owned, null);
            }
        }
    }
}
