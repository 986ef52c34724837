package dev.jpipeline;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Random;

/** Test support: native segments and bytes of a known pattern, to check copies byte for byte. */
public final class TestSegments {

    private TestSegments() {
    }

    /** {@code bytes} bytes (a multiple of 8) of longs {@code (i + seed) * golden ratio}, in an automatic arena. */
    static MemorySegment pattern(long bytes, int seed) {
        MemorySegment s = Arena.ofAuto().allocate(bytes, 8);
        for (long i = 0; i < bytes / 8; i++) {
            s.setAtIndex(ValueLayout.JAVA_LONG, i, (i + seed) * 0x9E3779B97F4A7C15L);
        }
        return s;
    }

    /** {@code n} bytes from {@code new Random(seed)}. */
    public static byte[] randomBytes(int n, long seed) {
        byte[] d = new byte[n];
        new Random(seed).nextBytes(d);
        return d;
    }
}
