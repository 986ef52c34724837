package dev.jpipeline.internal.copy;

import dev.jpipeline.internal.PhaseBarrier;

/**
 * Where an asynchronous copy reports that it has landed: the one way copies complete in jpipeline. A
 * {@link PhaseBarrier} is one (its {@link PhaseBarrier#tieCopy()} made the pending arrival that the landing
 * makes); so are the trace wrapper of a traced stage and the adapter of the public {@code CopyCompletion}.
 *
 * <p>Memory consistency effects: every write of the copy happens-before the call.
 */
@FunctionalInterface
public interface CopyLanding {

    /**
     * The copy has landed ({@code failure == null}) or failed (then some bytes may not have landed). Called once
     * per copy, by the thread that finished it (a copy worker, or the issuing thread for an inline copy).
     */
    void copyLanded(Throwable failure);

    /**
     * The copy engine has decided to hand a copy for this landing to a worker (it will land here later); called
     * by the issuing thread before the copy is tied and submitted. Inline copies never call it.
     */
    default void copyHandedOff() {
    }
}
