package dev.jpipeline.simt.suite;

import static dev.jpipeline.simt.suite.SuiteKernel.assumedRaceFree;

import dev.jpipeline.simt.Dim3;
import dev.jpipeline.simt.Kernel;
import dev.jpipeline.simt.KernelContext;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * GPUVerify CUDA kernels labelled {@code //pass} only under an assumption that CUDA does not give (see
 * {@link Label#ASSUMED_RACE_FREE}), ported from testsuite/CUDA/PATH/kernel.cu of
 * https://github.com/mc-imperial/gpuverify (Ms-PL; see oracle/gpuverify/README.md): three warp-synchronous
 * kernels verified with {@code --warp-sync=32}, and one whose threads all write the same value to one word.
 */
final class AssumptionKernels {

    private static final Dim3 ONE = Dim3.of(1);
    private static final Dim3 TWO_WARPS = Dim3.of(64);

    private AssumptionKernels() {
    }

    static List<SuiteKernel> all() {
        return List.of(
            assumedRaceFree("warpsync/shuffle", ONE, TWO_WARPS, AssumptionKernels::shuffle),
            assumedRaceFree("warpsync/scan_warp", ONE, TWO_WARPS, AssumptionKernels::scanWarp),
            assumedRaceFree("warpsync/intragroup_scan", ONE, TWO_WARPS, AssumptionKernels::intragroupScan),
            assumedRaceFree("pointertests/test_copy_between_pointers", Dim3.of(2), Dim3.of(16),
                AssumptionKernels::copyBetweenPointers));
    }

    /** warpsync/shuffle: {@code A[tid] = B[(tid + 1) % 32]} with B the warp's 32 words, no {@code __syncwarp}. */
    static Object shuffle() {
        MemorySegment a = Buffers.ints(64);
        Kernel.launch(ONE, TWO_WARPS, 0, ctx -> {
            int tid = ctx.threadIdx().x();
            ctx.storeInt(a, tid, ctx.loadInt(a, tid / 32 * 32 + (tid + 1) % 32));
        });
        return Buffers.contents(a);
    }

    /** warpsync/scan_warp: an in-place inclusive scan of each warp's 32 words, no {@code __syncwarp}. */
    static Object scanWarp() {
        MemorySegment a = Buffers.ints(64);
        Kernel.launch(ONE, TWO_WARPS, 0, ctx -> scanInPlace(ctx, a));
        return Buffers.contents(a);
    }

    /**
     * warpsync/intragroup_scan: scan_warp on A, {@code __syncthreads}, lane 31 keeps its warp's total in
     * {@code temp}, a local array of each thread (so warp 0's scan of it, and the final {@code A[tid] +=
     * temp[tid / 32]}, read the thread's own, mostly uninitialized, locals: 0 here), with a {@code __syncthreads}
     * after each step. The race is scan_warp's, on A.
     */
    static Object intragroupScan() {
        MemorySegment a = Buffers.ints(64);
        Kernel.launch(ONE, TWO_WARPS, 0, ctx -> {
            int tid = ctx.threadIdx().x();
            int lane = tid % 32;
            int[] temp = new int[32];
            scanInPlace(ctx, a);
            ctx.syncThreads();
            if (lane == 31) {
                temp[tid / 32] = ctx.loadInt(a, tid);
            }
            ctx.syncThreads();
            if (tid / 32 == 0) {
                scanLocal(temp, tid);
            }
            ctx.syncThreads();
            ctx.storeInt(a, tid, ctx.loadInt(a, tid) + temp[tid / 32]);
        });
        return Buffers.contents(a);
    }

    private static void scanInPlace(KernelContext ctx, MemorySegment a) {
        int tid = ctx.threadIdx().x();
        int lane = tid % 32;
        for (int step = 1; step < 32; step *= 2) {
            if (lane >= step) {
                ctx.storeInt(a, tid, ctx.loadInt(a, tid - step) + ctx.loadInt(a, tid));
            }
        }
    }

    private static void scanLocal(int[] a, int tid) {
        int lane = tid % 32;
        for (int step = 1; step < 32; step *= 2) {
            if (lane >= step) {
                a[tid] = a[tid - step] + a[tid];
            }
        }
    }

    /**
     * pointertests/test_copy_between_pointers: {@code x = p; x[0] = 0; x = A; x[0] = 0;}: every thread writes 0
     * to p[0] in global memory and to A[0] in shared memory.
     */
    static Object copyBetweenPointers() {
        MemorySegment p = Buffers.ints(1);
        Kernel.launch(Dim3.of(2), Dim3.of(16), 0, ctx -> {
            MemorySegment x = p;
            ctx.storeInt(x, 0, 0);
            x = ctx.sharedArray("A", 10 * 4);
            ctx.storeInt(x, 0, 0);
        });
        return Buffers.contents(p);
    }
}
