/**
 * jpipeline core: CUDA's {@code cuda::pipeline} programming model for Java threads.
 *
 * <p>The public API lives in {@link dev.jpipeline}, the copy engine in {@link dev.jpipeline.copy}; the stage
 * barrier and waiting mechanics in {@code dev.jpipeline.internal} are not exported.
 */
module dev.jpipeline.core {
    requires jdk.jfr;
    exports dev.jpipeline;
    exports dev.jpipeline.trace;
    exports dev.jpipeline.copy;
    // the SIMT runtime hooks into waiting (hang detection) and reuses the stage barrier
    exports dev.jpipeline.internal to dev.jpipeline.simt;
}
