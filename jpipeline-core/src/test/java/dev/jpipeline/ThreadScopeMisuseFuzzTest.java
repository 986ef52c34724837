package dev.jpipeline;

import org.junit.jupiter.api.Test;

/**
 * The misuse fuzzer ({@link MisuseFuzzer}) on thread-scope pipelines: programs whose threads each make a pipeline
 * of their own ({@code Pipeline.make()}, {@code make(engine)}, {@code make(null)}) and misuse it, its copies and
 * file reads, its free functions ({@code consumerWaitPrior}, {@code producerCommit(pipe, barrier)}) and a
 * {@link Barrier}. Its seed is printed; {@code -Djpipeline.test.seed=S} reruns it.
 */
class ThreadScopeMisuseFuzzTest {

    @Test
    void randomMisuseOfThreadScopePipelinesNeverHangsAndAlwaysExplains() throws Exception {
        MisuseFuzzer.run(MisuseFuzzer.Component.THREAD_SCOPE);
    }
}
