package dev.jpipeline.simt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class KernelTest {

    @Test
    void everyThreadOfEveryBlockRunsOnceWithItsCoordinates() {
        Dim3 grid = Dim3.of(3, 2);
        Dim3 block = Dim3.of(8, 4, 2);
        AtomicIntegerArray seen = new AtomicIntegerArray(grid.volume() * block.volume());
        Kernel.launch(grid, block, 0, ctx -> {
            assertEquals(grid, ctx.gridDim());
            assertEquals(block, ctx.blockDim());
            assertEquals(block.linear(ctx.threadIdx()), ctx.threadRank());
            assertEquals(ctx.threadRank() % 32, ctx.laneId());
            seen.incrementAndGet((int) ctx.globalRank());
        });
        for (int i = 0; i < seen.length(); i++) {
            assertEquals(1, seen.get(i), "global thread " + i);
        }
    }

    @Test
    void syncThreadsAndSharedMemoryMakeABlockReduction() {
        int threads = 256;
        long[] sums = new long[4];
        Kernel.launch(Dim3.of(4), Dim3.of(threads), threads * 4L, ctx -> {
            MemorySegment smem = ctx.dynamicShared();
            int t = ctx.threadRank();
            smem.setAtIndex(ValueLayout.JAVA_INT, t, ctx.blockIdx().x() * 1000 + t);
            ctx.syncThreads();
            for (int stride = threads / 2; stride > 0; stride /= 2) {
                if (t < stride) {
                    smem.setAtIndex(ValueLayout.JAVA_INT, t, smem.getAtIndex(ValueLayout.JAVA_INT, t)
                        + smem.getAtIndex(ValueLayout.JAVA_INT, t + stride));
                }
                ctx.syncThreads();
            }
            if (t == 0) {
                sums[ctx.blockIdx().x()] = smem.getAtIndex(ValueLayout.JAVA_INT, 0);
            }
        });
        for (int b = 0; b < 4; b++) {
            assertEquals(b * 1000L * threads + (long) threads * (threads - 1) / 2, sums[b], "block " + b);
        }
    }

    @Test
    void sharedVariablesAreOnePerBlock() {
        AtomicInteger made = new AtomicInteger();
        Kernel.launch(Dim3.of(5), Dim3.of(64), 0, ctx -> {
            AtomicInteger perBlock = ctx.shared("counter", () -> {
                made.incrementAndGet();
                return new AtomicInteger();
            });
            perBlock.incrementAndGet();
            ctx.syncThreads();
            assertEquals(64, perBlock.get());
        });
        assertEquals(5, made.get());
    }

    @Test
    void warpsAndTilesSyncTheirOwnThreads() {
        AtomicIntegerArray tileSums = new AtomicIntegerArray(96 / 16);
        Kernel.launch(Dim3.of(1), Dim3.of(96), 0, ctx -> {
            assertEquals(32, ctx.warp().size());
            assertEquals(ctx.laneId(), ctx.warp().threadRank());
            ctx.syncWarp();
            var tile = ctx.tiledPartition(16);
            assertEquals(16, tile.size());
            assertEquals(ctx.threadRank() % 16, tile.threadRank());
            tileSums.addAndGet(ctx.threadRank() / 16, 1);
            tile.sync();
            assertEquals(16, tileSums.get(ctx.threadRank() / 16));
        });
        assertThrows(KernelFailure.class, () -> Kernel.launch(Dim3.of(1), Dim3.of(32), 0,
            ctx -> ctx.tiledPartition(3)));
    }

    @Test
    void extentsWhoseThreadCountsOverflowAnIntAreRejectedByName() {
        IllegalArgumentException block = assertThrows(IllegalArgumentException.class,
            () -> Kernel.launch(Dim3.of(1), Dim3.of(65536, 65536, 1), 0, ctx -> { }));
        assertTrue(block.getMessage().contains("at most 1024 threads") && block.getMessage().contains("4294967296"),
            block.getMessage());
        IllegalArgumentException grid = assertThrows(IllegalArgumentException.class,
            () -> Kernel.launch(Dim3.of(65536, 65536, 2), Dim3.of(32), 0, ctx -> { }));
        assertTrue(grid.getMessage().contains("threads in all") && grid.getMessage().contains("274877906944"),
            grid.getMessage());
        assertThrows(IllegalArgumentException.class,
            () -> Kernel.launchCooperative(Dim3.of(65536, 65536, 1), Dim3.of(1024), 0, ctx -> { }));
    }

    @Test
    void aThrowingThreadFailsTheLaunchWithItsCoordinates() {
        KernelFailure failure = assertThrows(KernelFailure.class, () -> Kernel.launch(Dim3.of(2), Dim3.of(64), 0,
            ctx -> {
                if (ctx.blockIdx().x() == 1 && ctx.threadRank() == 37) {
                    throw new ArithmeticException("boom");
                }
                ctx.syncThreads();          // the others wait for a thread that is gone: aborted, not hung
            }));
        assertTrue(failure.getMessage().contains("thread (37, 0, 0) of block (1, 0, 0) failed"), failure.getMessage());
        assertInstanceOf(ArithmeticException.class, failure.getCause());
    }

    @Test
    void aPlantedHangIsReportedWithWhereEachThreadWaits() {
        long start = System.nanoTime();
        KernelFailure failure = assertThrows(KernelFailure.class, () -> Kernel.launch(Dim3.of(1), Dim3.of(64), 0,
            ctx -> {
                if (ctx.threadRank() != 5) {    // thread 5 skips the barrier and finishes
                    ctx.syncThreads();
                }
            }));
        long millis = (System.nanoTime() - start) / 1_000_000;
        String report = failure.getMessage();
        assertTrue(report.contains("hung"), report);
        assertTrue(report.contains("waits in __syncthreads of block (0, 0, 0): 63 of 64 threads arrived"), report);
        assertTrue(report.contains("threads (6, 0, 0) to (63, 0, 0), 58 threads: waits in __syncthreads"), report);
        assertTrue(report.contains("(1 has left)"), report);
        assertTrue(millis < 20_000, "reported after " + millis + " ms");
    }

    @Test
    void aHangInAPipelineIsReportedWithStageAndArrivals() {
        KernelFailure failure = assertThrows(KernelFailure.class, () -> Kernel.launch(Dim3.of(1), Dim3.of(4), 0,
            ctx -> {
                PipelineSharedState state = ctx.shared("state", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
                Pipeline pipe = Pipeline.make(ctx.block(), state, 2);
                if (ctx.threadRank() == 0) {
                    pipe.producerAcquire();
                    pipe.producerCommit();
                    ctx.syncWarp();             // waits for lanes that never come: they wait for rank 1
                } else if (ctx.threadRank() >= 2) {
                    pipe.consumerWait();        // rank 1, the second producer, never commits
                } else {
                    ctx.syncWarp();
                }
            }));
        String report = failure.getMessage();
        assertTrue(report.contains("rank 2 (consumer) waits in consumer_wait for stage 0 (batch 0): produced barrier "
            + "at phase 0, arrived 1/2"), report);
        assertTrue(report.contains("waits in __syncwarp of warp 0 of block (0, 0, 0): 2 of 4 threads arrived"), report);
    }

    @Test
    void consumersRunningProducerCodeIsAClearErrorNotAHang() {
        // The binary-partitions article's mistake: a count-partitioned pipeline whose consumer threads also
        // run the producer branch.
        KernelFailure failure = assertThrows(KernelFailure.class, () -> Kernel.launch(Dim3.of(1), Dim3.of(8), 0,
            ctx -> {
                PipelineSharedState state = ctx.shared("state", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
                Pipeline pipe = Pipeline.make(ctx.block(), state, 4);
                pipe.producerAcquire();         // every thread, not just the 4 producers
                pipe.producerCommit();
            }));
        assertInstanceOf(IllegalStateException.class, failure.getCause());
        assertTrue(failure.getCause().getMessage().contains("thread to act as a producer"), failure.getMessage());
    }

    @Test
    void launchArgumentsAreChecked() {
        assertThrows(IllegalArgumentException.class, () -> Kernel.launch(Dim3.of(1), Dim3.of(2048), 0, ctx -> { }));
        assertThrows(IllegalArgumentException.class, () -> Kernel.launch(Dim3.of(1), Dim3.of(32), -1, ctx -> { }));
        assertThrows(IllegalArgumentException.class,
            () -> Kernel.launch(Dim3.of(1), Dim3.of(32), 1 << 20, ctx -> { }));
        KernelFailure grid = assertThrows(KernelFailure.class,
            () -> Kernel.launch(Dim3.of(2), Dim3.of(32), 0, KernelContext::grid));
        assertTrue(grid.getCause().getMessage().contains("cooperative launch"), grid.getMessage());
        IllegalStateException outside = assertThrows(IllegalStateException.class, PipelinePrimitives::pipelineCommit);
        assertTrue(outside.getMessage().contains("device code"), outside.getMessage());
    }

    @Test
    void cooperativeLaunchSyncsTheGridAndSharesADeviceScopePipeline() {
        int blocks = 4;
        int perBlock = 32;
        long[] out = new long[blocks * perBlock];
        Kernel.launchCooperative(Dim3.of(blocks), Dim3.of(perBlock), 0, ctx -> {
            var grid = ctx.grid();
            PipelineSharedState state = ctx.global("state", () -> PipelineSharedState.create(ThreadScope.DEVICE, 2));
            long[] slot = ctx.global("slot", () -> new long[2]);     // one per stage
            Pipeline pipe = Pipeline.make(grid, state, 1);   // rank 0 of the grid produces, the rest consume
            for (int b = 0; b < 3; b++) {
                if (grid.threadRank() == 0) {
                    pipe.producerAcquire();
                    slot[b % 2] = 100 + b;
                    pipe.producerCommit();
                } else {
                    assertTrue(pipe.consumerWaitFor(Duration.ofSeconds(10)));
                    out[grid.threadRank()] += slot[b % 2];
                    pipe.consumerRelease();
                }
            }
            grid.sync();
            pipe.quit();
        });
        for (int r = 1; r < out.length; r++) {
            assertEquals(303, out[r], "grid rank " + r);
        }
    }
}
