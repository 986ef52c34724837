package dev.jpipeline.prefetch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.FailingSegments;
import dev.jpipeline.copy.CopyEngine;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Iterator;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Sources that break: a stream that returns no bytes forever, a stream or an {@code Iterable} that throws an
 * {@link Error}, memory the copies cannot read. The failure surfaces as the {@link ChunkFailedException} of the
 * chunk where it happened, after every earlier chunk, in both forms (never as a team failure); a source that
 * would copy on a closed copy engine is refused at {@code open()}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)    // a hang fails
class SourceFailureTest {

    @Test
    void anInputStreamThatReturnsNoBytesForeverFailsItsChunkInsteadOfSpinning() {
        InputStream zeros = new InputStream() {
            @Override
            public int read() {
                return 0;
            }

            @Override
            public int read(byte[] b, int off, int len) {
                return 0;               // broken: InputStream.read blocks until it has a byte
            }
        };
        try (Chunks chunks = Prefetch.from(zeros).chunk(100).open()) {
            ChunkFailedException e = assertThrows(ChunkFailedException.class, () -> chunks.iterator().hasNext());
            assertEquals(0, e.chunk());
            assertTrue(e.getCause().getMessage().contains("returned no bytes"), e.getMessage());
        }
        assertThrows(ChunkFailedException.class, () -> Prefetch.from(zeros).chunk(100).parallel(1, 1)
            .reduce(0L, MemorySegment::byteSize, Long::sum));
    }

    /** A stream of {@code length} bytes that throws {@code error} once {@code at} bytes were read. */
    private static InputStream throwingAt(int length, int at, Error error) {
        return new ByteArrayInputStream(new byte[length]) {
            @Override
            public synchronized int read(byte[] b, int off, int len) {
                if (pos >= at) {
                    throw error;
                }
                return super.read(b, off, Math.min(len, at - pos));
            }
        };
    }

    @Test
    void anErrorFromAStreamSurfacesAtItsChunkInBothForms() {
        AssertionError planted = new AssertionError("the stream's own assertion failed");
        try (Chunks chunks = Prefetch.from(throwingAt(5000, 2500, planted)).chunk(1000).open()) {
            Iterator<MemorySegment> it = chunks.iterator();
            assertEquals(1000, it.next().byteSize());
            assertEquals(1000, it.next().byteSize());
            ChunkFailedException e = assertThrows(ChunkFailedException.class, it::next);
            assertEquals(2, e.chunk());
            assertEquals(planted, e.getCause());
        }
        ChunkFailedException e = assertThrows(ChunkFailedException.class, () ->
            Prefetch.from(throwingAt(5000, 2500, planted)).chunk(1000).parallel(1, 2)
                .reduce(0L, MemorySegment::byteSize, Long::sum));
        assertEquals(2, e.chunk());
        assertEquals(planted, e.getCause());
        TeamThreads.assertNoneLeft();
    }

    @Test
    void anErrorFromAnIterablesIteratorSurfacesAtItsChunkInBothForms() {
        StackOverflowError planted = new StackOverflowError("the iterator recursed");
        Iterable<MemorySegment> segments = new FailingSegments(2, i -> MemorySegment.ofArray(new byte[100]), () -> {
            throw planted;
        });
        try (Chunks chunks = Prefetch.from(segments).chunk(100).stages(4).open()) {
            Iterator<MemorySegment> it = chunks.iterator();
            assertEquals(100, it.next().byteSize());
            assertEquals(100, it.next().byteSize());
            ChunkFailedException e = assertThrows(ChunkFailedException.class, it::hasNext);
            assertEquals(2, e.chunk());
            assertEquals(planted, e.getCause());
        }
        ChunkFailedException e = assertThrows(ChunkFailedException.class, () -> Prefetch.from(segments).chunk(100)
            .parallel(1, 2).reduce(0L, MemorySegment::byteSize, Long::sum));
        assertEquals(2, e.chunk());
        assertEquals(planted, e.getCause());
        TeamThreads.assertNoneLeft();
    }

    @Test
    void aSourceTheCopiesCannotReadFailsAtItsChunkNotAsATeamFailure() {
        try (Arena confined = Arena.ofConfined()) {
            MemorySegment data = confined.allocate(1000);
            ChunkFailedException e = assertThrows(ChunkFailedException.class, () -> Prefetch.from(data).chunk(100)
                .parallel(2, 2).reduce(0L, MemorySegment::byteSize, Long::sum));
            assertEquals(0, e.chunk());
            assertTrue(e.getCause().getMessage().contains("confined"), e.getMessage());
            try (Chunks chunks = Prefetch.from(data).chunk(100).open()) {
                e = assertThrows(ChunkFailedException.class, () -> chunks.iterator().next());
                assertEquals(0, e.chunk());
            }
        }
        TeamThreads.assertNoneLeft();
    }

    @Test
    void aClosedCopyEngineIsRefusedAtOpenInBothForms() {
        CopyEngine engine = CopyEngine.builder().workers(1).build();
        engine.close();
        MemorySegment data = MemorySegment.ofArray(new byte[1000]);
        IllegalStateException e = assertThrows(IllegalStateException.class,
            () -> Prefetch.from(data).copyEngine(engine).open());
        assertTrue(e.getMessage().contains("copy engine") && e.getMessage().contains("closed"), e.getMessage());
        e = assertThrows(IllegalStateException.class,
            () -> Prefetch.from(data).copyEngine(engine).parallel(1, 1).reduce(0L, s -> 0L, Long::sum));
        assertTrue(e.getMessage().contains("copy engine") && e.getMessage().contains("closed"), e.getMessage());
    }
}
