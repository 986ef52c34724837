package dev.jpipeline;

/** The pipeline contract on unified pipelines (every thread produces and consumes), on virtual threads. */
class UnifiedVirtualContractTest extends PipelineContractTest {

    UnifiedVirtualContractTest() {
        super(Kind.UNIFIED, Threads.VIRTUAL);
    }
}
