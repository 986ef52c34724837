package dev.jpipeline;

/**
 * The set of threads that may synchronize through an object: mirrors {@code cuda::thread_scope}.
 *
 * <p>On the GPU the scope picks the barrier implementation and the visibility scope. On the JVM every scope
 * gives the same memory-consistency effects; the scope is kept for API parity and for validation: a
 * {@link PipelineSharedState} cannot have {@link #THREAD} scope, exactly as a
 * {@code cuda::pipeline_shared_state<cuda::thread_scope_thread, N>} cannot be used to make a pipeline.
 */
public enum ThreadScope {
    /** {@code cuda::thread_scope_thread}: only the calling thread; pipelines of this scope need no shared state. */
    THREAD,
    /** {@code cuda::thread_scope_block}: the threads of one thread block (on the JVM: one group of threads). */
    BLOCK,
    /** {@code cuda::thread_scope_device}: every thread of a device (on the JVM: every thread of the process). */
    DEVICE,
    /** {@code cuda::thread_scope_system}: every thread of the system, host included. */
    SYSTEM
}
