package dev.jpipeline;

/** The pipeline contract on pipelines partitioned by role, on virtual threads. */
class ByRoleVirtualContractTest extends PipelineContractTest {

    ByRoleVirtualContractTest() {
        super(Kind.BY_ROLE, Threads.VIRTUAL);
    }
}
