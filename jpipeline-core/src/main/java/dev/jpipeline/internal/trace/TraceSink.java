package dev.jpipeline.internal.trace;

/**
 * Where a traced pipeline sends its events: the pipeline engine asks it for one {@link TraceLane} per pipeline
 * handle, when the handle is made. Implemented by {@code dev.jpipeline.trace.Tracer}; not exported, so only the
 * engine can record events.
 */
public interface TraceSink {

    /**
     * A new lane for one pipeline handle; the sink keeps it and reads it from then on.
     *
     * @param thread the name of the handle's thread
     * @param rank   the thread's rank in its group
     * @param role   "producer", "consumer", "unified" or "partitioned" (a count partition before the thread's
     *               first operation)
     */
    TraceLane lane(String thread, int rank, String role);
}
