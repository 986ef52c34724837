package dev.jpipeline.examples;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.function.IntToDoubleFunction;

/** Off-heap float and int arrays for the examples ("global memory"). */
final class Floats {

    private Floats() {
    }

    static MemorySegment floats(int n, IntToDoubleFunction value) {
        MemorySegment s = Arena.ofAuto().allocate(4L * n, 16);
        for (int i = 0; i < n; i++) {
            s.setAtIndex(ValueLayout.JAVA_FLOAT, i, (float) value.applyAsDouble(i));
        }
        return s;
    }

    static float get(MemorySegment s, long i) {
        return s.getAtIndex(ValueLayout.JAVA_FLOAT, i);
    }

    static void set(MemorySegment s, long i, float v) {
        s.setAtIndex(ValueLayout.JAVA_FLOAT, i, v);
    }

    /** Elements [from, from + count) of a float array, as a segment. */
    static MemorySegment slice(MemorySegment s, long from, long count) {
        return s.asSlice(4 * from, 4 * count);
    }

    /** The first n elements of s as 32-bit patterns (a float's raw bits, or an int). */
    static int[] bits(MemorySegment s, int n) {
        int[] bits = new int[n];
        for (int i = 0; i < n; i++) {
            bits[i] = s.getAtIndex(ValueLayout.JAVA_INT, i);
        }
        return bits;
    }

    /** Whether {@code actual[i] == expected(i)} for every i below n. */
    static boolean equal(MemorySegment actual, int n, IntToDoubleFunction expected) {
        for (int i = 0; i < n; i++) {
            if (get(actual, i) != (float) expected.applyAsDouble(i)) {
                return false;
            }
        }
        return true;
    }
}
