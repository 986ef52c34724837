package dev.jpipeline.simt.suite;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Global memory for the suite's kernels: segments the host allocates and passes in, filled as the CUDA twins'
 * {@code devArray} and {@code devBytes} fill theirs (element or byte i holds i), and read back as the run's result.
 */
final class Buffers {

    private Buffers() {
    }

    /** {@code devArray<int>(n)}: n ints, element i = i. */
    static MemorySegment ints(int n) {
        MemorySegment m = words(n);
        for (int i = 0; i < n; i++) {
            m.setAtIndex(ValueLayout.JAVA_INT, i, i);
        }
        return m;
    }

    /** {@code devArray<int>(n, fill)}: n ints, all {@code fill}. */
    static MemorySegment ints(int n, int fill) {
        MemorySegment m = words(n);
        for (int i = 0; i < n; i++) {
            m.setAtIndex(ValueLayout.JAVA_INT, i, fill);
        }
        return m;
    }

    /** {@code devArray<float>(n)}: n floats, element i = i. */
    static MemorySegment floats(int n) {
        MemorySegment m = words(n);
        for (int i = 0; i < n; i++) {
            m.setAtIndex(ValueLayout.JAVA_FLOAT, i, i);
        }
        return m;
    }

    /** {@code devBytes(n)}: n bytes (rounded up to whole 4-byte words), byte i = i. */
    static MemorySegment bytes(int n) {
        MemorySegment m = words((n + 3) / 4);
        for (int i = 0; i < n; i++) {
            m.set(ValueLayout.JAVA_BYTE, i, (byte) i);
        }
        return m;
    }

    /** The contents of {@code segments}, word by word, one after another: what a run returns. */
    static int[] contents(MemorySegment... segments) {
        int total = 0;
        for (MemorySegment s : segments) {
            total += (int) (s.byteSize() / 4);
        }
        int[] out = new int[total];
        int at = 0;
        for (MemorySegment s : segments) {
            for (long i = 0; i < s.byteSize() / 4; i++) {
                out[at++] = s.getAtIndex(ValueLayout.JAVA_INT, i);
            }
        }
        return out;
    }

    private static MemorySegment words(int n) {
        return Arena.ofAuto().allocate(4L * n, 16);
    }
}
