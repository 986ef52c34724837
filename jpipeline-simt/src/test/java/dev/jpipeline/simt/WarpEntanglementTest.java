package dev.jpipeline.simt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.Pipeline;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLongArray;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The CUDA documentation's "Warp Entanglement" cases, and the primitives API. */
@Timeout(60)
class WarpEntanglementTest {

    @Test
    void fullyConvergedCommitsAdvanceTheWarpOncePerStep() {
        AtomicLongArray perceived = new AtomicLongArray(32);
        AtomicLongArray actual = new AtomicLongArray(32);
        Kernel.launch(Dim3.of(1), Dim3.of(32), 0, ctx -> {
            for (int step = 0; step < 3; step++) {
                PipelinePrimitives.pipelineCommit();
                assertEquals(step, PipelinePrimitives.lastCommitActualIndex(), "perceived == actual");
            }
            ctx.syncWarp();
            perceived.set(ctx.laneId(), PipelinePrimitives.perceivedSequence());
            actual.set(ctx.laneId(), PipelinePrimitives.actualSequence());
            PipelinePrimitives.pipelineWaitPrior(0);
            assertEquals(3, PipelinePrimitives.lastWaitCoverage());
        });
        for (int lane = 0; lane < 32; lane++) {
            assertEquals(3, perceived.get(lane));
            assertEquals(2, actual.get(lane), "actual sequence {0, 1, 2}");
        }
    }

    @Test
    void fullyDivergedCommitsSpreadOver32BatchesAndWaitsCoverThemAll() {
        Set<Long> actualIndices = ConcurrentHashMap.newKeySet();
        AtomicLongArray coverage = new AtomicLongArray(32);
        Kernel.launch(Dim3.of(1), Dim3.of(32), 0, ctx -> {
            ctx.diverge();                              // as if each lane ran its own branch
            PipelinePrimitives.pipelineCommit();
            actualIndices.add(PipelinePrimitives.lastCommitActualIndex());
            assertEquals(1, PipelinePrimitives.perceivedSequence(), "each lane perceives {0}");
            ctx.syncWarp();                             // reconverge before waiting
            PipelinePrimitives.pipelineWaitPrior(0);
            coverage.set(ctx.laneId(), PipelinePrimitives.lastWaitCoverage());
            assertEquals(31, PipelinePrimitives.actualSequence());
        });
        assertEquals(32, actualIndices.size(), "actual sequence {0..31}");
        for (long i = 0; i < 32; i++) {
            assertTrue(actualIndices.contains(i));
        }
        for (int lane = 0; lane < 32; lane++) {
            assertEquals(32, coverage.get(lane), "lane " + lane + " waits for all 32 batches");
        }
    }

    @Test
    void threadScopePipelinesShareTheWarpSequenceWithThePrimitives() {
        Kernel.launch(Dim3.of(1), Dim3.of(32), 0, ctx -> {
            Pipeline pipe = Pipeline.make();
            pipe.producerAcquire();
            pipe.producerCommit();                      // batch 0 of the warp
            PipelinePrimitives.pipelineCommit();        // batch 1: the same sequence
            assertEquals(1, PipelinePrimitives.lastCommitActualIndex());
            assertEquals(2, PipelinePrimitives.perceivedSequence());
            pipe.consumerWait();
            pipe.consumerRelease();
        });
    }

    @Test
    void waitPriorLeavesTheNewestBatchesAndClampsAtEight() {
        Kernel.launch(Dim3.of(1), Dim3.of(32), 0, ctx -> {
            for (int b = 0; b < 12; b++) {
                PipelinePrimitives.pipelineCommit();
            }
            PipelinePrimitives.pipelineWaitPrior(2);    // batches 0..9
            assertEquals(10, PipelinePrimitives.lastWaitCoverage());
            PipelinePrimitives.pipelineWaitPrior(20);   // behaves as 8: nothing new below batch 3
            assertEquals(0, PipelinePrimitives.lastWaitCoverage());
            PipelinePrimitives.pipelineWaitPrior(0);
            assertEquals(2, PipelinePrimitives.lastWaitCoverage());
        });
    }

    @Test
    void memcpyAsyncPrimitiveCopiesAndZeroFills() {
        MemorySegment src = Arena.ofAuto().allocate(16, 16);
        for (int i = 0; i < 16; i++) {
            src.set(ValueLayout.JAVA_BYTE, i, (byte) (i + 1));
        }
        MemorySegment dst = Arena.ofAuto().allocate(16, 16);
        Kernel.launch(Dim3.of(1), Dim3.of(1), 0, ctx -> {
            dst.fill((byte) -1);
            PipelinePrimitives.pipelineMemcpyAsync(dst, src, 16, 4);
            PipelinePrimitives.pipelineCommit();
            PipelinePrimitives.pipelineWaitPrior(0);
            for (int i = 0; i < 12; i++) {
                assertEquals(i + 1, dst.get(ValueLayout.JAVA_BYTE, i));
            }
            for (int i = 12; i < 16; i++) {
                assertEquals(0, dst.get(ValueLayout.JAVA_BYTE, i), "zero-filled");
            }
            IllegalArgumentException size = assertThrows(IllegalArgumentException.class,
                () -> PipelinePrimitives.pipelineMemcpyAsync(dst, src, 12));
            assertTrue(size.getMessage().contains("must be 4, 8 or 16, got 12"));
            assertThrows(IllegalArgumentException.class, () -> PipelinePrimitives.pipelineMemcpyAsync(dst, src, 8, 9));
            IllegalArgumentException misaligned = assertThrows(IllegalArgumentException.class,
                () -> PipelinePrimitives.pipelineMemcpyAsync(dst.asSlice(4), src, 8));
            assertTrue(misaligned.getMessage().contains("aligned to 8 bytes"), misaligned.getMessage());
        });
    }
}
