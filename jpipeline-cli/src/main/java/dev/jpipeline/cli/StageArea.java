package dev.jpipeline.cli;

import dev.jpipeline.PipelineSharedState;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Where a {@code --processes} run keeps its pipeline in the shared region's data, the same in every process: the
 * pipeline's shared state from offset 0 ({@link PipelineSharedState#regionBytes}), then one long per stage (the
 * bytes the stage holds), then the stage buffers, page aligned, each 64-byte aligned.
 *
 * @param lengths a long per stage
 * @param stages  the stage buffers, each of the chunk's size
 */
record StageArea(MemorySegment lengths, MemorySegment[] stages) {

    private static final long PAGE = 4096;

    /** The data bytes a region needs for {@code stages} stages of {@code chunk} bytes, {@code groupSize} ranks. */
    static long dataBytes(int stages, int groupSize, long chunk) {
        return buffersAt(stages, groupSize) + stages * align(chunk, 64);
    }

    /** The area in {@code data}, a region's data of at least {@link #dataBytes} bytes. */
    static StageArea in(MemorySegment data, int stages, int groupSize, long chunk) {
        long lengthsAt = PipelineSharedState.regionBytes(stages, groupSize);
        long buffersAt = buffersAt(stages, groupSize);
        MemorySegment[] buffers = new MemorySegment[stages];
        for (int s = 0; s < stages; s++) {
            buffers[s] = data.asSlice(buffersAt + s * align(chunk, 64), chunk);
        }
        return new StageArea(data.asSlice(lengthsAt, stages * ValueLayout.JAVA_LONG.byteSize()), buffers);
    }

    private static long buffersAt(int stages, int groupSize) {
        return align(PipelineSharedState.regionBytes(stages, groupSize) + stages * ValueLayout.JAVA_LONG.byteSize(),
            PAGE);
    }

    private static long align(long bytes, long to) {
        return (bytes + to - 1) / to * to;
    }
}
