package dev.jpipeline.internal;

import dev.jpipeline.CopyPolicy;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.WaitStrategy;
import dev.jpipeline.internal.checked.Interleaver;
import dev.jpipeline.internal.copy.CopyService;
import dev.jpipeline.internal.trace.TraceSink;

/**
 * What a {@code PipelineSharedState} tells the engine about the pipelines made on it.
 *
 * @param scope             the scope (never THREAD)
 * @param stageCount        stages, 1..255
 * @param strategy          how threads wait for stages
 * @param copies            where {@code memcpyAsync} copies run
 * @param trace             where events go, or null when the pipelines are not traced
 * @param hangPatienceNanos how long a hang must persist before it is reported; 0: never
 * @param copyPolicy        where a producing thread's large copies run
 * @param interleaver       checked execution's hold on the pipelines (a checked state's), or null
 */
public record PipelineSettings(ThreadScope scope, int stageCount, WaitStrategy strategy, CopyService copies,
                               TraceSink trace, long hangPatienceNanos, CopyPolicy copyPolicy,
                               Interleaver interleaver) {
}
