package dev.jpipeline.prefetch;

import java.lang.foreign.MemorySegment;

/**
 * What {@link Chunks} iterates over: stage buffers that a pipeline fills ahead of the iteration. A feed is used by
 * the thread that opened it only.
 */
sealed interface ChunkFeed permits AheadFeed, ReaderFeed {

    /**
     * Releases the current chunk's stage (if any) so that it can be refilled, then waits for the next chunk.
     *
     * @return the next chunk's length in bytes, its bytes at the start of {@link #buffer()}; -1 at the end
     * @throws SourceFailure when reading the next chunk failed (the feed then ends)
     */
    long advance();

    /** The buffer holding the current chunk. */
    MemorySegment buffer();

    /**
     * Ends the feed: releases what it holds and frees the buffers once nothing can write into them. Waits for
     * copies in flight on the copy engine (they end), never for a source that may not answer.
     */
    void close();

    /**
     * A chunk's read failed, with its original failure as the cause: {@link Chunks} turns it into a
     * {@link ChunkFailedException} that names the chunk.
     */
    final class SourceFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        SourceFailure(Throwable cause) {
            super(cause);
        }
    }
}
