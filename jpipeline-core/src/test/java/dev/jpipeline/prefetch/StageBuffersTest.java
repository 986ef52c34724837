package dev.jpipeline.prefetch;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.util.Arrays;
import java.util.Iterator;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Stage buffers from a user's allocator ({@link Prefetch#buffers}): segments the feeds cannot use refused at
 * {@code open()}, a small source allocating only what it needs, larger segments cut to the chunk size, and memory
 * freed before the end failing loudly instead of being handed out or mapped, in both forms.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)    // a hang fails
class StageBuffersTest {

    @Test
    void anAllocatorsUnusableSegmentsAreRefusedAtOpenNamingWhy() {
        MemorySegment data = MemorySegment.ofArray(new byte[1000]);
        SegmentAllocator heap = (bytes, alignment) -> MemorySegment.ofArray(new byte[(int) bytes]);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> Prefetch.from(data).chunk(100).buffers(heap).open());
        assertTrue(e.getMessage().contains("heap segment"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
            () -> Prefetch.from(data).chunk(100).buffers(heap).parallel(1, 1).reduce(0L, s -> 0L, Long::sum));
        assertTrue(e.getMessage().contains("heap segment"), e.getMessage());
        try (Arena confined = Arena.ofConfined()) {
            e = assertThrows(IllegalArgumentException.class,
                () -> Prefetch.from(data).chunk(100).buffers(confined).open());
            assertTrue(e.getMessage().contains("confined"), e.getMessage());
        }
        try (Arena arena = Arena.ofShared()) {
            MemorySegment one = arena.allocate(100);
            SegmentAllocator same = (bytes, alignment) -> one;
            e = assertThrows(IllegalArgumentException.class,
                () -> Prefetch.from(data).chunk(100).stages(2).buffers(same).open());
            assertTrue(e.getMessage().contains("overlap"), e.getMessage());
        }
    }

    @Test
    void buffersFreedBeforeTheCloseFailLoudlyInsteadOfHandingOutFreedMemory() {
        MemorySegment data = MemorySegment.ofArray(new byte[400]);
        Arena arena = Arena.ofShared();
        try (Chunks chunks = Prefetch.from(data).chunk(100).stages(2).buffers(arena).open()) {
            Iterator<MemorySegment> it = chunks.iterator();
            it.next();
            arena.close();                          // the caller's to free, but only after the close
            IllegalStateException e = assertThrows(IllegalStateException.class, it::next);
            assertTrue(e.getMessage().contains("freed before"), e.getMessage());
        }
    }

    @Test
    void buffersFreedDuringAParallelRunFailTheNextChunkInsteadOfBeingMapped() {
        MemorySegment data = MemorySegment.ofArray(new byte[1000]);
        Arena arena = Arena.ofShared();
        AtomicInteger mapped = new AtomicInteger();
        ChunkFailedException e = assertThrows(ChunkFailedException.class, () -> Prefetch.from(data).chunk(100)
            .stages(2).buffers(arena).parallel(1, 1).reduce(0L, chunk -> {
                mapped.incrementAndGet();
                if (arena.scope().isAlive()) {
                    arena.close();                              // the caller's to free, but only after reduce
                }
                return chunk.byteSize();
            }, Long::sum));
        assertTrue(e.chunk() >= 1, "the first chunk was computed on before the free: " + e);
        assertEquals(1, mapped.get(), "a chunk read before the free was mapped on freed memory: " + e);
        TeamThreads.assertNoneLeft();
    }

    @Test
    void aSmallSourceWithHugeChunksAllocatesOnlyWhatItNeeds() {
        byte[] data = new byte[10];
        new Random(13).nextBytes(data);
        AtomicLong asked = new AtomicLong();
        Arena arena = Arena.ofAuto();
        SegmentAllocator counting = (bytes, alignment) -> {
            asked.addAndGet(bytes);
            return arena.allocate(bytes, alignment);
        };
        try (Chunks chunks = Prefetch.from(MemorySegment.ofArray(data)).chunk(Prefetch.MAX_CHUNK)
            .stages(Prefetch.MAX_STAGES).buffers(counting).open()) {
            Iterator<MemorySegment> it = chunks.iterator();
            assertArrayEquals(data, it.next().toArray(JAVA_BYTE));
            assertTrue(!it.hasNext());
        }
        assertEquals(10, asked.get(), "one buffer of the source's size, not 255 of 1 GiB");
        assertEquals(10L, Prefetch.from(MemorySegment.ofArray(data)).chunk(Prefetch.MAX_CHUNK)
            .stages(Prefetch.MAX_STAGES).buffers(counting).parallel(1, 1).reduce(0L, MemorySegment::byteSize, Long::sum));
        assertEquals(20, asked.get());
    }

    @Test
    void anAllocatorsLargerSegmentsKeepTheChunkSizeAndOnlyTheirChunksBytesMustNotOverlap() {
        byte[] bytes = new byte[1000];
        new Random(7).nextBytes(bytes);
        try (Arena arena = Arena.ofShared()) {
            MemorySegment block = arena.allocate(64 * 1024, 4096);
            AtomicInteger given = new AtomicInteger();
            // each stage gets twice the size asked for, overlapping the next stage's buffer in its second half
            SegmentAllocator larger = (size, alignment) -> block.asSlice(given.getAndIncrement() * size, 2 * size);
            try (Chunks chunks = Prefetch.from(MemorySegment.ofArray(bytes)).chunk(100).stages(3).buffers(larger)
                    .open()) {
                int[] k = {0};
                chunks.stream().forEach(chunk -> {
                    assertEquals(100, chunk.byteSize(), "chunk " + k[0]);
                    assertArrayEquals(Arrays.copyOfRange(bytes, 100 * k[0], 100 * k[0] + 100),
                        chunk.toArray(JAVA_BYTE));
                    k[0]++;
                });
                assertEquals(10, k[0]);
            }
        }
    }
}
