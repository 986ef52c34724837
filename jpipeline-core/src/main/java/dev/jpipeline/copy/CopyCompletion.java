package dev.jpipeline.copy;

/**
 * Told once when an asynchronous copy submitted to a {@link CopyEngine} has landed, or has failed.
 *
 * <p>Memory consistency effects: every write of the copy happens-before the call.
 */
@FunctionalInterface
public interface CopyCompletion {

    /**
     * Called by the engine's worker that finishes the copy's last chunk.
     *
     * @param failure {@code null} when every byte landed; otherwise the first chunk's failure (for example the
     *                {@link java.io.IOException} of a file read), in which case some bytes may not have landed
     */
    void copyDone(Throwable failure);
}
