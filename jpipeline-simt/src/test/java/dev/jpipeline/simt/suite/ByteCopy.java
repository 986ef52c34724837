package dev.jpipeline.simt.suite;

import dev.jpipeline.simt.KernelContext;
import java.lang.foreign.MemorySegment;

/**
 * {@code memcpy} of any byte range, through the context's 4-byte accessors: what clang's struct assignments and
 * {@code __builtin_memcpy} do in the suite's memcpy kernels. A destination word that the copy covers whole is
 * stored; one it covers in part is read, merged and stored (the GPU writes those bytes alone, so a word shared by
 * two threads' copies is reported as a race only when their bytes overlap, as in the suite's racy memcpy kernels:
 * none of its race-free ones share a word).
 */
final class ByteCopy {

    private ByteCopy() {
    }

    static void copy(KernelContext ctx, MemorySegment dst, int dstByte, MemorySegment src, int srcByte, int len) {
        int end = dstByte + len;
        for (int word = dstByte / 4; word * 4 < end; word++) {
            int first = Math.max(word * 4, dstByte);
            int last = Math.min(word * 4 + 4, end);
            int value = last - first == 4 ? 0 : ctx.loadInt(dst, word);
            for (int b = first; b < last; b++) {
                int shift = 8 * (b % 4);
                value = (value & ~(0xFF << shift)) | (byteAt(ctx, src, srcByte + b - dstByte) << shift);
            }
            ctx.storeInt(dst, word, value);
        }
    }

    private static int byteAt(KernelContext ctx, MemorySegment src, int at) {
        return (ctx.loadInt(src, at / 4) >>> (8 * (at % 4))) & 0xFF;
    }
}
