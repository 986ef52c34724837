package dev.jpipeline.simt.suite;

import static dev.jpipeline.simt.suite.SuiteKernel.divergent;
import static dev.jpipeline.simt.suite.SuiteKernel.racy;
import static dev.jpipeline.simt.suite.SuiteKernel.raceFree;

import dev.jpipeline.simt.Dim3;
import dev.jpipeline.simt.Kernel;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * The GPUVerify CUDA suite's cooperative-groups kernels that need no grid-wide sync, ported from
 * testsuite/CUDA/cooperative_groups/PATH/kernel.cu of https://github.com/mc-imperial/gpuverify (Ms-PL; see
 * oracle/gpuverify/README.md): {@code synchronize(this_thread_block())} is {@code ctx.block().sync()}. The kernels
 * with {@code synchronize(this_grid())} need a cooperative launch, which checked execution refuses.
 */
final class CooperativeGroupKernels {

    private CooperativeGroupKernels() {
    }

    static List<SuiteKernel> all() {
        return List.of(
            racy("cooperative_groups/fail/race", Dim3.of(2), Dim3.of(32), CooperativeGroupKernels::race),
            divergent("cooperative_groups/fail/divergence_thread_block", Dim3.of(1), Dim3.of(32),
                CooperativeGroupKernels::divergenceThreadBlock),
            raceFree("cooperative_groups/pass/block_barrier", Dim3.of(1), Dim3.of(32),
                CooperativeGroupKernels::blockBarrier));
    }

    /**
     * fail/race: {@code int temp = A[idx + 1]; A[idx] = temp;}: thread idx reads the word that thread idx + 1
     * writes, within a block and (idx = 31) across the two blocks.
     */
    static Object race() {
        MemorySegment a = Buffers.ints(65);
        Kernel.launch(Dim3.of(2), Dim3.of(32), 0, ctx -> {
            int idx = ctx.blockDim().x() * ctx.blockIdx().x() + ctx.threadIdx().x();
            int temp = ctx.loadInt(a, idx + 1);
            ctx.storeInt(a, idx, temp);
        });
        return Buffers.contents(a);
    }

    /**
     * fail/divergence_thread_block: {@code if (idx % 2 == 0) { temp = A[idx + 2]; synchronize(t); A[idx] = temp; }}:
     * the odd threads never reach the block's barrier.
     */
    static Object divergenceThreadBlock() {
        MemorySegment a = Buffers.ints(34);
        Kernel.launch(Dim3.of(1), Dim3.of(32), 0, ctx -> {
            int idx = ctx.blockDim().x() * ctx.blockIdx().x() + ctx.threadIdx().x();
            if (idx % 2 == 0) {
                int temp = ctx.loadInt(a, idx + 2);
                ctx.block().sync();
                ctx.storeInt(a, idx, temp);
            }
        });
        return Buffers.contents(a);
    }

    /** pass/block_barrier: {@code temp = A[idx + 1]; synchronize(t); A[idx] = temp;}: the barrier orders them. */
    static Object blockBarrier() {
        return blockBarrier(true);
    }

    /** block_barrier, with its barrier or (to show that it is what makes the kernel race-free) without. */
    static Object blockBarrier(boolean synchronize) {
        MemorySegment a = Buffers.ints(33);
        Kernel.launch(Dim3.of(1), Dim3.of(32), 0, ctx -> {
            int idx = ctx.blockDim().x() * ctx.blockIdx().x() + ctx.threadIdx().x();
            int temp = ctx.loadInt(a, idx + 1);
            if (synchronize) {
                ctx.block().sync();
            }
            ctx.storeInt(a, idx, temp);
        });
        return Buffers.contents(a);
    }
}
