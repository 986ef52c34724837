package dev.jpipeline.prefetch;

import dev.jpipeline.Pipeline;
import dev.jpipeline.StageFailedException;
import dev.jpipeline.copy.CopyEngine;
import java.lang.foreign.MemorySegment;

/**
 * A feed over a source that copies ({@link Source#blocks()} false: a positional source, or an Iterable's segments):
 * the iterating thread's own thread-scope pipeline ({@code cuda::make_pipeline()}), kept {@code stages - 1} chunks
 * ahead of the one the iteration holds. One thread does everything, so nothing here is shared.
 *
 * <pre>
 *   chunks [next, issued) are issued: acquired, filled (their copies issued) and committed, each with its record in
 *   the ledger. At most `stages` are issued and not released, so a buffer is refilled only after its chunk was
 *   released.
 *   open      issue `stages` chunks (fewer if the source ends)
 *   advance   release the held chunk and issue one more into its buffer (the refill overlaps what follows),
 *             then consumer_wait for chunk next: its copy has landed, or failed (StageFailedException: a file opened
 *             here is read again where an interrupt closed it, else the chunk fails); then its record: the source's
 *             failure is thrown, an empty last chunk is the end
 *   close     release the held chunk, drain every issued one (their copies end: file reads and memory copies), quit,
 *             then leave the ledger, which frees the buffers and closes the source: no copy can still write
 * </pre>
 *
 * A source's own failure while filling (its iterator threw) is kept with the chunk it was filling, which is
 * committed as it stands, and surfaces when the iteration reaches that chunk: every earlier chunk is delivered
 * first. The source then issues nothing more.
 */
final class AheadFeed implements ChunkFeed {

    private final StageLedger ledger;
    private final Pipeline pipe;
    /** Chunks issued (committed). */
    private long issued;
    /** The next chunk to wait for. */
    private long next;
    /** Whether chunk next - 1 was waited for and is not released yet. */
    private boolean holding;
    /** Whether the source has nothing more to issue (its last chunk, or a failed one, was issued). */
    private boolean sourceDone;
    /** Whether the iteration has reached the source's last chunk. */
    private boolean ended;

    /** Issues the first chunks; on a failure, closes the feed (leaving the ledger) and throws. */
    AheadFeed(StageLedger ledger, CopyEngine engine) {
        this.ledger = ledger;
        this.pipe = Pipeline.make(engine);
        try {
            for (int s = 0; s < ledger.stages(); s++) {
                issue();
            }
        } catch (RuntimeException | Error e) {
            close();
            throw e;
        }
    }

    /** Issues the source's next chunk into the free stage, if the source has one. */
    private void issue() {
        if (sourceDone) {
            return;
        }
        pipe.producerAcquire();
        sourceDone = ledger.fill(issued, pipe, 0, 1).end();
        pipe.producerCommit();
        issued++;
    }

    @Override
    public long advance() {
        if (holding) {
            holding = false;
            pipe.consumerRelease();
            issue();
        }
        if (ended) {
            return -1;
        }
        long k = next++;
        holding = true;
        try {
            pipe.consumerWait();
        } catch (StageFailedException e) {
            // a file opened here, closed by an interrupt of this thread inside a read it performed: read it again
            if (!ledger.readAgain(k, e.getCause())) {
                ended = true;
                throw new SourceFailure(e.getCause());
            }
        }
        ended = ledger.end(k);
        return ledger.delivered(k);
    }

    @Override
    public MemorySegment buffer() {
        return ledger.buffer(next - 1);
    }

    @Override
    public void close() {
        try {
            if (holding) {
                holding = false;
                pipe.consumerRelease();
            }
            StageLedger.drain(pipe, issued - next);     // the copies end, landed or failed: nothing writes any more
            next = issued;
            pipe.quit();
        } finally {
            ledger.leave();
        }
    }
}
