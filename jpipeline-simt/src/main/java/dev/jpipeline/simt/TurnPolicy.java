package dev.jpipeline.simt;

/**
 * The one scheduling decision of a thread block: which of its CUDA threads takes the block's turn when the thread
 * holding it blocks or finishes. Round-robin for normal launches; a seeded choice makes a launch's interleaving
 * replayable (checked execution).
 *
 * <p>Called by the block scheduler under its lock, only when there is a choice to make (at least one candidate);
 * it must be fast and must not block or call back into the kernel.
 */
interface TurnPolicy {

    /**
     * Every thread gets a first turn before any gets a second (unstarted threads first, as a GPU starts every thread
     * of a resident block), then ready threads in the order they woke.
     */
    TurnPolicy ROUND_ROBIN = (ready, canStart) -> canStart ? ready : 0;

    /**
     * Chooses who runs next.
     *
     * @param ready    how many threads are ready to run again (woken from a wait), oldest first; at least one
     *                 candidate exists: {@code ready > 0 || canStart}
     * @param canStart whether an unstarted thread of the block may be started
     * @return an index {@code 0..ready-1} into the ready threads, or {@code ready} to start the next unstarted
     *         thread (only when {@code canStart})
     */
    int next(int ready, boolean canStart);
}
