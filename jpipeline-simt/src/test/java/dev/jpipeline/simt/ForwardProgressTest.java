package dev.jpipeline.simt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Forward progress on strands (BlockScheduler.releaseTurn): a thread that keeps its block's turn while it spins on
 * a flag that another thread of its block sets lets the block's other threads run, as independent thread scheduling
 * does on sm_70 and later; a real hang is still reported. These kernels use a VarHandle, so they are never compiled
 * (RegionCompilerTest covers the compiled spin).
 */
class ForwardProgressTest {

    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();

    @Test
    void aSpinOnAFlagALaterThreadOfTheBlockSetsCompletesOnStrands() {
        MemorySegment out = Arena.ofAuto().allocate(4L * 2 * 64);
        KernelBody body = ctx -> {
            MemorySegment flag = ctx.sharedArray("flag", 4);
            int t = ctx.threadRank();
            if (t == 0) {
                while ((int) INT.getVolatile(flag, 0L) == 0) {   // thread 63 sets it, after thread 0's turn
                    Thread.onSpinWait();
                }
            } else if (t == ctx.blockDim().x() - 1) {
                INT.setVolatile(flag, 0L, 7);
            }
            ctx.syncThreads();
            out.setAtIndex(ValueLayout.JAVA_INT, ctx.globalRank(), (int) INT.getVolatile(flag, 0L));
        };
        assertTrue(!ResumptionScan.switchedOn() || ResumptionScan.scan(body).onScheduler(),
            "a VarHandle access may wait: compiled on the scheduler (or strands, compilation off)");
        assertTimeoutPreemptively(Duration.ofSeconds(30), () -> Kernel.launch(Dim3.of(2), Dim3.of(64), 0, body));
        for (int i = 0; i < 128; i++) {
            assertEquals(7, out.getAtIndex(ValueLayout.JAVA_INT, i), "thread " + i);
        }
    }

    @Test
    void everyThreadButTheLastSpinningOnItsFlagCompletes() {
        for (int size : new int[] {3, 4, 64}) {
            MemorySegment out = Arena.ofAuto().allocate(4L * size);
            KernelBody body = ctx -> {
                MemorySegment flag = ctx.sharedArray("flag", 4);
                int t = ctx.threadRank();
                if (t == ctx.blockDim().x() - 1) {
                    INT.setVolatile(flag, 0L, 1);
                } else {
                    while ((int) INT.getVolatile(flag, 0L) == 0) {   // each started spinner keeps spinning
                        Thread.onSpinWait();
                    }
                }
                ctx.syncThreads();
                out.setAtIndex(ValueLayout.JAVA_INT, t, (int) INT.getVolatile(flag, 0L));
            };
            assertTimeoutPreemptively(Duration.ofSeconds(30), () -> Kernel.launch(Dim3.of(1), Dim3.of(size), 0, body),
                size + " threads");
            for (int t = 0; t < size; t++) {
                assertEquals(1, out.getAtIndex(ValueLayout.JAVA_INT, t), size + " threads, thread " + t);
            }
        }
    }

    /**
     * Seeded: a random block size, a random spinning thread and a random later thread that sets its flag, each
     * thread then syncing and reading the flag. {@code -Djpipeline.simt.seed=N} repeats a run.
     */
    @Test
    void randomSpinnersAndSettersComplete() {
        long seed = Long.getLong("jpipeline.simt.seed", System.nanoTime());
        System.out.println("ForwardProgressTest.randomSpinners seed " + seed + " (-Djpipeline.simt.seed=" + seed + ")");
        java.util.Random random = new java.util.Random(seed);
        for (int trial = 0; trial < 3; trial++) {
            int size = 2 + random.nextInt(255);
            int spinner = random.nextInt(size - 1);
            int setter = spinner + 1 + random.nextInt(size - spinner - 1);
            MemorySegment out = Arena.ofAuto().allocate(4L * size);
            KernelBody body = ctx -> {
                MemorySegment flag = ctx.sharedArray("flag", 4);
                int t = ctx.threadRank();
                if (t == spinner) {
                    while ((int) INT.getVolatile(flag, 0L) == 0) {
                        Thread.onSpinWait();
                    }
                } else if (t == setter) {
                    INT.setVolatile(flag, 0L, setter);
                }
                ctx.syncThreads();
                out.setAtIndex(ValueLayout.JAVA_INT, t, (int) INT.getVolatile(flag, 0L));
            };
            String what = "seed " + seed + ", trial " + trial + ": " + size + " threads, " + spinner + " spins, "
                + setter + " sets";
            assertTimeoutPreemptively(Duration.ofSeconds(30), () -> Kernel.launch(Dim3.of(1), Dim3.of(size), 0, body),
                what);
            for (int t = 0; t < size; t++) {
                assertEquals(setter, out.getAtIndex(ValueLayout.JAVA_INT, t), what + ", thread " + t);
            }
        }
    }

    @Test
    void aThreadThatComputesLongBeforeASyncOfAFullBlockStillGivesTheRightResult() {
        MemorySegment out = Arena.ofAuto().allocate(8L * 1024);
        KernelBody body = ctx -> {
            MemorySegment cell = ctx.sharedArray("cell", 8);
            int t = ctx.threadRank();
            if (t == 0) {
                long end = System.nanoTime() + 150_000_000L;        // keeps the turn past the bound
                long x = 1;
                while (System.nanoTime() < end) {
                    x = x * 31 + 7;
                }
                cell.set(ValueLayout.JAVA_LONG, 0, 99 + (x & 0));
            }
            ctx.syncThreads();
            out.setAtIndex(ValueLayout.JAVA_LONG, t, cell.get(ValueLayout.JAVA_LONG, 0) + t);
        };
        assertTrue(!ResumptionScan.switchedOn() || ResumptionScan.scan(body).onScheduler(), "System.nanoTime is not "
            + "known to the scan: compiled on the scheduler (or strands, compilation off)");
        assertTimeoutPreemptively(Duration.ofSeconds(60), () -> Kernel.launch(Dim3.of(1), Dim3.of(1024), 0, body));
        for (int t = 0; t < 1024; t++) {
            assertEquals(99 + t, out.getAtIndex(ValueLayout.JAVA_LONG, t), "thread " + t);
        }
    }

    @Test
    void aSpinOnAFlagThatAThreadBlockedInASyncWouldSetIsStillWaitedForAndAfterReleaseAHangIsReported() {
        KernelBody body = ctx -> {
            MemorySegment flag = ctx.sharedArray("flag", 4);
            int t = ctx.threadRank();
            if (t == 0) {
                long end = System.nanoTime() + 300_000_000L;    // keeps the turn past the bound, then goes on
                while ((int) INT.getVolatile(flag, 0L) == 0 && System.nanoTime() < end) {
                    Thread.onSpinWait();
                }
            }
            if (t == 5) {
                return;                         // the others wait in __syncthreads for it: a real hang
            }
            ctx.syncThreads();
        };
        KernelFailure failure = assertTimeoutPreemptively(Duration.ofSeconds(30),
            () -> assertThrows(KernelFailure.class, () -> Kernel.launch(Dim3.of(1), Dim3.of(64), 0, body)));
        String report = failure.getMessage();
        assertTrue(report.contains("hung"), report);
        assertTrue(report.contains("waits in __syncthreads of block (0, 0, 0): 63 of 64 threads arrived"), report);
        assertTrue(report.contains("(1 has left)"), report);
    }
}
