package dev.jpipeline;

/** The pipeline contract on unified pipelines (every thread produces and consumes), on platform threads. */
class UnifiedPlatformContractTest extends PipelineContractTest {

    UnifiedPlatformContractTest() {
        super(Kind.UNIFIED, Threads.PLATFORM);
    }
}
