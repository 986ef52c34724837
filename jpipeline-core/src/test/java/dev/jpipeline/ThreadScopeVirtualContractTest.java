package dev.jpipeline;

/** The pipeline contract on thread-scope pipelines (each thread makes its own), on virtual threads. */
class ThreadScopeVirtualContractTest extends PipelineContractTest {

    ThreadScopeVirtualContractTest() {
        super(Kind.THREAD_SCOPE, Threads.VIRTUAL);
    }
}
