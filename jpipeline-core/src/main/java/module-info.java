/**
 * jpipeline core: CUDA's {@code cuda::pipeline} programming model for Java threads.
 *
 * <p>The public API lives in {@link dev.jpipeline} (facades and value types), the copy engine's facade in
 * {@link dev.jpipeline.copy}, prefetching iteration in {@link dev.jpipeline.prefetch} and tracing in
 * {@link dev.jpipeline.trace}. The engine behind them (stage barriers, the one wait routine, pipeline handles,
 * copy workers, the hang detector, trace lanes) lives in {@code dev.jpipeline.internal}, which is not exported.
 */
@SuppressWarnings("module")   // javac warns of a friend module not built yet, as simt is when core compiles
module dev.jpipeline.core {
    requires jdk.jfr;
    exports dev.jpipeline;
    exports dev.jpipeline.trace;
    exports dev.jpipeline.copy;
    exports dev.jpipeline.prefetch;
    // the SIMT runtime hooks into waiting (park listener, hang detector) and reuses the stage barrier
    exports dev.jpipeline.internal to dev.jpipeline.simt;
    exports dev.jpipeline.internal.copy to dev.jpipeline.simt;
    exports dev.jpipeline.internal.wait to dev.jpipeline.simt;
    exports dev.jpipeline.internal.checked to dev.jpipeline.simt;
}
