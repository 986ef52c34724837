package dev.jpipeline.simt;

/**
 * Thrown inside the threads of a launch that has failed or hung, to unwind them from their waits; the launch
 * itself throws {@link KernelFailure}. Kernel code should not catch it (a thread that catches it gets it
 * again at its next wait that has to park; one that catches it and keeps running keeps the launch from
 * returning).
 *
 * <p>No CUDA counterpart: a GPU does not unwind the other threads of a failed kernel, it abandons them. Thrown
 * only by the runtime: it carries no stack trace and no suppressed exceptions.
 */
public final class KernelAbortedException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    KernelAbortedException(String message) {
        super(message, null, false, false);
    }
}
