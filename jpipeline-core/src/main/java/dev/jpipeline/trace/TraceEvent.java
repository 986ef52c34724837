package dev.jpipeline.trace;

/**
 * One recorded pipeline operation.
 *
 * @param thread        the thread's name (for a copy: the producer whose copy it was)
 * @param rank          the thread's rank in its group
 * @param role          "producer", "consumer" or "unified"
 * @param operation     what happened
 * @param startNanos    start, in nanoseconds since the tracer was created
 * @param durationNanos how long it took (0 for instants)
 * @param stage         the stage
 * @param batch         the batch (counted from 0 over the pipeline's life)
 */
public record TraceEvent(String thread, int rank, String role, StageOperation operation, long startNanos,
                         long durationNanos, int stage, long batch) {
}
