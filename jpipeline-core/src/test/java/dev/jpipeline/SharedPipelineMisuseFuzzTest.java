package dev.jpipeline;

import org.junit.jupiter.api.Test;

/**
 * The misuse fuzzer ({@link MisuseFuzzer}) on pipelines of a shared state: programs whose team makes one pipeline,
 * unified, partitioned by count or by role, through the collective make (sometimes mismatched between ranks, or
 * with null or invalid arguments), and misuses it, its copies and file reads, another rank's handle, and the
 * state's settings (scope, stage count, patience, wait strategy). Its seed is printed;
 * {@code -Djpipeline.test.seed=S} reruns it.
 */
class SharedPipelineMisuseFuzzTest {

    @Test
    void randomMisuseOfSharedStatePipelinesNeverHangsAndAlwaysExplains() throws Exception {
        MisuseFuzzer.run(MisuseFuzzer.Component.SHARED_PIPELINE);
    }
}
