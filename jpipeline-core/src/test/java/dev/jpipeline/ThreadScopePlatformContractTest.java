package dev.jpipeline;

/** The pipeline contract on thread-scope pipelines (each thread makes its own), on platform threads. */
class ThreadScopePlatformContractTest extends PipelineContractTest {

    ThreadScopePlatformContractTest() {
        super(Kind.THREAD_SCOPE, Threads.PLATFORM);
    }
}
