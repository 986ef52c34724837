package dev.jpipeline;

/**
 * Where a block-, device- or system-scope pipeline's {@code memcpyAsync} runs a memory-to-memory copy too large to
 * run inline anyway (larger than the copy engine's {@link dev.jpipeline.copy.CopyEngine#inlineThreshold()}), or a
 * read from a file (of any size): on the copy engine's workers, or on the thread that issued it. Thread-scope
 * pipelines (which have no shared state) always use the engine: their thread computes while its copies run.
 *
 * <p>File reads run on the issuing thread only with {@link #ON_ISSUING_THREAD}: a read may wait on a device, and
 * the engine's workers keep the reads of several stages in flight meanwhile. A read on the issuing thread has
 * landed or failed when {@code memcpyAsync} returns ({@link AsyncContractFulfillment#NONE}); a failed read fails
 * its stage all the same (the consumers' wait throws {@link StageFailedException}), never the call.
 *
 * <p>No CUDA counterpart: on a GPU the copy hardware is always there; on a CPU a copy handed to a worker costs a
 * core, and is worth it only when the issuing thread has something else to do meanwhile, or when cores are idle.
 *
 * <p>Set per pipeline with {@link PipelineSharedState.Builder#copyPolicy(CopyPolicy)}; an engine whose
 * {@code inlineThreshold} is huge runs every copy on the issuing thread, whatever the policy.
 */
public enum CopyPolicy {

    /**
     * The default. A thread that only produces (a partitioned pipeline's producer) copies itself, unless the
     * machine has more processors than twice the pipeline's threads: after a commit it would only wait for the
     * copy, and a worker copying meanwhile is one more busy thread on a machine without one to spare (measured
     * in docs/performance.md). With cores to spare, and for every thread that also consumes (unified pipelines,
     * thread scope), copies go to the engine, whose workers split large ones into chunks copied in parallel. File
     * reads go to the engine, except reads from a file that jpipeline opened itself (a prefetch of a path) while
     * the machine is seen oversubscribed (a waiting thread lately lost a time slice while it spun; for 0.5 s after
     * each sighting): those run on the issuing thread, since a worker would wait for a time slice while the thread
     * that needs the data waits for it. A thread that waits, untimed, for a copy no worker has started performs it
     * (a memory copy, or a read from a file jpipeline opened).
     */
    AUTO,

    /**
     * Every memory-to-memory copy and every file read into the pipeline runs on the thread that issues it,
     * synchronously, before {@code memcpyAsync} returns. A {@code FileChannel} is an interruptible channel: an
     * interrupt that arrives while the thread reads closes the channel, and the read fails its stage; the thread's
     * interrupt status stays set (one set before the call is kept too, and does not touch the channel). On the
     * engine, reads are never interrupted.
     */
    ON_ISSUING_THREAD,

    /**
     * Every copy larger than the engine's inline threshold, and every file read, runs on the engine's workers
     * (jpipeline 0.1).
     */
    ON_COPY_ENGINE
}
