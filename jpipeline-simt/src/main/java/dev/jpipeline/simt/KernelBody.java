package dev.jpipeline.simt;

/**
 * The body of a kernel: what {@code __global__ void kernel(...)} does, run once per CUDA thread with that
 * thread's {@link KernelContext}. Capture the kernel's arguments in the lambda. Launch it with
 * {@link Kernel#launch} or {@link Kernel#launchCooperative}.
 */
@FunctionalInterface
public interface KernelBody {

    /**
     * Runs one CUDA thread of the kernel. Whatever it throws fails the launch with {@link KernelFailure} (the
     * throwable as cause) and aborts the launch's other threads; a CUDA kernel has no such channel (a device-side
     * fault or {@code assert} is reported as a sticky error by the next synchronizing call).
     *
     * @param ctx the calling CUDA thread's context (its {@code threadIdx}, {@code blockIdx}, groups, shared
     *            memory and barriers), never null; confined to the calling thread: do not hand it to another
     *            thread
     */
    void run(KernelContext ctx);
}
