/**
 * CUDA's {@code cuda::pipeline} programming model for Java threads: staged, multi-buffer producer/consumer
 * coordination that overlaps asynchronous copies with compute.
 *
 * <p>Entry points, with the CUDA names they mirror:
 * <ul>
 *   <li>{@link dev.jpipeline.PipelineSharedState} ({@code cuda::pipeline_shared_state}): the stages of a block-,
 *       device- or system-scope pipeline;</li>
 *   <li>{@link dev.jpipeline.Pipeline} ({@code cuda::pipeline}, {@code cuda::make_pipeline}): one thread's handle,
 *       with {@code producerAcquire / producerCommit / consumerWait / consumerRelease / quit}, unified or
 *       partitioned by producer count or by role, and the thread-scope free functions;</li>
 *   <li>{@link dev.jpipeline.MemcpyAsync} ({@code cuda::memcpy_async}): copies that complete with a stage or a
 *       {@link dev.jpipeline.Barrier} phase;</li>
 *   <li>{@link dev.jpipeline.Group} and {@link dev.jpipeline.ThreadTeam}: the thread groups pipelines are made
 *       over.</li>
 * </ul>
 *
 * <p>A two-stage partitioned pipeline of one producer and one consumer:
 * <pre>{@code
 * PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 2);
 * ThreadTeam.ofPlatform(2).run(Duration.ofMinutes(1), group -> {
 *     try (Pipeline pipe = Pipeline.make(group, state, 1)) {     // rank 0 produces
 *         for (int batch = 0; batch < 100; batch++) {
 *             if (group.threadRank() == 0) {
 *                 pipe.producerAcquire();
 *                 // fill stage batch % 2, or memcpyAsync into it
 *                 pipe.producerCommit();
 *             } else {
 *                 pipe.consumerWait();
 *                 // read stage batch % 2
 *                 pipe.consumerRelease();
 *             }
 *         }
 *     }
 * });
 * }</pre>
 *
 * <p>Where CUDA leaves misuse undefined or hangs, jpipeline throws an exception that names the rule broken, and a
 * thread that quits or dies never strands the others.
 */
package dev.jpipeline;
