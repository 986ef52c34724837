package dev.jpipeline.simt.suite;

import static dev.jpipeline.simt.suite.SuiteKernel.racy;
import static dev.jpipeline.simt.suite.SuiteKernel.raceFree;

import dev.jpipeline.simt.Dim3;
import dev.jpipeline.simt.Kernel;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;

/**
 * The GPUVerify CUDA suite's {@code atomicAdd} kernels (testsuite/CUDA/atomics/PATH/kernel.cu of
 * https://github.com/mc-imperial/gpuverify, Ms-PL; see oracle/gpuverify/README.md): {@code j = atomicAdd(i, d);
 * A[j] = tid;} with two threads and the counter at 0. Whether two threads get the same j depends on d, and for
 * add_tid (thread 0 adds 0, thread 1 adds 1: the same slot 0 when thread 0 adds first) on which thread adds
 * first. Which thread takes which slot is the atomics' order, which a correct
 * kernel may leave open: a run returns the counter and the slots' values sorted, the same under every order.
 */
final class AtomicKernels {

    private AtomicKernels() {
    }

    static List<SuiteKernel> all() {
        return List.of(
            raceFree("atomics/add_one", Dim3.of(1), Dim3.of(2), () -> addThenStore(1, 1)),
            racy("atomics/add_tid", Dim3.of(1), Dim3.of(2), () -> addThenStore(0, 1)),
            racy("atomics/add_zero", Dim3.of(1), Dim3.of(2), () -> addThenStore(0, 0)));
    }

    /** {@code j = atomicAdd(i, d); A[j] = tid;} where thread 0 adds {@code delta0} and thread 1 {@code delta1}. */
    static Object addThenStore(int delta0, int delta1) {
        MemorySegment counter = Buffers.ints(1, 0);
        MemorySegment a = Buffers.ints(2);
        Kernel.launch(Dim3.of(1), Dim3.of(2), 0, ctx -> {
            int tid = ctx.threadIdx().x();
            int j = ctx.atomicAddInt(counter, 0, tid == 0 ? delta0 : delta1);
            ctx.storeInt(a, j, tid);
        });
        int[] slots = Buffers.contents(a);
        Arrays.sort(slots);
        return List.of(Buffers.contents(counter)[0], Arrays.toString(slots));
    }
}
