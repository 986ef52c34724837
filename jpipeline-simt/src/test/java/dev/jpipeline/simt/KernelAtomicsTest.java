package dev.jpipeline.simt;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The accessors' atomics, {@code atomicAddInt} (CUDA atomicAdd) and {@code atomicCasInt} (atomicCAS), outside
 * checked execution: they return the old value, lose no update across the blocks that run at once on the runtime's
 * Java threads, and refuse an unaligned int.
 */
@Timeout(60)
class KernelAtomicsTest {

    @Test
    void atomicAddLosesNoUpdateAcrossBlocksAndReturnsEveryOldValueOnce() {
        MemorySegment counter = Arena.ofAuto().allocate(4, 4);
        int blocks = 64;
        int threads = 128;
        int[] seen = new int[blocks * threads];
        Kernel.launch(Dim3.of(blocks), Dim3.of(threads), 0, ctx ->
            seen[(int) ctx.globalRank()] = ctx.atomicAddInt(counter, 0, 1));
        assertEquals(blocks * threads, counter.get(ValueLayout.JAVA_INT, 0));
        java.util.Arrays.sort(seen);
        for (int i = 0; i < seen.length; i++) {
            assertEquals(i, seen[i], "each old value is returned to exactly one thread");
        }
    }

    @Test
    void atomicAddOnSharedMemoryInACompiledKernelCountsTheBlock() {
        MemorySegment out = Arena.ofAuto().allocate(4L * 8, 4);
        Kernel.launch(Dim3.of(8), Dim3.of(64), 4, ctx -> {
            if (ctx.threadRank() == 0) {
                ctx.storeInt(ctx.dynamicShared(), 0, 0);
            }
            ctx.syncThreads();
            ctx.atomicAddInt(ctx.dynamicShared(), 0, ctx.threadRank());
            ctx.syncThreads();
            if (ctx.threadRank() == 0) {
                ctx.storeInt(out, ctx.blockIdx().x(), ctx.loadInt(ctx.dynamicShared(), 0));
            }
        });
        int[] sums = out.toArray(ValueLayout.JAVA_INT);
        int[] expected = new int[8];
        java.util.Arrays.fill(expected, 63 * 64 / 2);
        assertArrayEquals(expected, sums);
    }

    @Test
    void atomicCasWritesOnlyWhenTheExpectedValueIsThereAndReturnsTheOldValue() {
        MemorySegment word = Arena.ofAuto().allocate(8, 4);
        word.setAtIndex(ValueLayout.JAVA_INT, 1, 5);
        int[] olds = new int[2];
        Kernel.launch(Dim3.of(1), Dim3.of(1), 0, ctx -> {
            olds[0] = ctx.atomicCasInt(word, 1, 4, 9);     // 5 is there: no write
            olds[1] = ctx.atomicCasInt(word, 1, 5, 7);     // written
        });
        assertArrayEquals(new int[] {5, 5}, olds);
        assertEquals(7, word.getAtIndex(ValueLayout.JAVA_INT, 1));
    }

    @Test
    void atomicCasElectsExactlyOneWinnerPerBlockAcrossConcurrentBlocks() {
        int blocks = 32;
        MemorySegment flags = Arena.ofAuto().allocate(4L * blocks, 4);
        AtomicInteger winners = new AtomicInteger();
        Kernel.launch(Dim3.of(blocks), Dim3.of(64), 0, ctx -> {
            if (ctx.atomicCasInt(flags, ctx.blockIdx().x(), 0, ctx.threadRank() + 1) == 0) {
                winners.incrementAndGet();
            }
        });
        assertEquals(blocks, winners.get());
        for (int b = 0; b < blocks; b++) {
            int v = flags.getAtIndex(ValueLayout.JAVA_INT, b);
            assertTrue(v >= 1 && v <= 64, "block " + b + " holds its winner's rank + 1: " + v);
        }
    }

    @Test
    void anUnalignedIntIsRefusedWithTheRuleAndTheAddress() {
        MemorySegment unaligned = Arena.ofAuto().allocate(16, 4).asSlice(1, 8);
        KernelFailure f = assertThrows(KernelFailure.class, () -> Kernel.launch(Dim3.of(1), Dim3.of(1), 0,
            ctx -> ctx.atomicAddInt(unaligned, 0, 1)));
        IllegalArgumentException cause = assertInstanceOfCause(f);
        assertTrue(cause.getMessage().startsWith("atomicAdd needs a 4-byte aligned int, as in CUDA: element 0 of a "
            + "segment at address 0x"), cause.getMessage());
        KernelFailure cas = assertThrows(KernelFailure.class, () -> Kernel.launch(Dim3.of(1), Dim3.of(1), 0,
            ctx -> ctx.atomicCasInt(MemorySegment.ofArray(new byte[8]), 0, 0, 1)));
        assertTrue(assertInstanceOfCause(cas).getMessage().startsWith("atomicCAS needs a 4-byte aligned int"),
            cas.getCause().getMessage());
    }

    @Test
    void anIndexOutOfBoundsIsRefused() {
        MemorySegment two = Arena.ofAuto().allocate(8, 4);
        KernelFailure f = assertThrows(KernelFailure.class, () -> Kernel.launch(Dim3.of(1), Dim3.of(1), 0,
            ctx -> ctx.atomicAddInt(two, 2, 1)));
        assertEquals(IndexOutOfBoundsException.class, f.getCause().getClass());
    }

    private static IllegalArgumentException assertInstanceOfCause(KernelFailure f) {
        return org.junit.jupiter.api.Assertions.assertInstanceOf(IllegalArgumentException.class, f.getCause());
    }
}
