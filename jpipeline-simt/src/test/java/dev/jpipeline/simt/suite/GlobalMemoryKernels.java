package dev.jpipeline.simt.suite;

import static dev.jpipeline.simt.suite.SuiteKernel.racy;
import static dev.jpipeline.simt.suite.SuiteKernel.raceFree;

import dev.jpipeline.simt.Dim3;
import dev.jpipeline.simt.Kernel;
import dev.jpipeline.simt.KernelContext;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * The GPUVerify CUDA suite's kernels that access global memory only (arrays the host allocates and passes in),
 * ported from testsuite/CUDA/PATH/kernel.cu of https://github.com/mc-imperial/gpuverify (Ms-PL; see
 * oracle/gpuverify/README.md). A {@code char} array becomes an int array here, one word per element: the
 * accessors watch 4-byte words, and so would see neighbouring bytes written by different threads as one word.
 * A {@code __constant__} table is a global segment the kernel only reads. Launches and inputs are those of the
 * CUDA twins in oracle/gpuverify.
 */
final class GlobalMemoryKernels {

    private static final Dim3 TWO = Dim3.of(2);
    private static final Dim3 SIXTEEN = Dim3.of(16);
    private static final Dim3 ONE = Dim3.of(1);
    private static final Dim3 WARP = Dim3.of(32);

    private GlobalMemoryKernels() {
    }

    static List<SuiteKernel> all() {
        List<SuiteKernel> all = new ArrayList<>();
        for (String kind : List.of("array", "inherit", "struct_char", "struct_float", "struct_nested")) {
            all.add(racy("fresh_arrays/fail/" + kind, TWO, SIXTEEN, GlobalMemoryKernels::freshArrayFail));
        }
        for (String kind : List.of("array", "inherit", "struct_char", "struct_float")) {
            all.add(raceFree("fresh_arrays/pass/" + kind, TWO, SIXTEEN, GlobalMemoryKernels::freshArrayPass));
        }
        all.addAll(List.of(
            racy("misc/fail/miscfail3", ONE, WARP, GlobalMemoryKernels::addNeighbour),
            racy("misc/fail/miscfail4", ONE, WARP, GlobalMemoryKernels::addNeighbour),
            racy("param_values/value_causing_race", ONE, Dim3.of(256), GlobalMemoryKernels::valueCausingRace),
            racy("pointeranalysistests/testbasicaliasing", TWO, SIXTEEN, GlobalMemoryKernels::basicAliasing),
            racy("warpsync/bad_inter_group", TWO, SIXTEEN, GlobalMemoryKernels::badInterGroup),
            racy("warpsync/broken_shuffle", ONE, Dim3.of(64), GlobalMemoryKernels::brokenShuffle),
            racy("globalarray/fail", ONE, Dim3.of(8), GlobalMemoryKernels::globalArrayFail),
            raceFree("align", TWO, TWO, GlobalMemoryKernels::align),
            raceFree("basicglobalarray", ONE, WARP, () -> storeAtThread(ONE, WARP, 0, 2)),
            raceFree("ctimesgid", TWO, SIXTEEN, GlobalMemoryKernels::cTimesGid),
            raceFree("large_constant_array", TWO, WARP, GlobalMemoryKernels::largeConstantArray),
            raceFree("memset/initstruct", ONE, SIXTEEN, () -> storeStructAtThread(ONE, SIXTEEN, 4)),
            raceFree("memset_simplification", TWO, SIXTEEN, () -> storeStructAtThread(TWO, SIXTEEN, 3)),
            raceFree("misc/pass/misc2", ONE, WARP, () -> storeAtThread(ONE, WARP, 0, -1)),
            raceFree("misc/pass/misc8", ONE, WARP, GlobalMemoryKernels::misc8),
            raceFree("mul24", TWO, SIXTEEN, GlobalMemoryKernels::mul24),
            raceFree("noraceduetoreturn", ONE, WARP, GlobalMemoryKernels::noRaceDueToReturn),
            raceFree("pointers_in_structs/test1", TWO, TWO, () -> storeAtThread(TWO, TWO, 0, -1)),
            raceFree("pointers_in_structs/test2", TWO, TWO, () -> storeAtThread(TWO, TWO, 0, -1)),
            raceFree("pointers_in_structs/test3", TWO, TWO, () -> storeAtThread(TWO, TWO, 0, -1)),
            raceFree("pointers_in_structs/test4", TWO, TWO, GlobalMemoryKernels::pointersInStructs4),
            raceFree("pointertests/test1", ONE, WARP, () -> storeAtThread(ONE, WARP, 0, 0)),
            raceFree("pointertests/test2", ONE, WARP, () -> storeAtThread(ONE, WARP, 0, 0)),
            raceFree("pointertests/test3", ONE, WARP, () -> storeAtThread(ONE, WARP, 1, 0)),
            raceFree("pointertests/test4", ONE, WARP, () -> storeAtThread(ONE, WARP, 0, 0)),
            raceFree("pointertests/test5", ONE, WARP, () -> storeAtThread(ONE, WARP, 0, 0)),
            raceFree("pointertests/test6", ONE, WARP, () -> storeAtThread(ONE, WARP, 0, 0)),
            raceFree("pointertests/test13", ONE, WARP, () -> storeAtThread(ONE, WARP, 0, -1)),
            raceFree("pointertests/test_pass_value_from_array", TWO, SIXTEEN, () -> readOne(Buffers.ints(1), 0)),
            raceFree("pointeranalysistests/testinterprocedural2", TWO, SIXTEEN,
                () -> readOne(Buffers.ints(1, 5), 0)),
            raceFree("pointeranalysistests/testinterprocedural3", TWO, SIXTEEN,
                () -> readOne(Buffers.ints(1, 1), 0)),
            raceFree("memcpy_simplification/array_element_passed_to_call1", TWO, SIXTEEN,
                () -> readOne(Buffers.ints(2), 0)),
            raceFree("memcpy_simplification/array_element_passed_to_call2", TWO, SIXTEEN,
                () -> readOne(Buffers.ints(2), 1)),
            raceFree("reduced_strength_blockwise", TWO, SIXTEEN, GlobalMemoryKernels::reducedStrengthBlockwise),
            raceFree("reduced_strength_with_requires", ONE, SIXTEEN, GlobalMemoryKernels::reducedStrengthWithRequires),
            raceFree("store_in_byval_function", TWO, SIXTEEN, () -> storeAtThread(TWO, SIXTEEN, 0, 42)),
            raceFree("ternarytest", ONE, WARP, GlobalMemoryKernels::ternary),
            raceFree("ternarytest2", ONE, WARP, GlobalMemoryKernels::ternary),
            raceFree("test_for_get_group_id", ONE, WARP, GlobalMemoryKernels::testForGetGroupId),
            raceFree("warpsize", TWO, SIXTEEN, () -> storeAtThread(TWO, SIXTEEN, 0, Kernel.WARP_SIZE))));
        return all;
    }

    private static int globalId(KernelContext ctx) {
        return ctx.threadIdx().x() + ctx.blockIdx().x() * ctx.blockDim().x();
    }

    /**
     * fresh_arrays/fail/*: {@code q.p[0] = threadIdx.x} (q.p[4][0] for the array of pointers, q.v.p[0] for the
     * nested struct): every thread writes element 0 of the one array the struct points to.
     */
    static Object freshArrayFail() {
        MemorySegment p = Buffers.floats(64);
        Kernel.launch(TWO, SIXTEEN, 0, ctx -> ctx.storeFloat(p, 0, ctx.threadIdx().x()));
        return Buffers.contents(p);
    }

    /** fresh_arrays/pass/*: {@code q.p[threadIdx.x + blockIdx.x * blockDim.x] = 4.2f} (42 for char). */
    static Object freshArrayPass() {
        MemorySegment p = Buffers.floats(64);
        Kernel.launch(TWO, SIXTEEN, 0, ctx -> ctx.storeFloat(p, globalId(ctx), 4.2f));
        return Buffers.contents(p);
    }

    /**
     * misc/fail/miscfail3 and miscfail4, offset = 1: {@code int temp = A[tid + offset]; A[tid] += temp;}: thread t
     * reads A[t + 1], which thread t + 1 writes.
     */
    static Object addNeighbour() {
        MemorySegment a = Buffers.ints(33);
        int offset = 1;
        Kernel.launch(ONE, WARP, 0, ctx -> {
            int tid = ctx.threadIdx().x();
            int temp = ctx.loadInt(a, tid + offset);
            ctx.storeInt(a, tid, ctx.loadInt(a, tid) + temp);
        });
        return Buffers.contents(a);
    }

    /**
     * param_values/value_causing_race with x = 185, the value GPUVerify's counterexample names: thread 15 writes
     * A[15 + x] = A[200], which thread 200 writes too.
     */
    static Object valueCausingRace() {
        MemorySegment a = Buffers.floats(256);
        int x = 185;
        Kernel.launch(ONE, Dim3.of(256), 0, ctx -> {
            int tid = ctx.threadIdx().x();
            if (tid == 15) {
                ctx.storeFloat(a, tid + x, tid);
            }
            if (tid == 200) {
                ctx.storeFloat(a, tid, tid);
            }
        });
        return Buffers.contents(a);
    }

    /**
     * pointeranalysistests/testbasicaliasing: a = 10, so the else branch runs ({@code p = q; q = p;}) and every
     * thread does {@code p[100] = q[100] + 1} on the same word. Its write {@code d[1] = 200} goes to a local
     * variable (out of its bounds), not to shared or global memory, and is left out.
     */
    static Object basicAliasing() {
        MemorySegment p0 = Buffers.ints(101);
        MemorySegment q0 = Buffers.ints(101);
        MemorySegment r = Buffers.ints(101);
        Kernel.launch(TWO, SIXTEEN, 0, ctx -> {
            int a = 10;
            MemorySegment p = p0;
            MemorySegment q = q0;
            if (!(a > 10)) {
                p = q;
                q = p;
            }
            ctx.storeInt(p, 100, ctx.loadInt(q, 100) + 1);
        });
        return Buffers.contents(p0, q0, r);
    }

    /**
     * warpsync/bad_inter_group: {@code A[b * n + t] += A[(b + 1) * n + t]}: block 0 reads the words that block 1
     * writes, and nothing orders two blocks.
     */
    static Object badInterGroup() {
        MemorySegment a = Buffers.ints(48);
        Kernel.launch(TWO, SIXTEEN, 0, ctx -> {
            int n = ctx.blockDim().x();
            int b = ctx.blockIdx().x();
            int t = ctx.threadIdx().x();
            int next = ctx.loadInt(a, (b + 1) * n + t);
            ctx.storeInt(a, b * n + t, ctx.loadInt(a, b * n + t) + next);
        });
        return Buffers.contents(a);
    }

    /**
     * warpsync/broken_shuffle: {@code int *B = A + warp * 32; A[tid] = B[(tid + 1) % 32];}: each lane reads the
     * word its neighbour writes, with no {@code __syncwarp} (GPUVerify fails it under 16-lane warps; since Volta,
     * lanes of a 32-lane warp are not in lockstep either).
     */
    static Object brokenShuffle() {
        MemorySegment a = Buffers.ints(64);
        Kernel.launch(ONE, Dim3.of(64), 0, ctx -> {
            int tid = ctx.threadIdx().x();
            int warp = tid / 32;
            ctx.storeInt(a, tid, ctx.loadInt(a, warp * 32 + (tid + 1) % 32));
        });
        return Buffers.contents(a);
    }

    /**
     * globalarray/fail: {@code if (A[i] != threadIdx.x) p[0] = threadIdx.x;} over a {@code __constant__} table
     * that GPUVerify lets the host change. The host writes zeros (the racy path): threads 1 to 7 write p[0].
     */
    static Object globalArrayFail() {
        MemorySegment constants = Buffers.ints(8, 0);
        MemorySegment p = Buffers.floats(1);
        Kernel.launch(ONE, Dim3.of(8), 0, ctx -> {
            int i = ctx.threadIdx().x();
            if (ctx.loadInt(constants, i) != i) {
                ctx.storeFloat(p, 0, i);
            }
        });
        return Buffers.contents(p);
    }

    /**
     * align: {@code A[idx].tid = tid; A[idx].bid = bid;} over a struct aligned to 64 bytes (16 words), so that
     * element idx's fields are words 16 idx and 16 idx + 1.
     */
    static Object align() {
        MemorySegment a = Buffers.bytes(4 * 64);
        Kernel.launch(TWO, TWO, 0, ctx -> {
            int idx = ctx.blockDim().x() * ctx.blockIdx().x() + ctx.threadIdx().x();
            ctx.storeInt(a, 16L * idx, ctx.threadIdx().x());
            ctx.storeInt(a, 16L * idx + 1, ctx.blockIdx().x());
        });
        return Buffers.contents(a);
    }

    /**
     * The suite's many {@code p[offset + global id] = value} kernels (value -1: the thread's own index, as in
     * {@code p[threadIdx.x] = threadIdx.x}); each thread its own word.
     */
    static Object storeAtThread(Dim3 grid, Dim3 block, int offset, int value) {
        MemorySegment p = Buffers.ints(grid.x() * block.x() + offset);
        Kernel.launch(grid, block, 0, ctx -> {
            int id = globalId(ctx);
            ctx.storeInt(p, offset + id, value == -1 ? ctx.threadIdx().x() : value);
        });
        return Buffers.contents(p);
    }

    /**
     * memset/initstruct ({@code out[threadIdx.x] = uint4{0, 0, 0, 0}}) and memset_simplification
     * ({@code q[gid] = s{0, 0, 0}}): each thread writes the words of its own struct.
     */
    static Object storeStructAtThread(Dim3 grid, Dim3 block, int words) {
        MemorySegment out = Buffers.ints(grid.x() * block.x() * words);
        Kernel.launch(grid, block, 0, ctx -> {
            int id = globalId(ctx);
            for (int w = 0; w < words; w++) {
                ctx.storeInt(out, (long) id * words + w, 0);
            }
        });
        return Buffers.contents(out);
    }

    /** ctimesgid, WIDTH = 8: {@code A[i + gid * WIDTH] = gid} for i < WIDTH. */
    static Object cTimesGid() {
        int width = 8;
        MemorySegment a = Buffers.ints(32 * width);
        Kernel.launch(TWO, SIXTEEN, 0, ctx -> {
            int gid = globalId(ctx);
            for (int i = 0; i < width; i++) {
                ctx.storeInt(a, i + gid * width, gid);
            }
        });
        return Buffers.contents(a);
    }

    /** large_constant_array: {@code int x = A[threadIdx.x] + B[0];} over two {@code __constant__} tables. */
    static Object largeConstantArray() {
        MemorySegment a = Buffers.ints(4096, 0);
        MemorySegment b = Buffers.ints(3);
        Kernel.launch(TWO, WARP, 0, ctx -> {
            ctx.loadInt(a, ctx.threadIdx().x());  // int x = A[threadIdx.x] + B[0]; x is never used
            ctx.loadInt(b, 0);
        });
        return Buffers.contents(a, b);
    }

    /**
     * misc/pass/misc8 with c = 1: {@code bar(&choice1, &choice2)} twice, where bar copies
     * {@code (*in)[threadIdx.x]} to {@code out[0][threadIdx.x]} and then sets {@code *out = *in}: the first call
     * copies A[tid] to B[tid], the second A[tid] onto itself.
     */
    static Object misc8() {
        MemorySegment a = Buffers.ints(32);
        MemorySegment b = Buffers.ints(32);
        int c = 1;
        Kernel.launch(ONE, WARP, 0, ctx -> {
            MemorySegment[] choice1 = {c != 0 ? a : b};
            MemorySegment[] choice2 = {c != 0 ? b : a};
            copyThenAlias(ctx, choice1, choice2);
            copyThenAlias(ctx, choice1, choice2);
        });
        return Buffers.contents(a, b);
    }

    private static void copyThenAlias(KernelContext ctx, MemorySegment[] in, MemorySegment[] out) {
        int tmp = ctx.loadInt(in[0], ctx.threadIdx().x());
        ctx.storeInt(out[0], ctx.threadIdx().x(), tmp);
        out[0] = in[0];
    }

    /** mul24: {@code A[idxa] = idxa; B[idxb] = idxa;} with idxa = idxb = the global id. */
    static Object mul24() {
        MemorySegment a = Buffers.ints(32);
        MemorySegment b = Buffers.ints(32);
        Kernel.launch(TWO, SIXTEEN, 0, ctx -> {
            int idx = ctx.blockIdx().x() * ctx.blockDim().x() + ctx.threadIdx().x();
            ctx.storeInt(a, idx, idx);
            ctx.storeInt(b, idx, idx);
        });
        return Buffers.contents(a, b);
    }

    /** noraceduetoreturn: every thread but thread 0 returns from {@code bar} before {@code A[4] = 26.8f}. */
    static Object noRaceDueToReturn() {
        MemorySegment a = Buffers.floats(8);
        Kernel.launch(ONE, WARP, 0, ctx -> storeUnlessReturned(ctx, a));
        return Buffers.contents(a);
    }

    private static int storeUnlessReturned(KernelContext ctx, MemorySegment a) {
        if (ctx.threadIdx().x() != 0) {
            return 0;
        }
        ctx.storeFloat(a, 4, 26.8f);
        return 1;
    }

    /** pointers_in_structs/test4: {@code p[g] = q[g] + threadIdx.x; q[g] = threadIdx.x;}. */
    static Object pointersInStructs4() {
        MemorySegment p = Buffers.ints(4);
        MemorySegment q = Buffers.ints(4);
        Kernel.launch(TWO, TWO, 0, ctx -> {
            int g = globalId(ctx);
            ctx.storeInt(p, g, ctx.loadInt(q, g) + ctx.threadIdx().x());
            ctx.storeInt(q, g, ctx.threadIdx().x());
        });
        return Buffers.contents(p, q);
    }

    /**
     * Kernels whose only access is a read of one word by every thread: {@code bar(A[0])},
     * {@code if (*p > 10) ...}, {@code if (*q) ...}, {@code bar(x[0])}, {@code bar(x[1])}.
     */
    static Object readOne(MemorySegment input, int index) {
        Kernel.launch(TWO, SIXTEEN, 0, ctx -> ctx.loadInt(input, index));
        return Buffers.contents(input);
    }

    /** reduced_strength_blockwise, WIDTH = 40: {@code for (i = tid; i < WIDTH; i += blockDim) A[b * WIDTH + i] = i}. */
    static Object reducedStrengthBlockwise() {
        int width = 40;
        MemorySegment a = Buffers.ints(2 * width);
        Kernel.launch(TWO, SIXTEEN, 0, ctx -> {
            for (int i = ctx.threadIdx().x(); i < width; i += ctx.blockDim().x()) {
                ctx.storeInt(a, ctx.blockIdx().x() * width + i, i);
            }
        });
        return Buffers.contents(a);
    }

    /** reduced_strength_with_requires, sz = blockDim (its {@code __requires}): {@code A[i] *= 2.0f} with stride sz. */
    static Object reducedStrengthWithRequires() {
        int sz = 16;
        MemorySegment a = Buffers.floats(100 * sz);
        Kernel.launch(ONE, SIXTEEN, 0, ctx -> {
            for (int i = ctx.threadIdx().x(); i < 100 * sz; i += sz) {
                ctx.storeFloat(a, i, ctx.loadFloat(a, i) * 2.0f);
            }
        });
        return Buffers.contents(a);
    }

    /** ternarytest and ternarytest2: {@code A[threadIdx.x == 0 ? 1 : 2 * threadIdx.x] = 2.4f}. */
    static Object ternary() {
        MemorySegment a = Buffers.floats(64);
        Kernel.launch(ONE, WARP, 0, ctx -> {
            int tid = ctx.threadIdx().x();
            ctx.storeFloat(a, tid == 0 ? 1 : 2 * tid, 2.4f);
        });
        return Buffers.contents(a);
    }

    /** test_for_get_group_id: {@code if (blockIdx.x == 0) A[threadIdx.x] = 42.f;}. */
    static Object testForGetGroupId() {
        MemorySegment a = Buffers.floats(32);
        Kernel.launch(ONE, WARP, 0, ctx -> {
            if (ctx.blockIdx().x() == 0) {
                ctx.storeFloat(a, ctx.threadIdx().x(), 42.0f);
            }
        });
        return Buffers.contents(a);
    }
}
