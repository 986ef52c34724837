package dev.jpipeline.simt;

import dev.jpipeline.internal.checked.Poison;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Checked execution's record of one piece of shared memory: who last wrote each 4-byte word, and whether the word
 * holds data or poison.
 *
 * <pre>
 * Each word has a code: kind << 28 | block rank of the thread concerned. NEVER (poisoned at the start), PENDING (a
 * copy issued by the thread has not landed), RELEASED (every consumer released the stage; the thread made the last
 * release) are poison; STORED (an accessor store) and LANDED (the thread's copy landed) are data. The bytes are the
 * truth, the code the attribution: a poison code over bytes that no longer hold the pattern means a write the
 * runtime could not see (a raw MemorySegment store), which is data.
 * Races: each word's WordHistory (RaceDetector), made on its first access.
 * Confinement: checked execution runs one thread at a time; the turn's hand-off orders every access.
 * </pre>
 */
final class SharedShadow {

    /** The poison pattern of every 4-byte word (the core's {@link Poison}): a NaN as a float, an unlikely int. */
    static final int POISON = Poison.WORD;

    static final int NEVER = 0;
    static final int STORED = 1;
    static final int LANDED = 2;
    static final int PENDING = 3;
    static final int RELEASED = 4;

    private static final ValueLayout.OfInt WORD = ValueLayout.JAVA_INT_UNALIGNED;

    final String name;
    final MemorySegment memory;
    private final int[] codes;
    /** The race detector's history of each word, made on first use. */
    private WordHistory[] histories;

    SharedShadow(String name, MemorySegment memory) {
        this.name = name;
        this.memory = memory;
        this.codes = new int[(int) ((memory.byteSize() + 3) / 4)];
        poison(memory);
    }

    /** Whether the shadow covers native address {@code address}. */
    boolean covers(long address) {
        long from = memory.address();
        return address >= from && address < from + memory.byteSize();
    }

    /** The race detector's history of the word at native {@code address} (in this shadow). */
    WordHistory history(long address) {
        WordHistory[] all = histories;
        if (all == null) {
            all = histories = new WordHistory[codes.length];
        }
        int w = (int) ((address - memory.address()) >>> 2);
        WordHistory h = all[w];
        if (h == null) {
            h = all[w] = new WordHistory();
        }
        return h;
    }

    /** Fills {@code range} (any segment) with the pattern. */
    static void poison(MemorySegment range) {
        Poison.fill(range);
    }

    /** Marks the words of [address, address + bytes) with {@code kind} by block rank {@code rank}. */
    void mark(long address, long bytes, int kind, int rank) {
        long from = Math.max(0, address - memory.address()) / 4;
        long to = Math.min(codes.length, (address - memory.address() + bytes + 3) / 4);
        int code = kind << 28 | rank;
        for (long w = from; w < to; w++) {
            codes[(int) w] = code;
        }
    }

    /**
     * The poison a read of [address, address + bytes) would see: the code of its first poisoned word, or -1 when it
     * reads data.
     */
    int poisonAt(long address, int bytes) {
        long offset = address - memory.address();
        for (long w = offset / 4; w <= (offset + bytes - 1) / 4 && w < codes.length; w++) {
            int kind = codes[(int) w] >>> 28;
            if ((kind == NEVER || kind == PENDING || kind == RELEASED) && 4 * w + 4 <= memory.byteSize()
                && memory.get(WORD, 4 * w) == POISON) {
                return codes[(int) w];
            }
        }
        return -1;
    }

    /** The last writer of the word at {@code address}, described. */
    static String describe(int code, Launch launch) {
        int rank = code & 0x0FFF_FFFF;
        String thread = "thread " + launch.threadIndex(rank);
        return switch (code >>> 28) {
            case NEVER -> "never written";
            case PENDING -> "a copy issued by " + thread + " has not landed yet";
            case RELEASED -> "its stage was released by every consumer (last release by " + thread + ")";
            case STORED -> "last written by " + thread;
            default -> "last written by a copy that " + thread + " issued";
        };
    }
}
