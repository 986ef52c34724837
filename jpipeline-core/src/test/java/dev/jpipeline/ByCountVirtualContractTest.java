package dev.jpipeline;

/** The pipeline contract on pipelines partitioned by producer count (sides taken by first use), on virtual threads. */
class ByCountVirtualContractTest extends PipelineContractTest {

    ByCountVirtualContractTest() {
        super(Kind.BY_COUNT, Threads.VIRTUAL);
    }
}
