package dev.jpipeline.prefetch;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;

/**
 * The stage buffers of one iteration: {@code count} buffers of {@code bytes} each, allocated once when the
 * iteration opens, from the user's allocator or from an arena of their own that {@link #free} closes. The user's
 * allocator keeps its memory: freeing it is the user's, after {@link Chunks#close}.
 */
final class StageBuffers {

    /** Buffers start on a page, so that file reads into them start on one too. */
    private static final long ALIGNMENT = 4096;

    /** The arena the buffers came from when the user gave no allocator, else null. */
    private final Arena own;
    private final MemorySegment[] stages;

    /**
     * @param allocator where the buffers come from, or null for an arena of their own (shared: copy workers and a
     *                  reader thread write into them)
     */
    StageBuffers(int count, long bytes, SegmentAllocator allocator) {
        this.own = allocator == null ? Arena.ofShared() : null;
        SegmentAllocator from = own != null ? own : allocator;
        this.stages = new MemorySegment[count];
        try {
            for (int s = 0; s < count; s++) {
                stages[s] = from.allocate(bytes, ALIGNMENT);
                if (stages[s].byteSize() < bytes || stages[s].isReadOnly()) {
                    throw new IllegalArgumentException("the buffer allocator gave a segment of " + stages[s].byteSize()
                        + " bytes" + (stages[s].isReadOnly() ? ", read-only," : "") + " for a stage of " + bytes);
                }
            }
        } catch (RuntimeException | Error e) {
            free();
            throw e;
        }
    }

    int count() {
        return stages.length;
    }

    /** The buffer of stage {@code slot}. */
    MemorySegment stage(int slot) {
        return stages[slot];
    }

    /**
     * Frees the buffers if they are this iteration's own; call once nothing can write into them any more. A second
     * call does nothing (a failed open frees what its feed may have freed already).
     */
    void free() {
        if (own != null && own.scope().isAlive()) {
            own.close();
        }
    }
}
