package dev.jpipeline.prefetch;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;

/**
 * The stage buffers of one iteration: {@code count} buffers of {@code bytes} each, taken once when the iteration
 * opens, from the user's allocator or from the {@link StageBufferPool} (shared memory: copy workers and a reader
 * thread write into them), to which {@link #free} gives them back for the next iteration. The user's allocator
 * keeps its memory: freeing it is the user's, after {@link Chunks#close}.
 *
 * <p>Made by the thread that opens the iteration; the stages are written by copy workers, a reader thread or
 * producers, whose writes the pipeline orders before a consumer's wait returns. {@link #free} runs once, on the
 * last user to leave the {@link StageLedger}, whose atomic count-down orders every other user's last access
 * before it (and it is idempotent, for a failed open that frees what a feed may have freed).
 */
final class StageBuffers {

    /** The pool the buffers came from when the user gave no allocator, else null. */
    private final StageBufferPool pool;
    /** The pooled buffers, by stage (null entries once given back), when {@link #pool} is set. */
    private final StageBufferPool.Buffer[] pooled;
    private final MemorySegment[] stages;

    /** @param allocator where the buffers come from, or null for the shared pool */
    StageBuffers(int count, long bytes, SegmentAllocator allocator) {
        this(count, bytes, allocator, allocator == null ? StageBufferPool.SHARED : null);
    }

    /** @param pool where the buffers come from when {@code allocator} is null */
    StageBuffers(int count, long bytes, SegmentAllocator allocator, StageBufferPool pool) {
        this.pool = allocator == null ? pool : null;
        this.pooled = this.pool == null ? null : new StageBufferPool.Buffer[count];
        this.stages = new MemorySegment[count];
        try {
            for (int s = 0; s < count; s++) {
                if (this.pool != null) {
                    pooled[s] = this.pool.take(bytes);
                    stages[s] = pooled[s].slice(bytes);
                    continue;
                }
                MemorySegment given = allocator.allocate(bytes, StageBufferPool.ALIGNMENT);
                check(given, s, bytes);
                // of a larger segment, only the chunk's bytes: chunks keep their size, and the overlap check holds
                stages[s] = given.byteSize() == bytes ? given : given.asSlice(0, bytes);
            }
        } catch (RuntimeException | Error e) {
            free();
            throw e;
        }
    }

    /** A thread that owns no arena: a confined segment is not accessible from it. */
    private static final Thread ANOTHER_THREAD = Thread.ofVirtual().unstarted(() -> { });

    /**
     * Refuses a user's buffer that the iteration cannot use: too small, read-only, on the heap (the chunks are
     * views of native memory), confined (copy workers and the reader thread write into it), or overlapping an
     * earlier stage's (a refill would overwrite a chunk). Alignment is only a wish: a misaligned buffer works.
     */
    private void check(MemorySegment buffer, int slot, long bytes) {
        String wrong = buffer.byteSize() < bytes ? "of " + buffer.byteSize() + " bytes"
            : buffer.isReadOnly() ? "read-only"
            : !buffer.isNative() ? "a heap segment (stage buffers must be native: use an Arena)"
            : !buffer.isAccessibleBy(ANOTHER_THREAD) ? "of a confined arena (other threads write into stage buffers: "
                + "use Arena.ofShared() or Arena.ofAuto())"
            : null;
        for (int s = 0; wrong == null && s < slot; s++) {
            if (buffer.asSlice(0, bytes).asOverlappingSlice(stages[s].asSlice(0, bytes)).isPresent()) {
                wrong = "overlapping the buffer of stage " + s + " (each stage needs memory of its own)";
            }
        }
        if (wrong != null) {
            throw new IllegalArgumentException("the buffer allocator gave stage " + slot + " a segment " + wrong
                + " for a stage of " + bytes + " bytes");
        }
    }

    /**
     * {@code buffer}, refused when its memory was freed (a user's allocator's, before the close), so that no view
     * of freed memory is handed out.
     *
     * @throws IllegalStateException naming {@code source} and the rule
     */
    static MemorySegment alive(MemorySegment buffer, String source) {
        if (!buffer.scope().isAlive()) {
            throw new IllegalStateException("the stage buffers of the chunks of " + source + " were freed before "
                + "the iteration ended: memory from a buffer allocator must outlive close() or reduce()");
        }
        return buffer;
    }

    int count() {
        return stages.length;
    }

    /** The buffer of stage {@code slot}. */
    MemorySegment stage(int slot) {
        return stages[slot];
    }

    /**
     * Gives the buffers back to the pool if they came from it; call once nothing can read or write them any more.
     * A second call does nothing (a failed open frees what its feed may have freed already).
     */
    void free() {
        if (pool == null) {
            return;
        }
        for (int s = 0; s < pooled.length; s++) {
            if (pooled[s] != null) {
                StageBufferPool.Buffer b = pooled[s];
                pooled[s] = null;
                stages[s] = null;
                pool.give(b);
            }
        }
    }
}
