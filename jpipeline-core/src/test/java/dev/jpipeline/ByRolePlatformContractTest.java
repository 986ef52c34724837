package dev.jpipeline;

/** The pipeline contract on pipelines partitioned by role, on platform threads. */
class ByRolePlatformContractTest extends PipelineContractTest {

    ByRolePlatformContractTest() {
        super(Kind.BY_ROLE, Threads.PLATFORM);
    }
}
