package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.copy.CopyEngine;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Conformance scenarios 35-42 (libcudacxx-pipeline-semantics.md §15 E: memcpyAsync). */
class ConformanceMemcpyAsyncTest {

    private static MemorySegment bytes(int n, int first) {
        return fill(MemorySegment.ofArray(new byte[n]), first);
    }

    /** Off-heap and 16-byte aligned, so that every AlignedSize up to 16 can be promised. */
    private static MemorySegment aligned(int n) {
        return Arena.ofAuto().allocate(n, 16);
    }

    private static MemorySegment fill(MemorySegment s, int first) {
        int n = (int) s.byteSize();
        for (int i = 0; i < n; i++) {
            s.set(ValueLayout.JAVA_BYTE, i, (byte) (first + i));
        }
        return s;
    }

    private static void assertBytes(MemorySegment s, int from, int to, int first) {
        for (int i = from; i < to; i++) {
            assertEquals((byte) (first + i), s.get(ValueLayout.JAVA_BYTE, i), "byte " + i);
        }
    }

    @Test
    void s35_synchronousCopyReturnsNoneAndHasLanded() {
        Pipeline pipe = Pipeline.make();
        MemorySegment src = bytes(64, 1);
        MemorySegment dst = MemorySegment.ofArray(new byte[64]);
        pipe.producerAcquire();
        assertEquals(AsyncContractFulfillment.NONE, MemcpyAsync.memcpyAsync(dst, src, 64, pipe));
        assertBytes(dst, 0, 64, 1);
        pipe.producerCommit();
    }

    /**
     * Deliberate difference: CUDA's host path has group rank 0 copy everything (so after rank 1's call the
     * destination is untouched). jpipeline spreads a cooperative copy over the ranks like the device path:
     * after rank 1's call only rank 1's share has landed, and after commit + wait every thread sees it all.
     */
    @Test
    void s36_cooperativeCopyIsSharedByRank() {
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 2);
        MemorySegment src = bytes(100, 1);
        MemorySegment dst = MemorySegment.ofArray(new byte[100]);
        CountDownLatch rank1Copied = new CountDownLatch(1);
        AtomicInteger fullViews = new AtomicInteger();
        Teams.run(2, g -> {
            Pipeline pipe = Pipeline.make(g, state);
            pipe.producerAcquire();
            if (g.threadRank() == 1) {
                MemcpyAsync.memcpyAsync(g, dst, src, 100, pipe);
                assertBytes(dst, 50, 100, 1);
                for (int i = 0; i < 50; i++) {
                    assertEquals(0, dst.get(ValueLayout.JAVA_BYTE, i), "rank 0's share is not copied yet");
                }
                rank1Copied.countDown();
            } else {
                try {
                    assertTrue(rank1Copied.await(10, TimeUnit.SECONDS));
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
                MemcpyAsync.memcpyAsync(g, dst, src, 100, pipe);
            }
            pipe.producerCommit();
            pipe.consumerWait();
            assertBytes(dst, 0, 100, 1);
            fullViews.incrementAndGet();
            pipe.consumerRelease();
            pipe.quit();
        });
        assertEquals(2, fullViews.get());
    }

    @Test
    void s37_byteCountsAreExact() {
        for (int element : new int[] {1, 2, 4, 8, 128}) {
            int count = 5;
            int n = element * count;
            MemorySegment src = fill(aligned(n + 16), 1);
            MemorySegment dst = aligned(n + 16);
            dst.fill((byte) -7);                              // sentinels
            Pipeline pipe = Pipeline.make();
            pipe.producerAcquire();
            long alignment = element == 128 ? 4 : element;      // a struct of 32 ints aligns like an int
            MemcpyAsync.memcpyAsync(dst, src, AlignedSize.of(alignment, n), pipe);
            pipe.producerCommit();
            pipe.consumerWait();
            assertBytes(dst, 0, n, 1);
            for (int i = n; i < n + 16; i++) {
                assertEquals(-7, dst.get(ValueLayout.JAVA_BYTE, i), "byte " + i + " beyond the copy");
            }
            pipe.consumerRelease();
        }
    }

    @Test
    void s38_alignedSizeRules() {
        IllegalArgumentException notMultiple = assertThrows(IllegalArgumentException.class,
            () -> AlignedSize.of(8, 12));
        assertTrue(notMultiple.getMessage().contains("12 is not a multiple of 8"), notMultiple.getMessage());
        assertThrows(IllegalArgumentException.class, () -> AlignedSize.of(3, 12));
        assertThrows(IllegalArgumentException.class, () -> AlignedSize.of(4, -4));
        try (Arena arena = Arena.ofShared()) {
            MemorySegment src = arena.allocate(64, 16);
            MemorySegment dst = arena.allocate(64, 16);
            Pipeline pipe = Pipeline.make();
            pipe.producerAcquire();
            MemcpyAsync.memcpyAsync(dst, src, AlignedSize.of(16, 32), pipe);          // aligned: fine
            IllegalArgumentException misaligned = assertThrows(IllegalArgumentException.class,
                () -> MemcpyAsync.memcpyAsync(dst.asSlice(2), src, AlignedSize.of(4, 32), pipe));
            assertTrue(misaligned.getMessage().contains("4-byte aligned"), misaligned.getMessage());
            assertThrows(IllegalArgumentException.class,
                () -> MemcpyAsync.memcpyAsync(dst, src.asSlice(8), AlignedSize.of(16, 32), pipe));
            MemcpyAsync.memcpyAsync(dst.asSlice(2), src, AlignedSize.of(2, 32), pipe);  // smaller promise: fine
        }
        MemorySegment ints = MemorySegment.ofArray(new int[8]);
        MemorySegment longs = MemorySegment.ofArray(new long[4]);
        Pipeline pipe = Pipeline.make();
        pipe.producerAcquire();
        assertThrows(IllegalArgumentException.class,
            () -> MemcpyAsync.memcpyAsync(ints, longs, AlignedSize.of(8, 16), pipe), "int[] is only 4-aligned");
        MemcpyAsync.memcpyAsync(ints, longs, AlignedSize.of(4, 16), pipe);
    }

    @Test
    void s39_overlapIsRejectedAdjacencyIsNot() {
        int n = 16;
        MemorySegment buffer = MemorySegment.ofArray(new byte[4 * n]);
        MemorySegment a = buffer.asSlice(n);
        Pipeline pipe = Pipeline.make();
        pipe.producerAcquire();
        for (MemorySegment[] pair : new MemorySegment[][] {
            {a, a}, {a, a.asSlice(n - 1)}, {a.asSlice(n - 1), a}}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> MemcpyAsync.memcpyAsync(pair[0], pair[1], n, pipe));
            assertTrue(e.getMessage().contains("overlap"), e.getMessage());
        }
        MemcpyAsync.memcpyAsync(a, a.asSlice(n), n, pipe);
        MemcpyAsync.memcpyAsync(a.asSlice(n), a, n, pipe);
    }

    @Test
    void s40_zeroBytesIsAcceptedAndChangesNothing() {
        MemorySegment src = bytes(8, 1);
        MemorySegment dst = MemorySegment.ofArray(new byte[8]);
        Pipeline pipe = Pipeline.make();
        pipe.producerAcquire();
        assertEquals(AsyncContractFulfillment.NONE, MemcpyAsync.memcpyAsync(dst, src, 0, pipe));
        assertEquals(AsyncContractFulfillment.NONE, MemcpyAsync.memcpyAsync(dst, dst, 0, pipe));
        for (int i = 0; i < 8; i++) {
            assertEquals(0, dst.get(ValueLayout.JAVA_BYTE, i));
        }
    }

    @Test
    void s41_copyOnAQuitPipelineThrows() {
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 2);
        Pipeline pipe = Pipeline.make(Teams.soloGroup(), state);
        pipe.producerAcquire();
        pipe.quit();
        MemorySegment src = bytes(8, 1);
        MemorySegment dst = MemorySegment.ofArray(new byte[8]);
        IllegalStateException e = assertThrows(IllegalStateException.class,
            () -> MemcpyAsync.memcpyAsync(dst, src, 8, pipe));
        assertTrue(e.getMessage().contains("memcpy_async after quit"), e.getMessage());
        Pipeline thread = Pipeline.make();
        thread.quit();
        assertThrows(IllegalStateException.class, () -> MemcpyAsync.memcpyAsync(dst, src, 8, thread));
    }

    @Test
    void s42_partialGroupCopiesOnlyItsRange() {
        int[] source = new int[67];
        for (int i = 0; i < source.length; i++) {
            source[i] = 1000 + i;
        }
        int[] dest = new int[67];
        java.util.Arrays.fill(dest, -1);
        MemorySegment src = MemorySegment.ofArray(source);
        MemorySegment dst = MemorySegment.ofArray(dest);
        Barrier barrier = new Barrier(4);
        Teams.run(4, tile -> {
            MemcpyAsync.memcpyAsync(tile, dst.asSlice(16 * 4), src.asSlice(16 * 4), AlignedSize.of(4, 8 * 4),
                barrier);
            barrier.arriveAndWait();
        });
        for (int i = 0; i < dest.length; i++) {
            assertEquals(i >= 16 && i < 24 ? 1000 + i : -1, dest[i], "element " + i);
        }
    }

    @Test
    void badArgumentsNameTheRule() {
        Pipeline pipe = Pipeline.make();
        pipe.producerAcquire();
        MemorySegment small = MemorySegment.ofArray(new byte[4]);
        MemorySegment big = MemorySegment.ofArray(new byte[16]);
        IllegalArgumentException past = assertThrows(IllegalArgumentException.class,
            () -> MemcpyAsync.memcpyAsync(small, big, 16, pipe));
        assertTrue(past.getMessage().contains("runs past the end of the destination (4 bytes)"), past.getMessage());
        assertThrows(IllegalArgumentException.class, () -> MemcpyAsync.memcpyAsync(big, small, 16, pipe));
        assertThrows(IllegalArgumentException.class, () -> MemcpyAsync.memcpyAsync(big, small, -1, pipe));
        IllegalArgumentException readOnly = assertThrows(IllegalArgumentException.class,
            () -> MemcpyAsync.memcpyAsync(big.asReadOnly(), small, 4, pipe));
        assertTrue(readOnly.getMessage().contains("read-only"), readOnly.getMessage());
        Pipeline notAcquired = Pipeline.make();
        IllegalStateException e = assertThrows(IllegalStateException.class,
            () -> MemcpyAsync.memcpyAsync(big, small, 4, notAcquired));
        assertTrue(e.getMessage().contains("without producer_acquire"), e.getMessage());
    }

    /** Issue 8, promise 10: confined memory is rejected up front, whatever the size. */
    @Test
    void confinedSegmentsAreRejectedAtTheCallWhateverTheSize() {
        CopyEngine engine = CopyEngine.builder().workers(1).name("p10-copy").build();
        List<String> outcomes = new ArrayList<>();
        try (Arena confined = Arena.ofConfined()) {
            try {
                for (long size : new long[] {64, 1 << 20}) {
                    MemorySegment src = confined.allocate(size);
                    MemorySegment dst = confined.allocate(size);
                    Pipeline pipe = Pipeline.make(engine);
                    pipe.producerAcquire();
                    outcomes.add("pipeline, " + size + " B: " + confinedOutcome(
                        () -> MemcpyAsync.memcpyAsync(dst, src, size, pipe)));
                    outcomes.add("barrier, " + size + " B: " + confinedOutcome(
                        () -> MemcpyAsync.memcpyAsync(dst, src, size, new Barrier(1))));
                }
            } finally {
                engine.close();         // before the arena closes: no worker may still touch its segments
            }
        }
        String rejected = "IllegalArgumentException saying to use Arena.ofShared() or ofAuto()";
        assertEquals(List.of("pipeline, 64 B: " + rejected, "barrier, 64 B: " + rejected,
                "pipeline, 1048576 B: " + rejected, "barrier, 1048576 B: " + rejected), outcomes,
            "memcpyAsync with a confined segment must be rejected at the call, whatever the size");
    }

    private static String confinedOutcome(Outcomes.Action copy) {
        try {
            copy.run();
            return "accepted";
        } catch (IllegalArgumentException e) {
            String m = String.valueOf(e.getMessage());
            return m.contains("Arena.ofShared()") && m.contains("ofAuto()")
                ? "IllegalArgumentException saying to use Arena.ofShared() or ofAuto()"
                : "IllegalArgumentException: " + m;
        } catch (Exception e) {
            return Bounded.describe(e);
        }
    }
}
