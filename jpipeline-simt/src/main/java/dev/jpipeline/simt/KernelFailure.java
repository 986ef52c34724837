package dev.jpipeline.simt;

/**
 * A kernel launch failed: a thread threw (the cause, with the thread's and block's coordinates in the message),
 * or every live thread was blocked with nothing left to wake it (a hang, reported with where each thread waits).
 * No CUDA counterpart for the hang report: a GPU kernel that hangs simply never returns.
 */
public final class KernelFailure extends RuntimeException {

    private static final long serialVersionUID = 1L;

    KernelFailure(String message, Throwable cause) {
        super(message, cause);
    }
}
