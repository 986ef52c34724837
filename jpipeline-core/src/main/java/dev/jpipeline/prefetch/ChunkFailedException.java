package dev.jpipeline.prefetch;

/**
 * Reading a chunk failed (an I/O error, the source ending early, a source's own exception), or, in the parallel
 * form, computing on it or combining its result did: thrown at that chunk, with the original failure as the cause.
 * The iteration delivered every earlier chunk intact and ends here; the parallel form stopped every thread and
 * reports the lowest chunk that failed. No CUDA counterpart (the pipeline's own form is {@link dev.jpipeline.StageFailedException},
 * which names a stage and a batch rather than a chunk and its place in the source).
 */
public final class ChunkFailedException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** The chunk's index, counted from 0. */
    private final long chunk;
    /** Where the chunk starts in the source, in bytes from the first byte iterated. */
    private final long position;

    /**
     * A failure of chunk {@code chunk}, which starts {@code position} bytes into the source.
     *
     * @param chunk    the chunk's index, from 0
     * @param position the chunk's first byte, counted from the source's first iterated byte
     * @param doing    what failed, for the message: "reading", "computing on", "combining the result of"
     * @param source   the source's name, for the message
     * @param cause    what failed
     */
    ChunkFailedException(long chunk, long position, String doing, String source, Throwable cause) {
        super(doing + " chunk " + chunk + " (from byte " + position + ") of " + source + " failed: " + describe(cause),
            cause);
        this.chunk = chunk;
        this.position = position;
    }

    /**
     * {@code failure.toString()}, or its class name where that throws (a user's exception may be broken): a message
     * built from a failure must not fail itself, or the failure it reports (and its chunk) would be lost to it.
     */
    static String describe(Throwable failure) {
        try {
            return String.valueOf(failure);
        } catch (RuntimeException | Error broken) {
            return failure.getClass().getName() + " (whose toString() threw " + broken.getClass().getName() + ")";
        }
    }

    /**
     * The index of the chunk that failed.
     *
     * @return the chunk's index, counted from 0
     */
    public long chunk() {
        return chunk;
    }

    /**
     * Where the failed chunk starts.
     *
     * @return its first byte's offset from the source's first iterated byte
     */
    public long position() {
        return position;
    }
}
