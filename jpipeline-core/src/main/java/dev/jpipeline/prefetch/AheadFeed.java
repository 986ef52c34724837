package dev.jpipeline.prefetch;

import dev.jpipeline.Pipeline;
import dev.jpipeline.StageFailedException;
import dev.jpipeline.copy.CopyEngine;
import java.lang.foreign.MemorySegment;

/**
 * A feed over a {@link PieceSource}: the iterating thread's own thread-scope pipeline
 * ({@code cuda::make_pipeline()}), kept {@code stages - 1} chunks ahead of the one the iteration holds.
 *
 * <pre>
 *   chunks [next, issued) are issued: acquired, their copy issued on the copy engine, committed; chunk k is in
 *   stage buffer k mod stages. At most `stages` are issued and not released, so a buffer is refilled only after
 *   its chunk was released.
 *   open      issue `stages` chunks (fewer if the source ends)
 *   advance   release the held chunk and issue one more into its buffer (the refill overlaps what follows),
 *             then consumer_wait for chunk next: its copy has landed, or failed (StageFailedException)
 *   close     wait for and release every issued chunk (their copies end: file reads and memory copies), quit,
 *             then free the buffers: no copy can still write into them
 * </pre>
 *
 * A source's own failure while issuing (its iterator threw) is kept with the chunk it was issuing, which is
 * committed as it stands, and surfaces when the iteration reaches that chunk: every earlier chunk is delivered
 * first. The source then issues nothing more.
 */
final class AheadFeed implements ChunkFeed {

    private final PieceSource source;
    private final StageBuffers buffers;
    private final Pipeline pipe;
    /** The length of each issued chunk, by stage. */
    private final long[] lengths;
    /** The source offset of each issued chunk, by stage (for a read again, see PieceSource.FilePieces#reread). */
    private final long[] offsets;
    /** Bytes issued so far: the next chunk's source offset. */
    private long issuedBytes;
    /** The source's failure while issuing a stage's chunk, by stage, else null. */
    private final Throwable[] failures;
    /** Chunks issued (committed). */
    private long issued;
    /** The next chunk to wait for. */
    private long next;
    /** Whether chunk next - 1 was waited for and is not released yet. */
    private boolean holding;
    /** Whether the source has nothing more to issue (it ended, or failed). */
    private boolean sourceDone;

    AheadFeed(PieceSource source, StageBuffers buffers, CopyEngine engine) {
        this.source = source;
        this.buffers = buffers;
        this.lengths = new long[buffers.count()];
        this.offsets = new long[buffers.count()];
        this.failures = new Throwable[buffers.count()];
        this.pipe = Pipeline.make(engine);
        try {
            for (int s = 0; s < buffers.count(); s++) {
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
        Throwable failure = null;              // the source's own, an Error included: its chunk's failure
        boolean more;
        try {
            more = source.more();
        } catch (RuntimeException | Error e) {
            more = true;
            failure = e;
        }
        if (!more) {
            sourceDone = true;
            return;
        }
        int stage = (int) (issued % lengths.length);
        long length = 0;
        pipe.producerAcquire();
        if (failure == null) {
            try {
                length = source.issue(buffers.stage(stage), pipe);
            } catch (RuntimeException | Error e) {
                failure = e;
            }
        }
        pipe.producerCommit();
        lengths[stage] = length;
        offsets[stage] = issuedBytes;
        issuedBytes += length;
        failures[stage] = failure;
        issued++;
        sourceDone = failure != null;
    }

    @Override
    public long advance() {
        if (holding) {
            holding = false;
            pipe.consumerRelease();
            issue();
        }
        if (next == issued) {
            return -1;
        }
        int stage = (int) (next++ % lengths.length);
        holding = true;
        try {
            pipe.consumerWait();
        } catch (StageFailedException e) {
            // a file opened here, closed by an interrupt of this thread inside a read it performed: read it again
            if (!(source instanceof PieceSource.FilePieces file)
                || !file.reread(e.getCause(), buffers.stage(stage), offsets[stage], lengths[stage])) {
                sourceDone = true;
                throw new SourceFailure(e.getCause());
            }
        }
        if (failures[stage] != null) {
            throw new SourceFailure(failures[stage]);
        }
        return lengths[stage];
    }

    @Override
    public MemorySegment buffer() {
        return buffers.stage((int) ((next - 1) % lengths.length));
    }

    @Override
    public void close() {
        try {
            if (holding) {
                holding = false;
                pipe.consumerRelease();
            }
            for (; next < issued; next++) {
                try {
                    pipe.consumerWait();            // the copy has ended, landed or failed: nothing writes any more
                } catch (StageFailedException ignored) {
                    // the iteration ended before this chunk: its failure is nobody's to see
                }
                pipe.consumerRelease();
            }
            pipe.quit();
        } finally {
            try {
                source.close();
            } finally {
                buffers.free();
            }
        }
    }
}
