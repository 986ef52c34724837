package dev.jpipeline.simt.suite;

import static dev.jpipeline.simt.suite.SuiteKernel.racy;
import static dev.jpipeline.simt.suite.SuiteKernel.raceFree;

import dev.jpipeline.simt.Dim3;
import dev.jpipeline.simt.Kernel;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * The GPUVerify CUDA suite's memcpy kernels (testsuite/CUDA/memcpy/PATH/kernel.cu of
 * https://github.com/mc-imperial/gpuverify, Ms-PL; see oracle/gpuverify/README.md): struct assignments and
 * {@code __builtin_memcpy} over global arrays of small structs, where the bytes two threads copy overlap or not.
 * Two threads, one block, as in GPUVerify; the arrays hold byte i = i, as in the CUDA twins.
 */
final class MemcpyKernels {

    private static final Dim3 ONE = Dim3.of(1);
    private static final Dim3 TWO = Dim3.of(2);

    private MemcpyKernels() {
    }

    static List<SuiteKernel> all() {
        return List.of(
            racy("memcpy/fail_arrayofstruct", ONE, TWO, () -> assignPair(43, false)),
            racy("memcpy/fail_overstep", ONE, TWO, () -> copy(24, 6, 6, 0, 12)),
            racy("memcpy/lentoobig", ONE, TWO, () -> copy(12, 4, 4, 0, 5)),
            racy("memcpy/notexactdiv", ONE, TWO, () -> copy(12, 4, 4, 1, 6)),
            raceFree("memcpy/arrayofstruct", ONE, TWO, () -> assignPair(2, true)),
            raceFree("memcpy/lentoosmall", ONE, TWO, () -> copy(12, 6, 6, 0, 4)),
            raceFree("memcpy/mismatch", ONE, TWO, () -> copy(8, 4, 4, 0, 4)));
    }

    /**
     * {@code pairs[threadIdx.x] = fresh} (arrayofstruct) or {@code pairs[42] = fresh} (fail_arrayofstruct), where
     * {@code pair_t} is two shorts (one word) and {@code fresh} an uninitialized local (0 here).
     */
    static Object assignPair(int pairs, boolean ownElement) {
        MemorySegment p = Buffers.bytes(4 * pairs);
        Kernel.launch(ONE, TWO, 0, ctx -> ctx.storeInt(p, ownElement ? ctx.threadIdx().x() : 42, 0));
        return Buffers.contents(p);
    }

    /**
     * {@code memcpy((char *) &out[threadIdx.x] + skew, &in[threadIdx.x], len)} over arrays of {@code bytes} bytes
     * of {@code size}-byte structs (in and out have the same element size in every kernel here, mismatch's two
     * 4-byte structs included).
     */
    static Object copy(int bytes, int outSize, int inSize, int skew, int len) {
        MemorySegment in = Buffers.bytes(bytes);
        MemorySegment out = Buffers.bytes(bytes);
        Kernel.launch(ONE, TWO, 0, ctx -> {
            int t = ctx.threadIdx().x();
            ByteCopy.copy(ctx, out, t * outSize + skew, in, t * inSize, len);
        });
        return Buffers.contents(in, out);
    }
}
