package dev.jpipeline;

/** The pipeline contract on pipelines partitioned by producer count (sides taken by first use), on platform threads. */
class ByCountPlatformContractTest extends PipelineContractTest {

    ByCountPlatformContractTest() {
        super(Kind.BY_COUNT, Threads.PLATFORM);
    }
}
