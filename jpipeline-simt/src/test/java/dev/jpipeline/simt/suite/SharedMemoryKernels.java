package dev.jpipeline.simt.suite;

import static dev.jpipeline.simt.suite.SuiteKernel.racy;
import static dev.jpipeline.simt.suite.SuiteKernel.raceFree;
import static dev.jpipeline.simt.suite.SuiteKernel.raceFreeReadingUninitialized;

import dev.jpipeline.simt.Dim3;
import dev.jpipeline.simt.Kernel;
import dev.jpipeline.simt.KernelContext;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

/**
 * The GPUVerify CUDA suite's kernels whose accesses are to {@code __shared__} arrays (some also write global
 * memory), ported from testsuite/CUDA/PATH/kernel.cu of https://github.com/mc-imperial/gpuverify (Ms-PL; see
 * oracle/gpuverify/README.md). Each {@code __shared__ T a[n]} is a {@code sharedArray}; each access goes through
 * the context's accessors. Launches are those of the CUDA twins in oracle/gpuverify.
 */
final class SharedMemoryKernels {

    private static final int[] NO_OUTPUT = {};

    private SharedMemoryKernels() {
    }

    static List<SuiteKernel> all() {
        return List.of(
            racy("fail_tests/race_on_shared", Dim3.of(1), Dim3.of(16), SharedMemoryKernels::raceOnShared),
            racy("fail_tests/shared_int", Dim3.of(2), Dim3.of(16), SharedMemoryKernels::sharedInt),
            racy("loop_unwind", Dim3.of(2), Dim3.of(16), SharedMemoryKernels::loopUnwind),
            racy("pointertests/cast", Dim3.of(2), Dim3.of(16), SharedMemoryKernels::cast),
            raceFree("basicbarrier", Dim3.of(2), Dim3.of(16), SharedMemoryKernels::basicBarrier),
            raceFree("barrierconditionalkernelparam", Dim3.of(2), Dim3.of(16),
                SharedMemoryKernels::barrierConditionalKernelParam),
            raceFree("ctimeslid", Dim3.of(2), Dim3.of(16), SharedMemoryKernels::cTimesLid),
            raceFree("local2darrayaccess", Dim3.of(2), Dim3.of(10), SharedMemoryKernels::local2dArrayAccess),
            raceFreeReadingUninitialized("localarrayaccess", Dim3.of(2), Dim3.of(10),
                SharedMemoryKernels::localArrayAccess),
            raceFreeReadingUninitialized("misc/pass/misc1", Dim3.of(1), Dim3.of(64), SharedMemoryKernels::misc1),
            raceFree("pointertests/test8", Dim3.of(2), Dim3.of(10), () -> sharedIndexedByThread(10, 0)),
            raceFree("pointertests/test9", Dim3.of(2), Dim3.of(10), () -> sharedIndexedByThread(10, 0)),
            raceFree("pointertests/test10", Dim3.of(2), Dim3.of(10), () -> sharedIndexedByThread(11, 1)),
            raceFree("pointertests/test11", Dim3.of(2), Dim3.of(10), SharedMemoryKernels::test11),
            raceFreeReadingUninitialized("scope", Dim3.of(1), Dim3.of(64), SharedMemoryKernels::scope),
            raceFree("transitiveclosure", Dim3.of(1, 1), Dim3.of(8, 8), SharedMemoryKernels::transitiveClosure));
    }

    /** {@code __shared__ int A[16]; A[0] = threadIdx.x;}: every thread writes A[0]. */
    static Object raceOnShared() {
        Kernel.launch(Dim3.of(1), Dim3.of(16), 0, ctx -> {
            MemorySegment a = ctx.sharedArray("A", 16 * 4);
            ctx.storeInt(a, 0, ctx.threadIdx().x());
        });
        return NO_OUTPUT;
    }

    /** {@code __shared__ int a; a = threadIdx.x;}. */
    static Object sharedInt() {
        Kernel.launch(Dim3.of(2), Dim3.of(16), 0, ctx -> {
            MemorySegment a = ctx.sharedArray("a", 4);
            ctx.storeInt(a, 0, ctx.threadIdx().x());
        });
        return NO_OUTPUT;
    }

    /** {@code for (i < 10) B[i] = A[i];}: every thread of a block writes B[0..9] (with equal values). */
    static Object loopUnwind() {
        MemorySegment input = Buffers.floats(10);
        Kernel.launch(Dim3.of(2), Dim3.of(16), 0, ctx -> {
            MemorySegment b = ctx.sharedArray("B", 256 * 4);
            for (int i = 0; i < 10; i++) {
                ctx.storeFloat(b, i, ctx.loadFloat(input, i));
            }
        });
        return NO_OUTPUT;
    }

    /** {@code __shared__ unsigned char x[32]; ((unsigned int *) x)[i] = threadIdx.x} for the 8 words of x. */
    static Object cast() {
        Kernel.launch(Dim3.of(2), Dim3.of(16), 0, ctx -> {
            MemorySegment x = ctx.sharedArray("x", 32);
            for (int i = 0; i < 32 / 4; i++) {
                ctx.storeInt(x, i, ctx.threadIdx().x());
            }
        });
        return NO_OUTPUT;
    }

    /** {@code int a, b, c; a = 2; b = 3; c = a + b; __syncthreads();}: locals only, then the barrier. */
    static Object basicBarrier() {
        Kernel.launch(Dim3.of(2), Dim3.of(16), 0, ctx -> {
            int a = 2;
            int b = 3;
            int c = a + b;  // never used, as in the CUDA kernel
            ctx.syncThreads();
        });
        return NO_OUTPUT;
    }

    /** {@code if (x == 0) __syncthreads();} with x = 0: a barrier under a uniform condition. */
    static Object barrierConditionalKernelParam() {
        int x = 0;
        Kernel.launch(Dim3.of(2), Dim3.of(16), 0, ctx -> {
            if (x == 0) {
                ctx.syncThreads();
            }
        });
        return NO_OUTPUT;
    }

    /** {@code A[i + threadIdx.x * WIDTH] = threadIdx.x} for i < WIDTH = 8: each thread its own run of A. */
    static Object cTimesLid() {
        int width = 8;
        Kernel.launch(Dim3.of(2), Dim3.of(16), 0, ctx -> {
            MemorySegment a = ctx.sharedArray("A", 16L * width * 4);
            for (int i = 0; i < width; i++) {
                ctx.storeInt(a, i + ctx.threadIdx().x() * width, ctx.threadIdx().x());
            }
        });
        return NO_OUTPUT;
    }

    /** {@code __shared__ int A[10][10]; A[threadIdx.y][threadIdx.x] = 2;}. */
    static Object local2dArrayAccess() {
        Kernel.launch(Dim3.of(2), Dim3.of(10), 0, ctx -> {
            MemorySegment a = ctx.sharedArray("A", 10 * 10 * 4);
            ctx.storeInt(a, ctx.threadIdx().y() * 10L + ctx.threadIdx().x(), 2);
        });
        return NO_OUTPUT;
    }

    /**
     * {@code A[threadIdx.x] = 2; __syncthreads(); int x = A[threadIdx.x + 1];} with A[11] and 10 threads: the
     * barrier orders the neighbour's write; thread 9 reads A[10], which nothing wrote.
     */
    static Object localArrayAccess() {
        Kernel.launch(Dim3.of(2), Dim3.of(10), 0, ctx -> {
            MemorySegment a = ctx.sharedArray("A", 11 * 4);
            ctx.storeInt(a, ctx.threadIdx().x(), 2);
            ctx.syncThreads();
            ctx.loadInt(a, ctx.threadIdx().x() + 1);
        });
        return NO_OUTPUT;
    }

    /**
     * misc/pass/misc1 with x = 143 (its {@code __requires}): {@code S[(i + warp) * 32 + lane] = F[i + warp]}; each
     * thread writes its own words of S. F is never written: the first read of it is uninitialized.
     */
    static Object misc1() {
        int x = 143;
        Kernel.launch(Dim3.of(1), Dim3.of(64), 0, ctx -> {
            MemorySegment s = ctx.sharedArray("S", 256 * 32 * 4);
            MemorySegment f = ctx.sharedArray("F", 256 * 4);
            int tid = ctx.threadIdx().x();
            for (int i = 0; i < x; i += ctx.blockDim().x() / 32) {
                if (i + tid / 32 < x) {
                    int idx = (i + tid / 32) * 32 + tid % 32;
                    ctx.storeFloat(s, idx, ctx.loadFloat(f, i + tid / 32));
                }
            }
        });
        return NO_OUTPUT;
    }

    /**
     * pointertests/test8, test9, test10: {@code __shared__ int A[size]; int *p = A + offset; p[threadIdx.x] = 0;}.
     */
    static Object sharedIndexedByThread(int size, int offset) {
        Kernel.launch(Dim3.of(2), Dim3.of(10), 0, ctx -> {
            MemorySegment a = ctx.sharedArray("A", size * 4L);
            MemorySegment p = a.asSlice(4L * offset);
            ctx.storeInt(p, ctx.threadIdx().x(), 0);
        });
        return NO_OUTPUT;
    }

    /** pointertests/test11: {@code bar(A)} with {@code bar(int *p) { p[threadIdx.x] = 0; }}. */
    static Object test11() {
        Kernel.launch(Dim3.of(2), Dim3.of(10), 0, ctx -> bar(ctx, ctx.sharedArray("A", 10 * 4)));
        return NO_OUTPUT;
    }

    private static void bar(KernelContext ctx, MemorySegment p) {
        ctx.storeInt(p, ctx.threadIdx().x(), 0);
    }

    /**
     * scope: each thread flushes its column of the first 16 rows of a 64 x 64 histogram, {@code __syncthreads},
     * then sums row {@code threadIdx.x}. Rows 16 and up were never flushed: thread 16's sum reads uninitialized
     * memory (a real initcheck error, not a race).
     */
    static Object scope() {
        int binCount = 64;
        int threadN = 64;
        MemorySegment result = Buffers.ints(binCount);
        Kernel.launch(Dim3.of(1), Dim3.of(64), 0, ctx -> {
            MemorySegment hist = ctx.sharedArray("s_Hist", (long) threadN * binCount * 4);
            int tid = ctx.threadIdx().x();
            for (int i = 0; i < binCount / 4; i++) {
                ctx.storeInt(hist, tid + i * threadN, 0);
            }
            ctx.syncThreads();
            if (tid < binCount) {
                int sum = 0;
                int valueBase = tid * threadN;
                int accumPos = (tid & 15) * 4;
                for (int i = 0; i < threadN; i++) {
                    sum += ctx.loadInt(hist, valueBase + accumPos);
                    accumPos++;
                    if (accumPos == threadN) {
                        accumPos = 0;
                    }
                }
                ctx.storeInt(result, ctx.blockIdx().x() * binCount + tid, sum);
            }
        });
        return Buffers.contents(result);
    }

    /**
     * transitiveclosure (stage 1, passnum 0) on an 8 x 8 tile of a 64 x 64 graph: load the tile into shared
     * memory, {@code __syncthreads}, then 8 rounds that each read row and column k and write the thread's own cell,
     * each followed by {@code __syncthreads}; write the tile back.
     */
    static Object transitiveClosure() {
        return transitiveClosure(true);
    }

    /** transitiveclosure with its barriers or (to show that they are what makes it race-free) without. */
    static Object transitiveClosure(boolean barriers) {
        int vertices = 64;
        int blockDim = 8;
        MemorySegment graph = Buffers.ints(vertices * vertices, 0);
        int[] edges = {1, 1, 0, 1, 0, 0, 1, 0};
        for (int i = 0; i < edges.length; i++) {
            graph.setAtIndex(ValueLayout.JAVA_INT, i, edges[i]);
        }
        int passnum = 0;
        Kernel.launch(Dim3.of(1, 1), Dim3.of(8, 8), 0, ctx -> {
            MemorySegment buffer = ctx.sharedArray("primary_block_buffer", blockDim * blockDim * 4);
            int ty = ctx.threadIdx().y();
            int tx = ctx.threadIdx().x();
            int idxY = passnum * blockDim + ty;
            int idxX = passnum * blockDim + tx;
            ctx.storeInt(buffer, ty * blockDim + tx, ctx.loadInt(graph, idxY * vertices + idxX));
            if (barriers) {
                ctx.syncThreads();
            }
            for (int k = 0; k < blockDim; ++k) {
                if (ctx.loadInt(buffer, ty * blockDim + tx) == 0) {
                    if (ctx.loadInt(buffer, ty * blockDim + k) != 0 && ctx.loadInt(buffer, k * blockDim + tx) != 0) {
                        ctx.storeInt(buffer, ty * blockDim + tx, passnum * blockDim + k + 2);
                    }
                }
                if (barriers) {
                    ctx.syncThreads();
                }
            }
            ctx.storeInt(graph, idxY * vertices + idxX, ctx.loadInt(buffer, ty * blockDim + tx));
        });
        return Buffers.contents(graph);
    }
}
