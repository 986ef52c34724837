package dev.jpipeline.prefetch;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.PositionalReadChannel;
import dev.jpipeline.Teams;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The end of a parallel run ({@link ParallelPrefetch#reduce}): a failed run returns only once no read in flight
 * can write into its buffers, an interrupt of its caller stops every thread and frees the buffers only after them,
 * a stage whose copy was refused is never mapped, and a mapper may run a nested run of the same prefetch.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)    // a hang fails
class ParallelRunTest {

    /** A file whose read of {@code held} waits until {@link #open} and then records whether its write failed. */
    private static final class HeldReadChannel extends PositionalReadChannel {
        final byte[] data;
        final long held;
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch open = new CountDownLatch(1);
        final CountDownLatch done = new CountDownLatch(1);
        final AtomicReference<Throwable> writeFailure = new AtomicReference<>();

        HeldReadChannel(byte[] data, long held) {
            this.data = data;
            this.held = held;
        }

        @Override
        public int read(ByteBuffer dst, long position) throws IOException {
            if (position == held) {
                entered.countDown();
                try {
                    if (!open.await(20, TimeUnit.SECONDS)) {
                        throw new IOException("the held read was never let go");
                    }
                } catch (InterruptedException e) {
                    throw new IOException(e);
                }
            }
            int n = (int) Math.min(dst.remaining(), data.length - position);
            try {
                dst.put(data, (int) position, n);
            } catch (RuntimeException e) {
                writeFailure.set(e);
                throw e;
            } finally {
                if (position == held) {
                    done.countDown();
                }
            }
            return n;
        }

        @Override
        public long size() {
            return data.length;
        }
    }

    @Test
    void aFailedRunWaitsForTheReadsInFlightBeforeItFreesTheBuffers() throws Exception {
        HeldReadChannel channel = new HeldReadChannel(new byte[8 * 1000], 1000);
        AtomicReference<Thread> consumer = new AtomicReference<>();
        AtomicBoolean returned = new AtomicBoolean();
        AtomicReference<Throwable> outcome = new AtomicReference<>();
        Thread caller = Thread.ofPlatform().start(() -> {
            try {
                Prefetch.from(channel).chunk(1000).stages(2).parallel(1, 1).reduce(0L, s -> {
                    try {
                        assertTrue(channel.entered.await(20, TimeUnit.SECONDS), "chunk 1's read started");
                    } catch (InterruptedException e) {
                        throw new AssertionError(e);
                    }
                    consumer.set(Thread.currentThread());
                    throw new IllegalArgumentException("chunk 0 is refused");
                }, Long::sum);
            } catch (Throwable t) {
                outcome.set(t);
            } finally {
                returned.set(true);
            }
        });
        // Let chunk 1's read go once the run has either returned or its consumer waits (for that read, when fixed).
        Teams.awaitTrue("the run returned, or its consumer waits", () -> returned.get() || (consumer.get() != null
            && consumer.get().getState() != Thread.State.RUNNABLE));
        channel.open.countDown();
        caller.join();
        assertTrue(channel.done.await(20, TimeUnit.SECONDS));
        assertNull(channel.writeFailure.get(), "the read in flight wrote into buffers freed before it ended");
        ChunkFailedException e = assertInstanceOf(ChunkFailedException.class, outcome.get());
        assertEquals(0, e.chunk());
        TeamThreads.assertNoneLeft();
    }

    @Test
    void interruptingTheReduceCallerStopsEveryThreadAndFreesTheBuffersOnlyAfterThem() throws Exception {
        byte[] data = new byte[64 * 100];
        Arrays.fill(data, (byte) 7);
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger calls = new AtomicInteger();
        AtomicInteger readAfterReturn = new AtomicInteger(-1);
        AtomicBoolean mapperDone = new AtomicBoolean();
        AtomicReference<Throwable> outcome = new AtomicReference<>();
        AtomicBoolean interruptKept = new AtomicBoolean();
        AtomicBoolean mapperDoneAtReturn = new AtomicBoolean();
        Thread caller = Thread.ofPlatform().start(() -> {
            try {
                Prefetch.from(MemorySegment.ofArray(data)).chunk(100).stages(2).parallel(1, 1).reduce(0L, s -> {
                    calls.incrementAndGet();
                    entered.countDown();
                    try {
                        release.await(20, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        throw new AssertionError(e);
                    }
                    readAfterReturn.set(s.get(JAVA_BYTE, 99));      // the buffers must still be there
                    mapperDone.set(true);
                    return s.byteSize();
                }, Long::sum);
            } catch (Throwable t) {
                outcome.set(t);
                mapperDoneAtReturn.set(mapperDone.get());
                interruptKept.set(Thread.currentThread().isInterrupted());
            }
        });
        assertTrue(entered.await(20, TimeUnit.SECONDS));
        caller.interrupt();
        caller.join(20_000);
        assertTrue(!caller.isAlive(), "an interrupt ends reduce without waiting for a mapper that blocks");
        assertInstanceOf(CancellationException.class, outcome.get());
        assertTrue(interruptKept.get(), "the interrupt status is kept");
        assertTrue(!mapperDoneAtReturn.get());
        release.countDown();
        Teams.awaitTrue("the mapper returned", mapperDone::get);
        TeamThreads.assertNoneLeft();
        assertEquals(7, readAfterReturn.get(), "the mapper's chunk stayed valid during its call");
        assertEquals(1, calls.get(), "every thread stopped at its next chunk");
    }

    @Test
    void theMapperNeverSeesAStageWhoseCopyWasRefused() {
        AtomicInteger mapped = new AtomicInteger();
        for (int run = 0; run < 20; run++) {
            try (Arena confined = Arena.ofConfined()) {
                MemorySegment data = confined.allocate(1000);       // the copy workers cannot read it
                ChunkFailedException e = assertThrows(ChunkFailedException.class, () -> Prefetch.from(data)
                    .chunk(100).parallel(1, 1).reduce(0L, chunk -> (long) mapped.incrementAndGet(), Long::sum));
                assertEquals(0, e.chunk());
            }
        }
        assertEquals(0, mapped.get(), "the mapper computed on stages that were never read");
        TeamThreads.assertNoneLeft();
    }

    @Test
    void aMapperThatReentersThePrefetchRunsANestedRunToItsEnd() {
        Prefetch p = Prefetch.from(MemorySegment.ofArray(new byte[1000])).chunk(100);
        long total = p.parallel(1, 2).reduce(0L, s -> p.parallel(1, 1).reduce(0L, MemorySegment::byteSize,
            Long::sum), Long::sum);
        assertEquals(10 * 1000, total);
    }
}
