package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How a stage's failure is kept: a failed stage stays failed for every wait until its release, and its record is
 * never taken for a later batch's, not even once the stage's phase counter has wrapped around to the failed batch's
 * phase; in one process and in a shared region.
 */
class StageFailureTest {

    @TempDir
    Path dir;

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

    /**
     * Finding 12: a stage's failure record was kept by its phase, counted modulo 2^23, so the failure of batch 0
     * was reported again for batch 2^23 of a one-stage pipeline. In a region and in one process.
     */
    @Test
    void aFailureIsNotReportedAgainWhenThePhaseWrapsAround() {
        assertTimeoutPreemptively(Duration.ofSeconds(120), () -> {
            try (SharedRegion region = SharedRegion.create(dir.resolve("r"), RegionPipelineChild.dataBytes(1, 1, 4096),
                SharedRegion.Sharing.OWNER)) {
                Group alone = region.join(1, 0);
                MemorySegment stage = region.data().asSlice(PipelineSharedState.regionBytes(1, 1), 4096);
                String inRegion = Bounded.outcome("unified", Duration.ofSeconds(50),
                    () -> wrapAround(Pipeline.make(alone, RegionRuns.state(region, 1)), stage));
                assertEquals("batch 0 failed; batch 8388608 ok", inRegion);
            }
            String inProcess = Bounded.outcome("team", Duration.ofSeconds(50), () -> {
                StringBuilder out = new StringBuilder();
                try (Arena arena = Arena.ofShared()) {
                    MemorySegment stage = arena.allocate(4096);
                    ThreadTeam.ofPlatform(1).run(Duration.ofSeconds(45), group -> {
                        try {
                            out.append(wrapAround(Pipeline.make(group,
                                PipelineSharedState.create(ThreadScope.BLOCK, 1)),
                                stage));
                        } catch (Exception e) {
                            throw new IllegalStateException(e);
                        }
                    });
                }
                return out.toString();
            });
            assertEquals("batch 0 failed; batch 8388608 ok", inProcess);
        });
    }

    /**
     * A unified one-stage pipeline's only thread: batch 0's copy fails, then 2^23 batches pass, so that the stage's
     * phase is batch 0's again. What batch 0 and batch 2^23 gave.
     */
    private static String wrapAround(Pipeline pipe, MemorySegment stage) throws Exception {
        return batchZero(pipe, stage, true) + "; " + untilThePhaseWraps(pipe);
    }

    /** Batch 0 of a unified one-stage pipeline, filled by a copy that fails if {@code copies}: what its wait gave. */
    private static String batchZero(Pipeline pipe, MemorySegment stage, boolean copies) throws Exception {
        GatedFileChannel failing = new GatedFileChannel(new byte[4096]);
        failing.failFrom(0);
        pipe.producerAcquire();
        if (copies) {
            MemcpyAsync.memcpyAsync(stage, failing, 0, 4096, pipe);
        }
        pipe.producerCommit();
        String first = Outcomes.of(pipe::consumerWait).startsWith("StageFailedException") ? "batch 0 failed"
            : "batch 0 ok";
        pipe.consumerRelease();
        return first;
    }

    /** Batches 1 .. 2^23 of a unified one-stage pipeline, then quit: what batch 2^23 (batch 0's phase) gave. */
    private static String untilThePhaseWraps(Pipeline pipe) {
        long wrap = 1L << 23;
        for (long b = 1; b < wrap; b++) {
            pipe.producerAcquire();
            pipe.producerCommit();
            pipe.consumerWait();
            pipe.consumerRelease();
        }
        pipe.producerAcquire();
        pipe.producerCommit();
        String again = Outcomes.of(pipe::consumerWait);
        pipe.consumerRelease();
        pipe.quit();
        return "batch " + wrap + " " + (again.equals("returned") ? "ok" : again);
    }

    /**
     * Finding 12, a deserted group: a producer whose copy failed in batch 0 and that then quit never replaces its
     * record, so consumers must not ask it for rounds it left before (batch 2^23 of a one-stage unified pair).
     */
    @Test
    void aQuitProducersFailureIsNotReportedAgainWhenThePhaseWrapsAround() {
        assertTimeoutPreemptively(Duration.ofSeconds(120), () -> {
            try (SharedRegion region = SharedRegion.create(dir.resolve("r"), RegionPipelineChild.dataBytes(2, 1, 4096),
                SharedRegion.Sharing.OWNER)) {
                MemorySegment stage = region.data().asSlice(PipelineSharedState.regionBytes(1, 2), 4096);
                PipelineSharedState state = RegionRuns.state(region, 1);
                List<Bounded.Run> runs = new ArrayList<>();
                for (int r = 0; r < 2; r++) {
                    Group g = region.join(2, r);
                    runs.add(Bounded.start("rank " + r, () -> withDeserter(Pipeline.make(g, state), g, stage)));
                }
                long deadline = System.nanoTime() + 50_000_000_000L;
                assertEquals(List.of("batch 0 failed; batch 8388608 ok", "batch 0 failed; quit"),
                    runs.stream().map(r -> r.resultBy(deadline)).toList());
            }
            List<String> inProcess = new CopyOnWriteArrayList<>(List.of("", ""));
            try (Arena arena = Arena.ofShared()) {
                MemorySegment stage = arena.allocate(4096);
                PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 1);
                ThreadTeam.ofPlatform(2).run(Duration.ofSeconds(50), g -> {
                    try {
                        inProcess.set(g.threadRank(), withDeserter(Pipeline.make(g, state), g, stage));
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
            }
            assertEquals(List.of("batch 0 failed; batch 8388608 ok", "batch 0 failed; quit"), inProcess);
        });
    }

    /**
     * A unified one-stage pipeline of two: rank 1's copy into batch 0 fails and it quits after batch 0; rank 0 runs
     * on alone until the stage's phase is batch 0's again. What each saw.
     */
    private static String withDeserter(Pipeline pipe, Group group, MemorySegment stage) throws Exception {
        boolean deserter = group.threadRank() == 1;
        String first = batchZero(pipe, stage, deserter);
        if (deserter) {
            pipe.quit();
            return first + "; quit";
        }
        return first + "; " + untilThePhaseWraps(pipe);
    }
}
