package dev.jpipeline;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.copy.CopyEngine;
import dev.jpipeline.prefetch.ChunkFailedException;
import dev.jpipeline.prefetch.Chunks;
import dev.jpipeline.prefetch.Prefetch;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.io.TempDir;
import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The hostile review of the prefetching front: broken sources (a stream that returns no bytes forever, sources
 * that throw {@link Error}s), allocators that give unusable buffers, buffers freed early, a closed copy engine,
 * and the parallel form's end: no copy may write into the buffers after {@code reduce} returned, and an interrupt
 * of its caller stops every thread.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)    // a hang fails
class PrefetchHostileTest {

    @Test
    void anInputStreamThatReturnsNoBytesForeverFailsInsteadOfSpinning() {
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
    void anErrorFromAStreamSurfacesAtItsChunk() {
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
        ParallelPrefetchTestSupport.assertNoTeamThreadLeft();
    }

    @Test
    void anErrorFromAnIterablesIteratorSurfacesAtItsChunk() {
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
        ParallelPrefetchTestSupport.assertNoTeamThreadLeft();
    }

    @Test
    void allocatorsThatGiveUnusableBuffersAreRefusedAtOpen() {
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
    void aClosedCopyEngineIsRefusedAtOpen() {
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

    @Test
    void aTruncatedOrGrownFileFailsAtItsChunkOrIsReadToItsSizeAtOpen() throws IOException {
        java.nio.file.Path file = java.nio.file.Files.createTempFile("prefetch-hostile", ".bin");
        try {
            byte[] data = new byte[4000];
            new Random(5).nextBytes(data);
            java.nio.file.Files.write(file, data);
            try (java.nio.channels.FileChannel channel = java.nio.channels.FileChannel.open(file,
                java.nio.file.StandardOpenOption.READ, java.nio.file.StandardOpenOption.WRITE)) {
                try (Chunks chunks = Prefetch.from(channel).chunk(1000).stages(1).open()) {
                    Iterator<MemorySegment> it = chunks.iterator();
                    assertArrayEquals(Arrays.copyOf(data, 1000), it.next().toArray(JAVA_BYTE));
                    channel.truncate(2500);
                    assertArrayEquals(Arrays.copyOfRange(data, 1000, 2000), it.next().toArray(JAVA_BYTE));
                    ChunkFailedException e = assertThrows(ChunkFailedException.class, it::hasNext);
                    assertEquals(2, e.chunk());
                }
                channel.write(ByteBuffer.wrap(new byte[4000]), 2500);          // now 6500 bytes
                try (Chunks chunks = Prefetch.from(channel).chunk(1000).open()) {
                    long size = chunks.size();
                    channel.write(ByteBuffer.wrap(new byte[1000]), 6500);
                    long read = 0;
                    for (MemorySegment c : chunks) {
                        read += c.byteSize();
                    }
                    assertEquals(size, read, "the size at open");
                }
            }
        } finally {
            java.nio.file.Files.deleteIfExists(file);
        }
    }

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
        ParallelPrefetchTestSupport.assertNoTeamThreadLeft();
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
        ParallelPrefetchTestSupport.assertNoTeamThreadLeft();
        assertEquals(7, readAfterReturn.get(), "the mapper's chunk stayed valid during its call");
        assertEquals(1, calls.get(), "every thread stopped at its next chunk");
    }

    /** The team threads of the parallel form. */
    private static final class ParallelPrefetchTestSupport {
        static void assertNoTeamThreadLeft() {
            Teams.awaitTrue("the team threads end", () -> Thread.getAllStackTraces().keySet().stream()
                .noneMatch(t -> t.getName().startsWith("jpipeline-team-") && t.isAlive()));
        }
    }

    @Test
    void theMostStagesWorkForEveryFormAndOneMoreIsRefused() {
        byte[] data = new byte[3000];
        new Random(11).nextBytes(data);
        int most = Prefetch.MAX_STAGES;
        try (Chunks chunks = Prefetch.from(new ByteArrayInputStream(data)).chunk(7).stages(most).open()) {
            long read = 0;
            for (MemorySegment c : chunks) {
                read += c.byteSize();
            }
            assertEquals(data.length, read);
        }
        assertEquals(data.length, Prefetch.from(new ByteArrayInputStream(data)).chunk(7).stages(most).parallel(1, 2)
            .reduce(0L, MemorySegment::byteSize, Long::sum));
        assertEquals(data.length, Prefetch.from(MemorySegment.ofArray(data)).chunk(7).stages(most).parallel(2, 2)
            .reduce(0L, MemorySegment::byteSize, Long::sum));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> Prefetch.from(MemorySegment.ofArray(data)).stages(most + 1));
        assertTrue(e.getMessage().contains("1 to " + most + " stages"), e.getMessage());
    }

    @Test
    void aSmallSourceWithHugeChunksAllocatesOnlyWhatItNeeds() {
        byte[] data = new byte[10];
        new Random(13).nextBytes(data);
        java.util.concurrent.atomic.AtomicLong asked = new java.util.concurrent.atomic.AtomicLong();
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
        ParallelPrefetchTestSupport.assertNoTeamThreadLeft();
    }

    @Test
    void theParallelFormRefusesBuffersFreedDuringTheRun() {
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
        ParallelPrefetchTestSupport.assertNoTeamThreadLeft();
    }

    @Test
    void aFileSizedOnlyAtItsEndIsReadToItsEndInBothForms() throws IOException {
        Path cpuinfo = Path.of("/proc/cpuinfo");
        Assumptions.assumeTrue(Files.isReadable(cpuinfo) && Files.size(cpuinfo) == 0, "a Linux /proc file");
        byte[] direct = Files.readAllBytes(cpuinfo);                     // read to its end: its real bytes
        assertTrue(direct.length > 0);
        ByteArrayOutputStream read = new ByteArrayOutputStream();
        try (Chunks chunks = Prefetch.from(cpuinfo).chunk(100).stages(3).open()) {
            assertEquals(-1, chunks.size(), "a size known only at the end");
            for (MemorySegment chunk : chunks) {
                read.writeBytes(chunk.toArray(JAVA_BYTE));
            }
        }
        assertEquals(new String(direct, StandardCharsets.ISO_8859_1), read.toString(StandardCharsets.ISO_8859_1));
        long bytes = Prefetch.from(cpuinfo).chunk(100).parallel(2, 2).reduce(0L, MemorySegment::byteSize, Long::sum);
        assertEquals(direct.length, bytes, "the parallel form reads it in order, by one of its two producers");
        try (FileChannel channel = FileChannel.open(cpuinfo); Chunks chunks = Prefetch.from(channel).open()) {
            assertEquals(direct.length, chunks.stream().mapToLong(MemorySegment::byteSize).sum());
        }
        ParallelPrefetchTestSupport.assertNoTeamThreadLeft();
    }

    @Test
    void aFifoIsReadToItsEnd(@TempDir Path dir) throws Exception {
        Path fifo = dir.resolve("fifo");
        Assumptions.assumeTrue(new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor() == 0, "mkfifo");
        byte[] data = new byte[10_000];
        new Random(11).nextBytes(data);
        Thread writer = Thread.ofPlatform().start(() -> {
            try {
                Files.write(fifo, data);                    // blocks until the prefetch opens the FIFO for reading
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        ByteArrayOutputStream read = new ByteArrayOutputStream();
        try (Chunks chunks = Prefetch.from(fifo).chunk(1000).open()) {
            for (MemorySegment chunk : chunks) {
                read.writeBytes(chunk.toArray(JAVA_BYTE));
            }
        }
        writer.join();
        assertArrayEquals(data, read.toByteArray());
    }

    @Test
    void aWriteOnlyFileChannelIsRefusedAtOpen(@TempDir Path dir) throws IOException {
        Path file = Files.write(dir.resolve("data"), new byte[1000]);
        try (FileChannel writeOnly = FileChannel.open(file, StandardOpenOption.WRITE)) {
            IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> Prefetch.from(writeOnly).open());
            assertTrue(e.getMessage().contains("must be open for reading"), e.getMessage());
            e = assertThrows(IllegalArgumentException.class,
                () -> Prefetch.from(writeOnly).parallel(1, 1).reduce(0L, MemorySegment::byteSize, Long::sum));
            assertTrue(e.getMessage().contains("must be open for reading"), e.getMessage());
        }
    }

    @Test
    void aDirectoryIsRefusedAtOpen(@TempDir Path dir) {
        UncheckedIOException e = assertThrows(UncheckedIOException.class, () -> Prefetch.from(dir).open());
        assertTrue(e.getMessage().contains("is a directory"), e.getMessage());
        e = assertThrows(UncheckedIOException.class,
            () -> Prefetch.from(dir).parallel(1, 1).reduce(0L, MemorySegment::byteSize, Long::sum));
        assertTrue(e.getMessage().contains("is a directory"), e.getMessage());
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
        ParallelPrefetchTestSupport.assertNoTeamThreadLeft();
    }

    @Test
    void aMapperThatReentersThePrefetchRunsANestedRun() {
        Prefetch p = Prefetch.from(MemorySegment.ofArray(new byte[1000])).chunk(100);
        long total = p.parallel(1, 2).reduce(0L, s -> p.parallel(1, 1).reduce(0L, MemorySegment::byteSize,
            Long::sum), Long::sum);
        assertEquals(10 * 1000, total);
    }

    @Test
    void sourcesOfEveryKindWithChunksOfOneByte() {
        byte[] data = new byte[3000];
        new Random(9).nextBytes(data);
        for (InputStream in : List.of(new ByteArrayInputStream(data))) {
            try (Chunks chunks = Prefetch.from(in).chunk(1).stages(7).open()) {
                int at = 0;
                for (MemorySegment c : chunks) {
                    assertEquals(data[at++], c.get(JAVA_BYTE, 0));
                }
                assertEquals(data.length, at);
            }
        }
        long sum = Prefetch.from(MemorySegment.ofArray(data)).chunk(1).stages(3).parallel(1, 2)
            .reduce(0L, MemorySegment::byteSize, Long::sum);
        assertEquals(data.length, sum);
    }
}
