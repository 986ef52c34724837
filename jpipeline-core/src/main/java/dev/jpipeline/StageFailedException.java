package dev.jpipeline;

/**
 * A copy into a pipeline stage failed (for example a file read hit an I/O error): thrown by the consumer's wait
 * for that stage, with the copy's failure as the cause. No CUDA counterpart (device copies cannot fail this
 * way).
 *
 * <p>The stage's phase did complete, so nothing hangs: the consumer still owns the stage and should release it
 * (or quit); later stages are unaffected. Consumers of a multi-consumer pipeline each get the exception.
 */
public final class StageFailedException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** The stage whose copy failed, or -1. */
    private final int stage;
    /** The batch whose copy failed. */
    private final long batch;

    /**
     * A failure of batch {@code batch} in {@code stage}.
     *
     * @param stage the stage, or -1 for a thread-scope pipeline (which has no fixed stages)
     * @param batch the batch, counted from 0 over the pipeline's life
     * @param cause the copy's failure
     */
    public StageFailedException(int stage, long batch, Throwable cause) {
        super("a copy into " + (stage < 0 ? "" : "stage " + stage + " (") + "batch " + batch + (stage < 0 ? "" : ")")
            + " failed: " + cause, cause);
        this.stage = stage;
        this.batch = batch;
    }

    /**
     * The stage whose copy failed, or -1 for a thread-scope pipeline.
     *
     * @return the stage index, or -1
     */
    public int stage() {
        return stage;
    }

    /**
     * The batch (counted from 0 over the pipeline's life) whose copy failed.
     *
     * @return the batch number, 0 or more
     */
    public long batch() {
        return batch;
    }
}
