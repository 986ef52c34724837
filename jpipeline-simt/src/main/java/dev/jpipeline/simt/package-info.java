/**
 * The CUDA execution model on the JVM: grids of thread blocks, warps, {@code __shared__} memory, cooperative
 * groups, execution barriers and the pipeline primitives API, so that CUDA pipeline code runs nearly line for
 * line in Java and can be tested and debugged without a GPU.
 *
 * <h2>Main entry points</h2>
 * <ul>
 *   <li>{@link dev.jpipeline.simt.Kernel}: {@code kernel<<<grid, block, dynamicSharedBytes>>>} as
 *       {@link dev.jpipeline.simt.Kernel#launch Kernel.launch}, {@code cudaLaunchCooperativeKernel} as
 *       {@link dev.jpipeline.simt.Kernel#launchCooperative Kernel.launchCooperative}. A launch runs each resident
 *       block's CUDA threads one at a time (switching where one blocks), blocks in parallel, and returns when all
 *       have finished; it throws
 *       {@link dev.jpipeline.simt.KernelFailure} when a thread throws or the launch hangs.</li>
 *   <li>{@link dev.jpipeline.simt.KernelBody}: the {@code __global__} function, a lambda run once per thread.</li>
 *   <li>{@link dev.jpipeline.simt.KernelContext}: one thread's view of its launch: {@code threadIdx},
 *       {@code blockIdx}, {@code blockDim}, {@code gridDim}; {@code this_thread_block()} (a
 *       {@link dev.jpipeline.simt.ThreadBlock}), the warp, tiled partitions and {@code this_grid()} (all
 *       {@link dev.jpipeline.Group}s, so they can make pipelines); {@code __shared__} memory;
 *       {@code __syncthreads()} and {@code __syncwarp()}.</li>
 *   <li>{@link dev.jpipeline.simt.Dim3}: {@code dim3}, for extents and indices.</li>
 *   <li>{@link dev.jpipeline.simt.PipelinePrimitives}: {@code <cuda_pipeline_primitives.h>}
 *       ({@code __pipeline_memcpy_async}, {@code __pipeline_commit}, {@code __pipeline_wait_prior},
 *       {@code __pipeline_arrive_on}), device code only.</li>
 * </ul>
 * The pipelines themselves ({@code cuda::pipeline}, {@code cuda::memcpy_async}, {@code cuda::barrier}) are
 * jpipeline-core's, in {@code dev.jpipeline}; in a kernel they take the groups above.
 *
 * <h2>Example</h2>
 * A block-scope pipeline that double-buffers a copy through shared memory: the CUDA kernel
 * {@code kernel<<<4, 256, smem>>>(...)} becomes
 * <pre>{@code
 * Kernel.launch(Dim3.of(4), Dim3.of(256), 2 * 256 * Float.BYTES, ctx -> {
 *     ThreadBlock block = ctx.block();                              // this_thread_block()
 *     PipelineSharedState state = ctx.shared("state",               // __shared__ pipeline_shared_state
 *         () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
 *     Pipeline pipe = Pipeline.make(block, state);                  // cuda::make_pipeline(block, &state)
 *     MemorySegment smem = ctx.dynamicShared();                     // extern __shared__ float smem[]
 *     // producerAcquire / memcpyAsync / producerCommit, consumerWait / compute / consumerRelease, ...
 *     ctx.syncThreads();                                            // __syncthreads()
 * });
 * }</pre>
 *
 * <h2>Differences from CUDA</h2>
 * A launch is synchronous (a launch followed by {@code cudaDeviceSynchronize()}); a thread that throws fails the
 * launch with a report naming it, and a launch whose threads all wait with nothing left to wake them fails with
 * a report of where each waits instead of hanging. Java cannot see a warp's control flow, so warp convergence
 * follows a stated, deterministic model ({@link dev.jpipeline.simt.KernelContext#diverge()}). Each public type
 * names the CUDA construct it mirrors and its own differences.
 *
 * <h2>Memory consistency</h2>
 * As in CUDA, plain writes to shared or global memory become visible to other threads only through a
 * synchronization: {@code __syncthreads()}, {@code __syncwarp()}, a group's {@code sync()}, or a pipeline or
 * barrier wait. Each blocking method states its memory consistency effects, in the style of
 * {@code java.util.concurrent}.
 */
package dev.jpipeline.simt;
