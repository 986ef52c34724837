package dev.jpipeline.simt;

/**
 * A kernel launch failed: a thread threw (the cause, with the thread's and block's coordinates in the message),
 * or every live thread was blocked with nothing left to wake it (a hang, reported with where each thread waits).
 * No CUDA counterpart for the hang report: a GPU kernel that hangs simply never returns.
 *
 * <p>The CUDA counterpart of a thread's failure is the sticky error ({@code cudaErrorLaunchFailure},
 * {@code cudaErrorAssert}, ...) that the next {@code cudaDeviceSynchronize()} returns; here the launch method
 * itself throws it, with the thread's exception as the cause ({@link #getCause()}; null for a hang). A launch
 * whose waiting thread was interrupted throws it with an {@link InterruptedException} as the cause. Thrown only
 * by {@link Kernel#launch} and {@link Kernel#launchCooperative}.
 */
public final class KernelFailure extends RuntimeException {

    private static final long serialVersionUID = 1L;

    KernelFailure(String message, Throwable cause) {
        super(message, cause);
    }
}
