/**
 * jpipeline SIMT: the CUDA execution model (grids of thread blocks, warps, shared memory, cooperative groups)
 * on the JVM, so that CUDA pipeline code runs line for line in Java.
 */
module dev.jpipeline.simt {
    requires transitive dev.jpipeline.core;
    requires jdk.jfr;
    exports dev.jpipeline.simt;
}
