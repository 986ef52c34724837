package dev.jpipeline.simt.suite;

import static dev.jpipeline.simt.suite.SuiteKernel.racy;
import static dev.jpipeline.simt.suite.SuiteKernel.raceFree;

import dev.jpipeline.simt.Dim3;
import dev.jpipeline.simt.Kernel;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * The GPUVerify CUDA suite's {@code atomicAdd} kernels (testsuite/CUDA/atomics/PATH/kernel.cu of
 * https://github.com/mc-imperial/gpuverify, Ms-PL; see oracle/gpuverify/README.md): {@code j = atomicAdd(i, d);
 * A[j] = tid;} with two threads and the counter at 0. Whether two threads get the same j depends on d, and for
 * add_tid on which thread adds first. Which thread takes which slot is the atomics' order, which a correct
 * kernel may leave open: a run returns the counter and the slots' values sorted, the same under every order.
 */
final class AtomicKernels {

    private AtomicKernels() {
    }

    static List<SuiteKernel> all() {
        return List.of(
            raceFree("atomics/add_one", Dim3.of(1), Dim3.of(2), () -> addThenStore(Delta.ONE)),
            racy("atomics/add_tid", Dim3.of(1), Dim3.of(2), () -> addThenStore(Delta.THREAD_INDEX)),
            racy("atomics/add_zero", Dim3.of(1), Dim3.of(2), () -> addThenStore(Delta.ZERO)));
    }

    /** What each thread adds to the counter. */
    enum Delta {
        /** Distinct slots: 0 and 1. */
        ONE,
        /** Thread 0 adds 0 and thread 1 adds 1: the same slot 0 when thread 0 adds first, else 1 and 0. */
        THREAD_INDEX,
        /** Both get slot 0. */
        ZERO
    }

    static Object addThenStore(Delta delta) {
        MemorySegment counter = Buffers.ints(1, 0);
        MemorySegment a = Buffers.ints(2);
        Kernel.launch(Dim3.of(1), Dim3.of(2), 0, ctx -> {
            int tid = ctx.threadIdx().x();
            int d = switch (delta) {
                case ONE -> 1;
                case THREAD_INDEX -> tid;
                case ZERO -> 0;
            };
            int j = ctx.atomicAddInt(counter, 0, d);
            ctx.storeInt(a, j, tid);
        });
        int[] slots = Buffers.contents(a);
        java.util.Arrays.sort(slots);
        return List.of(Buffers.contents(counter)[0], java.util.Arrays.toString(slots));
    }
}
