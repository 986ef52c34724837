package dev.jpipeline.simt;

import java.io.Serializable;

/**
 * The body of a kernel: what {@code __global__ void kernel(...)} does, run once per CUDA thread with that
 * thread's {@link KernelContext}. Capture the kernel's arguments in the lambda. Launch it with
 * {@link Kernel#launch} or {@link Kernel#launchCooperative}.
 *
 * <p>{@code KernelBody} is {@link Serializable} so that the runtime can find a kernel's code: a lambda or method
 * reference for it then carries a {@link java.lang.invoke.SerializedLambda} naming its implementation method, whose
 * bytecode the runtime reads to decide how to run the kernel (issue 27: kernels compiled at their sync points).
 * This is transparent to callers: a lambda's captured values need not be serializable, and no kernel is ever
 * serialized (an attempt to serialize one that captures a {@code MemorySegment} fails, as it would for any such
 * lambda). A class that implements {@code KernelBody} is read from its {@code run} method; it need not declare a
 * {@code serialVersionUID} (the compiler's {@code -Xlint:serial} may remark on it).
 */
@FunctionalInterface
public interface KernelBody extends Serializable {

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
