package dev.jpipeline.simt;

/**
 * The body of a kernel: what {@code __global__ void kernel(...)} does, run once per CUDA thread with that
 * thread's {@link KernelContext}. Capture the kernel's arguments in the lambda.
 */
@FunctionalInterface
public interface KernelBody {

    /** Runs one CUDA thread of the kernel. */
    void run(KernelContext ctx);
}
