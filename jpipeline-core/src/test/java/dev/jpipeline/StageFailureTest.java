package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * How a stage's failure is kept: a failed stage stays failed for every wait until its release, and its record is
 * never taken for a later batch's, not even once the stage's phase counter has wrapped around to the failed batch's
 * phase; in one process and in a shared region.
 */
class StageFailureTest {

    /**
     * consumerWait is "idempotent until the release": every call until then reports the failed copy. (Hostile
     * review of issue 8: only the first call did; a second consumerWait, a retry or a consumerWaitFor loop that
     * caught the exception, returned normally and handed the consumer the corrupt stage.)
     */
    @Test
    void aFailedStageStaysFailedOnTheNextWait() {
        assertTimeoutPreemptively(Teams.LIMIT, () -> {
            PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 2);
            GatedFileChannel file = new GatedFileChannel(new byte[4096]);
            file.failFrom(0);
            MemorySegment stage = Arena.ofShared().allocate(4096);
            Pipeline pipe = Pipeline.make(Teams.soloGroup(), state);
            pipe.producerAcquire();
            MemcpyAsync.memcpyAsync(stage, file, 0, 4096, pipe);
            pipe.producerCommit();
            assertThrows(StageFailedException.class, pipe::consumerWait);
            assertThrows(StageFailedException.class, pipe::consumerWait,
                "the same failed stage, waited for again, must not be handed over as good");
        });
    }

    /** The same on a thread-scope pipeline, through consumerWaitFor. */
    @Test
    void aFailedThreadScopeBatchStaysFailedOnTheNextWait() {
        assertTimeoutPreemptively(Teams.LIMIT, () -> {
            GatedFileChannel file = new GatedFileChannel(new byte[4096]);
            file.failFrom(0);
            MemorySegment stage = Arena.ofShared().allocate(4096);
            Pipeline pipe = Pipeline.make();
            pipe.producerAcquire();
            MemcpyAsync.memcpyAsync(stage, file, 0, 4096, pipe);
            pipe.producerCommit();
            assertThrows(StageFailedException.class, () -> pipe.consumerWaitFor(Duration.ofSeconds(5)));
            assertThrows(StageFailedException.class, () -> pipe.consumerWaitFor(Duration.ofSeconds(5)),
                "the same failed batch, waited for again, must not be handed over as good");
        });
    }
}
