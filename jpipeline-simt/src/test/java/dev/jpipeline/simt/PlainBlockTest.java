package dev.jpipeline.simt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Kernels that reach no resumption point run each block as a plain loop over its threads (issue 27, slice 1;
 * Strand.runPlainBlock): every thread sees its own indices, a thread's failure fails the launch naming it, and the
 * same kernels give the same results on strands with compilation switched off.
 */
@Timeout(60)
class PlainBlockTest {

    /** out[globalRank] = globalRank * 3 + threadRank, over every thread of a grid with a partial last warp. */
    private static KernelBody indices(MemorySegment out) {
        return ctx -> out.setAtIndex(ValueLayout.JAVA_LONG, ctx.globalRank(),
            ctx.globalRank() * 3 + ctx.threadRank());
    }

    private static void checkIndices(MemorySegment out, Dim3 grid, Dim3 block) {
        long threads = (long) grid.volume() * block.volume();
        for (long g = 0; g < threads; g++) {
            assertEquals(g * 3 + g % block.volume(), out.getAtIndex(ValueLayout.JAVA_LONG, g), "thread " + g);
        }
    }

    @Test
    void everyThreadOfEveryBlockRunsOnceWithItsOwnIndices() {
        assumeTrue(ResumptionScan.switchedOn(), "compilation is switched off in this run");
        Dim3 grid = Dim3.of(7, 3);
        Dim3 block = Dim3.of(10, 7);                    // 70 threads: the last warp has 6 lanes
        MemorySegment out = Arena.ofAuto().allocate(8L * grid.volume() * block.volume());
        out.fill((byte) -1);
        KernelBody body = indices(out);
        assertTrue(ResumptionScan.scan(body).plain(), ResumptionScan.scan(body).reason());
        long before = Launch.PLAIN_BLOCKS.sum();
        Kernel.launch(grid, block, 0, body);
        assertEquals(grid.volume(), Launch.PLAIN_BLOCKS.sum() - before, "every block ran as a plain loop");
        checkIndices(out, grid, block);
    }

    @Test
    void aThreadThatThrowsFailsTheLaunchNamingItsThreadAndBlock() {
        assumeTrue(ResumptionScan.switchedOn(), "compilation is switched off in this run");
        KernelBody body = ctx -> {
            if (ctx.globalRank() == 2 * 64 + 5) {
                throw new IllegalStateException("thread " + ctx.threadIdx() + " refuses");
            }
        };
        assertTrue(ResumptionScan.scan(body).plain(), ResumptionScan.scan(body).reason());
        KernelFailure failure = assertThrows(KernelFailure.class,
            () -> Kernel.launch(Dim3.of(4), Dim3.of(64), 0, body));
        assertTrue(failure.getMessage().contains("thread " + new Dim3(5, 0, 0) + " of block " + new Dim3(2, 0, 0)
            + " failed"), failure.getMessage());
        assertInstanceOf(IllegalStateException.class, failure.getCause());
        MemorySegment out = Arena.ofAuto().allocate(8L * 4 * 64);
        Kernel.launch(Dim3.of(4), Dim3.of(64), 0, indices(out));     // the next launch runs as if nothing happened
        checkIndices(out, Dim3.of(4), Dim3.of(64));
    }

    @Test
    void aFailureInTheMiddleOfABigGridEndsTheLaunchWithEveryBlockAccountedFor() {
        assumeTrue(ResumptionScan.switchedOn(), "compilation is switched off in this run");
        // 2048 blocks: each slot takes them in ranges; the failure must stop every slot and count every block
        KernelBody body = ctx -> {
            if (ctx.globalRank() == 1000L * 32 + 7) {
                throw new IllegalArgumentException("block 1000 fails");
            }
        };
        for (int round = 0; round < 20; round++) {
            KernelFailure failure = assertThrows(KernelFailure.class,
                () -> Kernel.launch(Dim3.of(2048), Dim3.of(32), 0, body));
            assertTrue(failure.getMessage().contains("of block " + new Dim3(1000, 0, 0) + " failed"),
                failure.getMessage());
        }
        MemorySegment out = Arena.ofAuto().allocate(8L * 2048 * 32);
        Kernel.launch(Dim3.of(2048), Dim3.of(32), 0, indices(out));
        checkIndices(out, Dim3.of(2048), Dim3.of(32));
    }

    @Test
    void withCompilationSwitchedOffTheSameKernelRunsOnStrandsWithTheSameResult() {
        Dim3 grid = Dim3.of(5);
        Dim3 block = Dim3.of(33);
        MemorySegment out = Arena.ofAuto().allocate(8L * grid.volume() * block.volume());
        KernelBody body = indices(out);
        String old = System.getProperty("jpipeline.simt.compile");
        System.setProperty("jpipeline.simt.compile", "false");
        try {
            assertFalse(ResumptionScan.scan(body).plain());
            long before = Launch.PLAIN_BLOCKS.sum();
            Kernel.launch(grid, block, 0, body);
            assertEquals(0, Launch.PLAIN_BLOCKS.sum() - before, "no block ran as a plain loop");
        } finally {
            if (old == null) {
                System.clearProperty("jpipeline.simt.compile");
            } else {
                System.setProperty("jpipeline.simt.compile", old);
            }
        }
        checkIndices(out, grid, block);
    }

    @Test
    void aKernelWithAMaskedWarpSyncRunsOnStrands() {
        MemorySegment out = Arena.ofAuto().allocate(8L * 2 * 32);
        KernelBody body = ctx -> {
            ctx.syncWarp(0xffffffff);           // a masked __syncwarp is not compiled yet: strands
            out.setAtIndex(ValueLayout.JAVA_LONG, ctx.globalRank(), ctx.globalRank() * 3 + ctx.threadRank());
        };
        assertFalse(ResumptionScan.scan(body).plain());
        long before = Launch.PLAIN_BLOCKS.sum();
        long compiledBefore = Launch.COMPILED_BLOCKS.sum();
        Kernel.launch(Dim3.of(2), Dim3.of(32), 0, body);
        assertEquals(0, Launch.PLAIN_BLOCKS.sum() - before);
        assertEquals(0, Launch.COMPILED_BLOCKS.sum() - compiledBefore);
        checkIndices(out, Dim3.of(2), Dim3.of(32));
    }
}
