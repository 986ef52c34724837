package dev.jpipeline;

import dev.jpipeline.FuzzOracles.HarnessError;
import dev.jpipeline.FuzzRun.Ctx;
import dev.jpipeline.FuzzScripts.Channel;
import dev.jpipeline.FuzzScripts.CopySpec;
import dev.jpipeline.FuzzScripts.Seg;
import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A misuse fuzzer program's memory copies and file reads ({@link MisuseFuzzer}): segments of every kind a careless
 * user may pass (heap, native, read-only, confined, closed, closed in mid-copy, misaligned, overlapping, null),
 * file channels that fail or make no progress, and the documented rule each copy's arguments break.
 */
final class FuzzCopies {

    // Reused buffers: separate ones per role, so that only the OVERLAP kind overlaps.
    static final int BUF = 160 * 1024 + 64;
    private static final MemorySegment DST_BYTES = MemorySegment.ofArray(new byte[BUF]);
    private static final MemorySegment SRC_BYTES = MemorySegment.ofArray(new byte[BUF]);
    private static final MemorySegment DST_LONGS = MemorySegment.ofArray(new long[BUF / 8]);
    private static final MemorySegment SRC_LONGS = MemorySegment.ofArray(new long[BUF / 8]);
    static final MemorySegment DST_NATIVE = Arena.global().allocate(BUF, 64);
    static final MemorySegment SRC_NATIVE = Arena.global().allocate(BUF, 64);
    static final byte[] FILE = new byte[256 * 1024];

    static {
        new SplittableRandom(42).nextBytes(FILE);
    }

    /** Set once the program is over: no-progress channels then report end of file, freeing the workers. */
    volatile boolean over;
    final FuzzChannel good = new FuzzChannel(this, Channel.GOOD);
    final FuzzChannel failing = new FuzzChannel(this, Channel.FAILING);
    final FuzzChannel noProgress = new FuzzChannel(this, Channel.NO_PROGRESS);

    // -----------------------------------------------------------------------------------------------------
    // Copies

    /** A segment of kind {@code kind} with {@code length} bytes, or null for NULL. */
    private MemorySegment segment(Ctx c, Seg kind, long length, boolean dst, List<Arena> closeAfter) {
        long n = Math.max(0, Math.min(length, BUF - 8));
        return switch (kind) {
            case HEAP_BYTES, OVERLAP -> (dst ? DST_BYTES : SRC_BYTES).asSlice(0, n);
            case HEAP_LONGS -> (dst ? DST_LONGS : SRC_LONGS).asSlice(0, n);
            case NATIVE -> (dst ? DST_NATIVE : SRC_NATIVE).asSlice(0, n);
            case READ_ONLY -> (dst ? DST_NATIVE : SRC_NATIVE).asSlice(0, n).asReadOnly();
            case MISALIGNED -> (dst ? DST_NATIVE : SRC_NATIVE).asSlice(1, n);
            case CONFINED_OWN -> c.confined().allocate(Math.max(1, n), 16).asSlice(0, n);
            case CONFINED_OTHER -> runnerMemory.asSlice(dst ? 0 : BUF, n);
            case CLOSED -> {
                Arena a = Arena.ofShared();
                MemorySegment m = a.allocate(Math.max(1, n), 16).asSlice(0, n);
                a.close();
                yield m;
            }
            case CLOSE_AFTER -> {
                Arena a = Arena.ofShared();
                closeAfter.add(a);
                yield a.allocate(Math.max(1, n), 16).asSlice(0, n);
            }
            case NULL -> null;
        };
    }

    /** The runner thread's confined memory (2 x BUF bytes): another thread's confined segments for the team. */
    MemorySegment runnerMemory;

    void copy(Ctx c, CopySpec k, Pipeline pipe, Barrier bar) throws Exception {
        List<Arena> closeAfter = new ArrayList<>(1);
        MemorySegment dst;
        MemorySegment src;
        try {
            if (k.src() == Seg.OVERLAP) {
                // one heap buffer: dst at 0, src at the offset (identical ranges when the offset is 0)
                long dstLen = Math.min(k.dstLen(), BUF - 64);
                long srcLen = Math.min(k.srcLen(), BUF - 64 - k.overlapOffset());
                dst = DST_BYTES.asSlice(0, dstLen);
                src = DST_BYTES.asSlice(k.overlapOffset(), srcLen);
            } else {
                dst = segment(c, k.dst(), k.dstLen(), true, closeAfter);
                src = segment(c, k.src(), k.srcLen(), false, closeAfter);
            }
        } catch (RuntimeException e) {
            throw new HarnessError(e);
        }
        c.invalid = invalidCopy(k, dst, src, pipe == null && bar == null);
        try {
            Group g = k.groupForm() == 0 ? null : k.groupForm() == 1 ? c.group : FuzzRun.bogusGroup();
            boolean aligned = k.alignment() != 0;
            if (bar == null) {
                if (g == null) {
                    if (aligned) {
                        MemcpyAsync.memcpyAsync(dst, src, AlignedSize.of(k.alignment(), k.bytes()), pipe);
                    } else {
                        MemcpyAsync.memcpyAsync(dst, src, k.bytes(), pipe);
                    }
                } else if (aligned) {
                    MemcpyAsync.memcpyAsync(g, dst, src, AlignedSize.of(k.alignment(), k.bytes()), pipe);
                } else {
                    MemcpyAsync.memcpyAsync(g, dst, src, k.bytes(), pipe);
                }
            } else if (g == null) {
                if (aligned) {
                    MemcpyAsync.memcpyAsync(dst, src, AlignedSize.of(k.alignment(), k.bytes()), bar);
                } else {
                    MemcpyAsync.memcpyAsync(dst, src, k.bytes(), bar);
                }
            } else if (aligned) {
                MemcpyAsync.memcpyAsync(g, dst, src, AlignedSize.of(k.alignment(), k.bytes()), bar);
            } else {
                MemcpyAsync.memcpyAsync(g, dst, src, k.bytes(), bar);
            }
        } finally {
            for (Arena a : closeAfter) {
                a.close();          // in mid-copy, when the copy went to the engine
            }
        }
    }

    /** The documented rule that a memory copy's arguments break, or null. */
    private String invalidCopy(CopySpec k, MemorySegment dst, MemorySegment src, boolean nullTarget) {
        long bytes = k.bytes();
        long a = k.alignment();
        if (dst == null || src == null) {
            return "memcpyAsync with a null segment";
        }
        if (nullTarget) {
            return "memcpyAsync with a null pipeline";
        }
        if (a != 0 && (a < 1 || Long.bitCount(a) != 1 || bytes % a != 0 || bytes < 0)) {
            return "memcpyAsync with an invalid AlignedSize";
        }
        if (bytes < 0) {
            return "memcpyAsync with a negative size";
        }
        if (bytes > dst.byteSize() || bytes > src.byteSize()) {
            return "memcpyAsync past the end of a segment";
        }
        if (k.groupForm() == 2) {
            return "memcpyAsync with a group whose rank is outside it";
        }
        if (bytes == 0) {
            return null;
        }
        if (dst.isReadOnly()) {
            return "memcpyAsync into a read-only segment";
        }
        if (a > 1 && (dst.maxByteAlignment() < a || src.maxByteAlignment() < a)) {
            return "memcpyAsync of misaligned segments with an AlignedSize";
        }
        if (k.src() == Seg.OVERLAP && k.overlapOffset() < bytes) {
            return "memcpyAsync of overlapping segments";
        }
        if (k.dst() == Seg.CLOSED || k.src() == Seg.CLOSED) {
            return "memcpyAsync with a segment of a closed arena";
        }
        if (k.dst() == Seg.CONFINED_OWN || k.src() == Seg.CONFINED_OWN || k.dst() == Seg.CONFINED_OTHER
            || k.src() == Seg.CONFINED_OTHER) {
            return "memcpyAsync with a segment of a confined arena";
        }
        return null;
    }

    void fileCopy(Ctx c, CopySpec k, Pipeline pipe) {
        MemorySegment dst;
        try {
            dst = segment(c, k.dst(), k.dstLen(), true, new ArrayList<>());
        } catch (RuntimeException e) {
            throw new HarnessError(e);
        }
        FileChannel channel = switch (k.channel()) {
            case GOOD -> good;
            case FAILING -> failing;
            case NO_PROGRESS -> noProgress;
            case NULL -> null;
        };
        long bytes = k.bytes();
        if (dst == null || channel == null || pipe == null) {
            c.invalid = "file memcpyAsync with a null argument";
        } else if (bytes < 0 || k.position() < 0) {
            c.invalid = "file memcpyAsync with a negative size or position";
        } else if (bytes > dst.byteSize()) {
            c.invalid = "file memcpyAsync past the end of a segment";
        } else if (bytes > 0 && dst.isReadOnly()) {
            c.invalid = "file memcpyAsync into a read-only segment";
        } else if (bytes > 0 && k.dst() == Seg.CLOSED) {
            c.invalid = "file memcpyAsync into a segment of a closed arena";
        } else if (bytes > 0 && (k.dst() == Seg.CONFINED_OWN || k.dst() == Seg.CONFINED_OTHER)) {
            c.invalid = "file memcpyAsync into a segment of a confined arena";
        }
        MemcpyAsync.memcpyAsync(dst, channel, k.position(), bytes, pipe);
    }

    // A file channel: good data, a failing read, or reads that make no progress until the program is over

    static final class FuzzChannel extends PositionalReadChannel {
        private final FuzzCopies copies;
        private final Channel mode;

        FuzzChannel(FuzzCopies copies, Channel mode) {
            this.copies = copies;
            this.mode = mode;
        }

        @Override
        public int read(ByteBuffer dst, long position) throws IOException {
            switch (mode) {
                case FAILING -> throw new IOException("injected read error at position " + position);
                case NO_PROGRESS -> {
                    if (!copies.over) {
                        Thread.yield();
                        return 0;
                    }
                    throw new EOFException("the fuzz program is over");
                }
                default -> {
                }
            }
            if (position >= FILE.length) {
                return -1;
            }
            int n = (int) Math.min(dst.remaining(), FILE.length - position);
            dst.put(FILE, (int) position, n);
            return n;
        }

        @Override
        public long size() {
            return FILE.length;
        }

        @Override
        public String toString() {
            return "FuzzChannel[" + mode + "]";
        }
    }
}
