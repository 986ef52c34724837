package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.jpipeline.copy.CopyEngine;
import dev.jpipeline.internal.EngineProbe;
import dev.jpipeline.internal.PhaseBarrier;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A hostile review of the rewritten engine (issue 8): each test reproduces one problem and fails on the code it
 * was written against. Every wait is bounded.
 */
class HostileReviewTest {

    private static final Duration BOUND = Duration.ofSeconds(30);

    // -------------------------------------------------------------------------------------------------------------
    // 1. quit() while holding an acquired, uncommitted stage delivers that stage to the consumers as complete

    // -------------------------------------------------------------------------------------------------------------
    // 2. A peer that waits in timed waits shorter than a quarter of the patience never notices a dead participant

    // -------------------------------------------------------------------------------------------------------------
    // 3. The Treiber stack of waiters grows without bound while two threads wait long

    // -------------------------------------------------------------------------------------------------------------
    // 4. A file read whose chunk exceeds 2 GiB fails with UnsupportedOperationException

    /**
     * CopySubmission.copyChunk wraps the whole chunk with asByteBuffer(), which refuses segments over 2 GiB. With
     * one worker (the shared engine on machines with fewer than 8 cores) a chunk is the whole read, so reading a
     * 2 GiB + 4 KiB file region fails: StageFailedException caused by "Segment is too large to wrap as ByteBuffer".
     * (The destination is a sparse mapped file and the channel only advances the buffer: nothing is touched.)
     */
    @Test
    void aFileReadLargerThan2GiBSucceeds() throws IOException {
        long size = (1L << 31) + 4096;
        Path file = Files.createTempFile("hostile-big", ".bin");
        try (Arena arena = Arena.ofShared();
             FileChannel backing = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE,
                 StandardOpenOption.SPARSE);
             CopyEngine engine = CopyEngine.builder().workers(1).build()) {
            MemorySegment dst = backing.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
            assertTimeoutPreemptively(BOUND, () -> {
                Pipeline pipe = Pipeline.make(engine);
                pipe.producerAcquire();
                MemcpyAsync.memcpyAsync(dst, new SkippingChannel(size), 0, size, pipe);
                pipe.producerCommit();
                try {
                    pipe.consumerWait();
                } catch (StageFailedException e) {
                    fail("a valid 2 GiB + 4 KiB read failed: " + e.getCause(), e);
                }
                pipe.consumerRelease();
            });
        } finally {
            Files.deleteIfExists(file);
        }
    }

    // -------------------------------------------------------------------------------------------------------------
    // 5. A failed stage's second wait returns normally

    /**
     * consumerWait is "idempotent until the release", but only the first call reports the failed copy: a second
     * consumerWait (a retry, or a consumerWaitFor loop that caught the exception) returns normally and hands the
     * consumer the corrupt stage.
     */
    @Test
    void aFailedStageStaysFailedOnTheNextWait() {
        assertTimeoutPreemptively(BOUND, () -> {
            PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 2);
            GatedFileChannel file = new GatedFileChannel(new byte[4096]);
            file.failFrom(0);
            MemorySegment stage = Arena.ofShared().allocate(4096);
            Pipeline pipe = Pipeline.make(Teams.soloGroup(), state);
            pipe.producerAcquire();
            MemcpyAsync.memcpyAsync(stage, file, 0, 4096, pipe);
            pipe.producerCommit();
            assertThrows(StageFailedException.class, pipe::consumerWait);
            assertThrows(StageFailedException.class, pipe::consumerWait,
                "the same failed stage, waited for again, must not be handed over as good");
        });
    }

    /** The same on a thread-scope pipeline, through consumerWaitFor. */
    @Test
    void aFailedThreadScopeBatchStaysFailedOnTheNextWait() {
        assertTimeoutPreemptively(BOUND, () -> {
            GatedFileChannel file = new GatedFileChannel(new byte[4096]);
            file.failFrom(0);
            MemorySegment stage = Arena.ofShared().allocate(4096);
            Pipeline pipe = Pipeline.make();
            pipe.producerAcquire();
            MemcpyAsync.memcpyAsync(stage, file, 0, 4096, pipe);
            pipe.producerCommit();
            assertThrows(StageFailedException.class, () -> pipe.consumerWaitFor(Duration.ofSeconds(5)));
            assertThrows(StageFailedException.class, () -> pipe.consumerWaitFor(Duration.ofSeconds(5)),
                "the same failed batch, waited for again, must not be handed over as good");
        });
    }

    // -------------------------------------------------------------------------------------------------------------
    // 6. Two groups making pipelines on one shared state at the same time share one ring silently

    // -------------------------------------------------------------------------------------------------------------
    // 7. Absurd timeouts

    // -------------------------------------------------------------------------------------------------------------
    // 8. A wait strategy that idles for a while (the Disruptor's SleepingWaitStrategy shape) breaks deadlines

    // -------------------------------------------------------------------------------------------------------------
    // 9. A Barrier completion action run by a copy's landing: its exception is lost

    // -------------------------------------------------------------------------------------------------------------
    // Checked and sound (pass on the current code; kept as guards)

    // -------------------------------------------------------------------------------------------------------------
    // Helpers (same module: the engine's fields are read reflectively, nothing is changed)

    /** A "file" of {@code size} bytes whose positional reads fill the buffer without touching it. */
    private static final class SkippingChannel extends PositionalReadChannel {
        private final long size;

        SkippingChannel(long size) {
            this.size = size;
        }

        @Override
        public int read(ByteBuffer dst, long position) {
            if (position >= size) {
                return -1;
            }
            int n = (int) Math.min(dst.remaining(), size - position);
            dst.position(dst.position() + n);
            return n;
        }

        @Override
        public long size() {
            return size;
        }
    }
}
