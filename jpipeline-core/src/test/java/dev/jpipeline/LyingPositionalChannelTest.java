package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.jpipeline.prefetch.Chunks;
import dev.jpipeline.prefetch.Prefetch;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A {@code FileChannel} whose positional read returns a positive count without filling the buffer (issue 26, as
 * finding 5 for stream reads): the copy engine's file reads (CopySubmission.readWindow) judge progress by the
 * buffer, so the copy fails its chunk or stage with an IOException naming the count, instead of spinning its worker
 * forever while the consumer waits. Each form that reads through the engine: the for-each and parallel prefetch of
 * a channel, and memcpyAsync from a channel.
 */
@Timeout(value = 20, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)     // a hang fails
class LyingPositionalChannelTest {

    /** A 1000-byte "file" whose positional reads say they filled the buffer and put nothing in it (but the last
     *  byte, which open() looks at, is really there). */
    private static FileChannel saysFullPutsNothing() {
        return new PositionalReadChannel() {
            @Override
            public int read(ByteBuffer dst, long position) {
                if (position >= 1000) {
                    return -1;
                }
                if (position == 999) {
                    dst.put((byte) 1);
                    return 1;
                }
                return dst.remaining();
            }

            @Override
            public long size() {
                return 1000;
            }
        };
    }

    private static void assertCausedByIOException(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof IOException) {
                return;
            }
        }
        throw new AssertionError("no IOException in the causes of " + t, t);
    }

    @Test
    void aPositionalReadThatSaysItFilledTheBufferButPutNothingFailsItsChunk() {
        RuntimeException e = assertThrows(RuntimeException.class, () -> {
            try (Chunks chunks = Prefetch.from(saysFullPutsNothing()).chunk(100).open()) {
                for (MemorySegment chunk : chunks) {
                    chunk.byteSize();
                }
            }
        });
        assertCausedByIOException(e);
    }

    @Test
    void aPositionalReadThatSaysItFilledTheBufferButPutNothingFailsItsChunkInTheParallelForm() {
        RuntimeException e = assertThrows(RuntimeException.class, () -> Prefetch.from(saysFullPutsNothing())
            .chunk(100).parallel(2, 2).reduce(0L, MemorySegment::byteSize, Long::sum));
        assertCausedByIOException(e);
    }

    @Test
    void aMemcpyAsyncFromAChannelThatSaysItFilledTheBufferButPutNothingFailsItsStage() {
        Pipeline pipe = Pipeline.make();
        MemorySegment dst = Arena.ofAuto().allocate(500);
        pipe.producerAcquire();
        MemcpyAsync.memcpyAsync(dst, saysFullPutsNothing(), 0, 500, pipe);
        pipe.producerCommit();
        RuntimeException e = assertThrows(RuntimeException.class, pipe::consumerWait);
        assertCausedByIOException(e);
    }
}
