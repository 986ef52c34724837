package dev.jpipeline.internal.checked;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Checked execution's poison pattern: what memory holds where it holds no data (a copy's destination before the
 * copy lands, a stage's destinations once every consumer has released them, a checked kernel's fresh shared
 * memory).
 *
 * <pre>
 * Every whole 4-byte word holds 0xFFA5A5A5 in native byte order: a NaN as a float, an unlikely int (negative,
 * not a small count or index). Bytes after the last whole word hold 0xA5. Written eight bytes at a time: the long
 * 0xFFA5A5A5_FFA5A5A5 has the word at both of its halves, so it lays the same bytes in either byte order.
 * </pre>
 */
public final class Poison {

    /** The pattern of every 4-byte word. */
    public static final int WORD = 0xFFA5A5A5;
    /** The pattern of a trailing byte. */
    public static final byte BYTE = (byte) 0xA5;

    private static final long TWO_WORDS = 0xFFA5A5A5_FFA5A5A5L;

    private Poison() {
    }

    /** Fills {@code range} (any writable segment) with the pattern. */
    public static void fill(MemorySegment range) {
        long size = range.byteSize();
        long at = 0;
        for (; at + 8 <= size; at += 8) {
            range.set(ValueLayout.JAVA_LONG_UNALIGNED, at, TWO_WORDS);
        }
        if (at + 4 <= size) {
            range.set(ValueLayout.JAVA_INT_UNALIGNED, at, WORD);
            at += 4;
        }
        for (; at < size; at++) {
            range.set(ValueLayout.JAVA_BYTE, at, BYTE);
        }
    }

    /**
     * {@link #fill} where the segment can still be written: a segment whose arena was closed meanwhile (a copy
     * into it fails on its own) is left alone.
     */
    static void fillIfAlive(MemorySegment range) {
        if (!range.scope().isAlive()) {
            return;
        }
        try {
            fill(range);
        } catch (IllegalStateException closedMeanwhile) {
            // the arena closed between the look and the writes: nobody can read the segment any more
        }
    }
}
