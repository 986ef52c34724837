package dev.jpipeline.internal;

import java.lang.foreign.MemorySegment;

/**
 * Checked execution's hold on pipelines: where a seeded schedule may switch threads, where copies go so that they
 * land late, and which stage destinations to poison once released. The SIMT runtime's checked launches provide one
 * per launch (through {@link ParkListener#interleaver()}), a checked {@code PipelineSharedState} one per state.
 *
 * <pre>
 * Binding: a pipeline handle takes the interleaver of the thread that makes it (else its state's) once, at
 * construction, so an unchecked pipeline pays one null test per operation and nothing else.
 * Poisoning: copies into a stage are recorded by (ring, stage, round); the release that completes the stage's
 * round for every consumer group frees exactly that round's destinations, so a late look by another releaser
 * cannot poison the next round's data.
 * </pre>
 */
public interface Interleaver {

    /**
     * The current thread is about to run pipeline operation {@code op}: a point where the schedule may switch.
     *
     * @param op the CUDA name of the operation
     */
    void operation(String op);

    /**
     * Where a pipeline made now sends its copies, instead of {@code configured}.
     *
     * @param configured the copy service the pipeline was configured with
     * @return the service to use
     */
    CopyService copies(CopyService configured);

    /**
     * A copy into stage {@code stage} of {@code ring}, in the stage's round {@code round}, writes {@code dst}.
     *
     * @param ring  identifies the pipeline's shared state
     * @param stage the stage
     * @param round how many times the stages had wrapped when it was acquired
     * @param dst   the destination
     */
    void stageCopy(Object ring, int stage, long round, MemorySegment dst);

    /**
     * Every consumer has released round {@code round} of stage {@code stage}: its destinations hold no data now.
     *
     * @param ring  identifies the pipeline's shared state
     * @param stage the stage
     * @param round the round released
     */
    void stageFreed(Object ring, int stage, long round);

    /** The interleaver of the current thread's execution (its park listener's), or null. */
    static Interleaver current() {
        ParkListener listener = ParkListener.current();
        return listener == null ? null : listener.interleaver();
    }
}
