package dev.jpipeline;

/**
 * A thread's role in a partitioned pipeline: mirrors {@code cuda::pipeline_role}.
 *
 * <p>Difference from upstream: libcu++ does not store the role, so a producer that calls a consumer operation
 * silently corrupts the stage barriers. jpipeline stores it, and such a call throws
 * {@link IllegalStateException} naming the rule, the thread's rank and role, and the stage.
 */
public enum PipelineRole {
    /** {@code cuda::pipeline_role::producer}: acquires and commits stages. */
    PRODUCER,
    /** {@code cuda::pipeline_role::consumer}: waits for and releases stages. */
    CONSUMER
}
