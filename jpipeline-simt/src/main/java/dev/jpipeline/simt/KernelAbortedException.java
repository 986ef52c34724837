package dev.jpipeline.simt;

/**
 * Thrown inside the threads of a launch that has failed or hung, to unwind them from their waits; the launch
 * itself throws {@link KernelFailure}. Kernel code should not catch it.
 */
public final class KernelAbortedException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    KernelAbortedException(String message) {
        super(message, null, false, false);
    }
}
