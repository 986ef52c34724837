package dev.jpipeline.simt;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** Kernel inputs for tests: a fresh 16-byte-aligned segment of floats whose element i holds i (plus an offset). */
final class IndexFloats {

    private IndexFloats() {
    }

    /** {@code floats} floats, element i holding {@code i + offset}. */
    static MemorySegment of(int floats, int offset) {
        MemorySegment in = Arena.ofAuto().allocate(4L * floats, 16);
        for (int i = 0; i < floats; i++) {
            in.setAtIndex(ValueLayout.JAVA_FLOAT, i, i + offset);
        }
        return in;
    }
}
