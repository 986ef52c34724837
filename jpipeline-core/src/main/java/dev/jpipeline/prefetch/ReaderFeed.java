package dev.jpipeline.prefetch;

import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineRole;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.ThreadTeam;
import java.lang.foreign.MemorySegment;
import java.time.Duration;

/**
 * A feed over a source whose reads block ({@link Source#blocks()}: a {@code ReadableByteChannel}, an
 * {@code InputStream}, a file sized only at its end): a reader thread is the producer of a block-scope pipeline by
 * role, the iterating thread its consumer. Reads are blocking and of unknown length, so they cannot go to the copy
 * engine, whose workers every pipeline shares.
 *
 * <pre>
 *   reader     loop: producer_acquire; stop if the ledger is stopped; fill the stage (read until it is full, the
 *              source ends, or it fails), which writes its record; producer_commit; stop after the chunk marked
 *              end. Then quit, and leave the ledger.
 *   iteration  advance: release the held stage, consumer_wait for the next, read its record (written before the
 *              commit, read after the wait): its failure is thrown, an empty last chunk is the end.
 *   close      stop the ledger, release the held stage and quit at once, without waiting for the reader, which
 *              may be blocked in a read that never returns (a terminal, a pipe whose writer is gone quiet). The
 *              reader stops at its next acquire (which then finds no consumer) or commit, or its fill at its next
 *              read. The ledger has two users, the iteration and the reader: whichever leaves last frees the buffers
 *              and closes a file opened here.
 * </pre>
 *
 * The source is never closed while the reader may read it, and its thread never interrupted: interrupting a thread
 * in a read of an interruptible channel would close the user's channel.
 */
final class ReaderFeed implements ChunkFeed {

    private final StageLedger ledger;
    private final Pipeline pipe;
    /** Chunks waited for. */
    private long next;
    private boolean holding;
    private boolean ended;

    /** Starts the reader thread, which the ledger counts as its second user. */
    ReaderFeed(StageLedger ledger, String name) {
        this.ledger = ledger;
        // The reader may block in a read for as long as the source likes: that is not a hang of the pipeline.
        PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, ledger.stages())
            .detectDeadlocks(Duration.ZERO).build();
        ThreadTeam pair = ThreadTeam.ofPlatform(2);
        Thread reader = Thread.ofPlatform().daemon().name("jpipeline-prefetch-reader (" + name + ")")
            .unstarted(() -> read(Pipeline.make(pair.member(1), state, PipelineRole.PRODUCER)));
        ledger.enter(1);
        reader.start();
        this.pipe = Pipeline.make(pair.member(0), state, PipelineRole.CONSUMER);
    }

    /** The reader thread's loop (see the class comment). */
    private void read(Pipeline producer) {
        try (producer) {
            for (long k = 0; ; k++) {
                producer.producerAcquire();     // throws once the iteration has quit: no consumer is left
                if (ledger.stopped()) {
                    return;
                }
                boolean end = ledger.fill(k, producer, 0, 1).end();
                producer.producerCommit();
                if (end) {
                    return;
                }
            }
        } catch (IllegalStateException afterClose) {
            if (!ledger.stopped()) {
                throw afterClose;
            }
        } finally {
            ledger.leave();
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
        long k = next++;
        pipe.consumerWait();
        holding = true;
        ended = ledger.end(k);
        return ledger.delivered(k);
    }

    @Override
    public MemorySegment buffer() {
        return ledger.buffer(next - 1);
    }

    @Override
    public void close() {
        ledger.stop();
        try {
            if (holding) {
                holding = false;
                pipe.consumerRelease();
            }
            pipe.quit();
        } finally {
            ledger.leave();
        }
    }
}
