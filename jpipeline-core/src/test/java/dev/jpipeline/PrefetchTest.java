package dev.jpipeline;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.prefetch.ChunkFailedException;
import dev.jpipeline.prefetch.Chunks;
import dev.jpipeline.prefetch.Prefetch;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.channels.Pipe;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The prefetching front ({@link Prefetch}, {@link Chunks}): every source kind delivers exactly the source's bytes
 * in order, under random chunk sizes, stage counts and lengths (seeded: the seed is printed, and
 * {@code -Djpipeline.prefetch.seed=S} replays it); failures surface at their chunk after the earlier chunks;
 * chunks are unusable once released; early close never waits for a stream that does not answer.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PrefetchTest {

    @TempDir
    Path dir;

    /** The kinds of source, each made over the given bytes. */
    private enum Kind { FILE_CHANNEL, PATH, SEGMENT, ITERABLE, CHANNEL, STREAM }

    private Prefetch prefetch(Kind kind, byte[] data, Random random) throws IOException {
        return switch (kind) {
            case FILE_CHANNEL -> {
                Path file = Files.write(dir.resolve("fc-" + random.nextInt()), data);
                FileChannel channel = FileChannel.open(file, StandardOpenOption.READ);
                yield Prefetch.from(channel);
            }
            case PATH -> Prefetch.from(Files.write(dir.resolve("p-" + random.nextInt()), data));
            case SEGMENT -> Prefetch.from(MemorySegment.ofArray(data));
            case ITERABLE -> Prefetch.from(pieces(data, random));
            case CHANNEL -> Prefetch.from(Channels.newChannel(new ByteArrayInputStream(data)));
            case STREAM -> Prefetch.from(trickle(data, random.nextLong()));
        };
    }

    /** The bytes cut at random places into segments (empty ones among them), heap and native alike. */
    private static List<MemorySegment> pieces(byte[] data, Random random) {
        List<MemorySegment> pieces = new ArrayList<>();
        for (int at = 0; at < data.length || pieces.isEmpty(); ) {
            int length = Math.min(data.length - at, random.nextInt(3) == 0 ? 0 : random.nextInt(1, 3000));
            MemorySegment piece = random.nextBoolean() ? MemorySegment.ofArray(new byte[length])
                : Arena.ofAuto().allocate(Math.max(1, length)).asSlice(0, length);
            MemorySegment.copy(MemorySegment.ofArray(data), at, piece, 0, length);
            pieces.add(piece);
            at += length;
        }
        return pieces;
    }

    /** A stream that returns 1 to 7 bytes per read: a source whose reads never fill a stage at once. */
    private static InputStream trickle(byte[] data, long seed) {
        Random random = new Random(seed);
        return new ByteArrayInputStream(data) {
            @Override
            public synchronized int read(byte[] b, int off, int len) {
                return super.read(b, off, Math.min(len, random.nextInt(1, 8)));
            }
        };
    }

    /** Reads every chunk, checking each against the chunk size, and returns the bytes in order. */
    private static byte[] drain(Chunks chunks, long chunk) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (MemorySegment c : chunks) {
            assertTrue(c.byteSize() > 0 && c.byteSize() <= chunk, "a chunk of " + c.byteSize() + " bytes, chunk size "
                + chunk);
            out.writeBytes(c.toArray(JAVA_BYTE));
        }
        return out.toByteArray();
    }

    @Test
    void everySourceKindDeliversItsBytesInOrder() throws IOException {
        long seed = Long.getLong("jpipeline.prefetch.seed", System.nanoTime());
        System.out.println("PrefetchTest seed " + seed + " (replay: -Djpipeline.prefetch.seed=" + seed + ")");
        Random random = new Random(seed);
        for (int round = 0; round < 60; round++) {
            Kind kind = Kind.values()[round % Kind.values().length];
            int chunk = random.nextInt(4) == 0 ? random.nextInt(1, 64) : random.nextInt(1, 300_000);
            int stages = random.nextInt(1, 6);
            int length = switch (random.nextInt(4)) {
                case 0 -> 0;
                case 1 -> chunk * random.nextInt(1, 5);            // a whole number of chunks
                default -> random.nextInt(0, 1_000_000);
            };
            byte[] data = new byte[length];
            random.nextBytes(data);
            String what = kind + ", " + length + " bytes in chunks of " + chunk + ", " + stages + " stages, seed " + seed;
            try (Chunks chunks = prefetch(kind, data, random).chunk(chunk).stages(stages).open()) {
                boolean sizedAtTheEnd = kind == Kind.ITERABLE || kind == Kind.CHANNEL || kind == Kind.STREAM
                    || length == 0 && kind != Kind.SEGMENT;         // an empty file is read as /proc files are
                long expectedSize = sizedAtTheEnd ? -1 : length;
                assertEquals(expectedSize, chunks.size(), what);
                assertArrayEquals(data, drain(chunks, chunk), what);
            }
        }
    }

    @Test
    void aFileChannelIsReadFromItsPositionWhichStaysAsItWas() throws IOException {
        byte[] data = new byte[10_000];
        new Random(1).nextBytes(data);
        try (FileChannel channel = FileChannel.open(Files.write(dir.resolve("f"), data), StandardOpenOption.READ)) {
            channel.position(1234);
            try (Chunks chunks = Prefetch.from(channel).chunk(1000).open()) {
                assertEquals(data.length - 1234, chunks.size());
                assertArrayEquals(java.util.Arrays.copyOfRange(data, 1234, data.length), drain(chunks, 1000));
            }
            assertEquals(1234, channel.position());
            assertTrue(channel.isOpen(), "the user's channel is the user's to close");
        }
    }

    @Test
    void aFailedReadSurfacesAtItsChunkAfterTheEarlierChunksIntact() {
        byte[] data = new byte[10 * 4096];
        new Random(2).nextBytes(data);
        GatedFileChannel channel = new GatedFileChannel(data);
        channel.failFrom(3 * 4096);
        try (Chunks chunks = Prefetch.from(channel).chunk(4096).stages(4).open()) {
            Iterator<MemorySegment> it = chunks.iterator();
            for (int c = 0; c < 3; c++) {
                assertArrayEquals(java.util.Arrays.copyOfRange(data, c * 4096, (c + 1) * 4096),
                    it.next().toArray(JAVA_BYTE), "chunk " + c);
            }
            ChunkFailedException e = assertThrows(ChunkFailedException.class, it::hasNext);
            assertEquals(3, e.chunk());
            assertEquals(3 * 4096, e.position());
            assertInstanceOf(IOException.class, e.getCause());
            assertTrue(e.getMessage().contains("chunk 3 (from byte 12288) of a FileChannel")
                && e.getMessage().contains("injected read error at position 12288"), e.getMessage());
            IllegalStateException after = assertThrows(IllegalStateException.class, it::next);
            assertTrue(after.getMessage().contains("failed at chunk 3"), after.getMessage());
        }
    }

    @Test
    void aStreamOrAnIterableThatFailsSurfacesAtItsChunk() {
        byte[] data = new byte[5000];
        InputStream failing = new ByteArrayInputStream(data) {
            @Override
            public synchronized int read(byte[] b, int off, int len) {
                if (pos >= 2500) {
                    throw new IllegalStateException("the stream broke at byte " + pos);
                }
                return super.read(b, off, Math.min(len, 2500 - pos));
            }
        };
        try (Chunks chunks = Prefetch.from(failing).chunk(1000).open()) {
            Iterator<MemorySegment> it = chunks.iterator();
            assertEquals(1000, it.next().byteSize());
            assertEquals(1000, it.next().byteSize());
            ChunkFailedException e = assertThrows(ChunkFailedException.class, it::next);
            assertEquals(2, e.chunk());
            assertEquals(2000, e.position());
            assertTrue(e.getCause().getMessage().contains("broke at byte 2500"), e.getMessage());
        }
        Iterable<MemorySegment> segments = new FailingSegments(3, i -> MemorySegment.ofArray(new byte[100 * (i + 1)]),
            () -> {
                throw new IllegalArgumentException("segment 3 cannot be made");
            });
        try (Chunks chunks = Prefetch.from(segments).chunk(150).open()) {
            List<Long> sizes = new ArrayList<>();
            ChunkFailedException e = assertThrows(ChunkFailedException.class, () -> {
                for (MemorySegment c : chunks) {
                    sizes.add(c.byteSize());
                }
            });
            assertEquals(List.of(100L, 150L, 50L, 150L, 150L), sizes, "segments of 100, 200 and 300 bytes");
            assertEquals(5, e.chunk());
            assertEquals(600, e.position());
            assertInstanceOf(IllegalArgumentException.class, e.getCause());
        }
    }

    @Test
    void aChunkCannotBeUsedOnceTheIterationHasMovedOnOrClosed() throws InterruptedException {
        byte[] data = new byte[4000];
        new Random(3).nextBytes(data);
        Chunks chunks = Prefetch.from(MemorySegment.ofArray(data)).chunk(1000).stages(2).open();
        Iterator<MemorySegment> it = chunks.iterator();
        MemorySegment first = it.next();
        ByteBuffer firstBuffer = first.asByteBuffer();
        assertEquals(data[0], first.get(JAVA_BYTE, 0));
        AtomicReference<Throwable> elsewhere = new AtomicReference<>();
        Thread other = Thread.ofPlatform().start(() -> {
            try {
                first.get(JAVA_BYTE, 0);
            } catch (Throwable t) {
                elsewhere.set(t);
            }
        });
        other.join();
        assertInstanceOf(WrongThreadException.class, elsewhere.get(), "a chunk is confined to the iterating thread");
        assertTrue(it.hasNext());                       // the step: chunk 0's stage is released
        assertThrows(IllegalStateException.class, () -> first.get(JAVA_BYTE, 0));
        assertThrows(IllegalStateException.class, () -> firstBuffer.get(0));
        MemorySegment second = it.next();
        assertEquals(data[1000], second.get(JAVA_BYTE, 0));
        chunks.close();
        assertThrows(IllegalStateException.class, () -> second.get(JAVA_BYTE, 0));
        IllegalStateException closed = assertThrows(IllegalStateException.class, it::hasNext);
        assertTrue(closed.getMessage().contains("closed"), closed.getMessage());
        chunks.close();                                 // idempotent
    }

    @Test
    void theIterationBelongsToItsThreadAndRunsOnce() throws InterruptedException {
        try (Chunks chunks = Prefetch.from(MemorySegment.ofArray(new byte[10])).open()) {
            AtomicReference<Throwable> elsewhere = new AtomicReference<>();
            Thread other = Thread.ofPlatform().name("intruder").start(() -> {
                try {
                    chunks.iterator();
                } catch (Throwable t) {
                    elsewhere.set(t);
                }
            });
            other.join();
            assertInstanceOf(IllegalStateException.class, elsewhere.get());
            assertTrue(elsewhere.get().getMessage().contains("'intruder'"), elsewhere.get().getMessage());
            Iterator<MemorySegment> it = chunks.iterator();
            assertEquals(10, it.next().byteSize());
            assertFalse(it.hasNext());
            assertThrows(NoSuchElementException.class, it::next);
            IllegalStateException twice = assertThrows(IllegalStateException.class, chunks::iterator);
            assertTrue(twice.getMessage().contains("iterated once"), twice.getMessage());
        }
    }

    @Test
    void closingEarlyWaitsForTheCopiesInFlightBeforeItFreesTheBuffers() throws Exception {
        int chunk = 4096;
        GatedFileChannel channel = new GatedFileChannel(new byte[16 * chunk]);
        CountDownLatch gate = channel.gate(5L * chunk);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch closing = new CountDownLatch(1);
        Thread owner = Thread.ofPlatform().name("prefetch-owner").start(() -> {
            try {
                Chunks chunks = Prefetch.from(channel).chunk(chunk).stages(4).open();
                Iterator<MemorySegment> it = chunks.iterator();
                it.next();
                it.next();
                it.next();                  // chunks 4, 5 and 6 were issued: 5's read waits at its gate
                closing.countDown();
                chunks.close();
                assertEquals(0, channel.served(5L * chunk).getCount(), "close returned before the read landed");
            } catch (Throwable t) {
                failure.set(t);
            }
        });
        closing.await();
        Teams.awaitTrue("close waits for the read in flight", () -> owner.getState() == Thread.State.WAITING
            || owner.getState() == Thread.State.TIMED_WAITING);
        assertEquals(1, channel.served(5L * chunk).getCount());
        gate.countDown();
        owner.join(TimeUnit.SECONDS.toMillis(20));
        assertFalse(owner.isAlive());
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
    }

    @Test
    void closingEarlyNeverWaitsForAStreamThatDoesNotAnswer() throws Exception {
        PipedOutputStream writer = new PipedOutputStream();
        PipedInputStream quiet = new PipedInputStream(writer, 1 << 16);
        writer.write(new byte[1500]);                   // one chunk and a half; then the stream says nothing more
        writer.flush();
        Thread reader;
        try (Chunks chunks = Prefetch.from(quiet).chunk(1000).open()) {
            Iterator<MemorySegment> it = chunks.iterator();
            assertEquals(1000, it.next().byteSize());
            reader = readerThread();
            Teams.awaitTrue("the reader blocks in the stream's read", () -> reader.getState() != Thread.State.RUNNABLE);
        }                                               // returns although the reader is blocked in read()
        assertTrue(reader.isAlive());
        writer.close();                                 // the stream ends: the reader sees it closed and stops
        reader.join(TimeUnit.SECONDS.toMillis(20));
        assertFalse(reader.isAlive(), "the reader thread ends once its read returns");
    }

    @Test
    void theStreamBridgeIsOrderedSizedWhenKnownAndClosesTheChunks() throws IOException {
        byte[] data = new byte[10_500];
        new Random(6).nextBytes(data);
        Path file = Files.write(dir.resolve("s"), data);
        try (Chunks chunks = Prefetch.from(file).chunk(1000).open();
             java.util.stream.Stream<MemorySegment> stream = chunks.stream()) {
            java.util.Spliterator<MemorySegment> spliterator = stream.spliterator();
            assertTrue(spliterator.hasCharacteristics(java.util.Spliterator.SIZED
                | java.util.Spliterator.ORDERED | java.util.Spliterator.NONNULL));
            assertEquals(11, spliterator.getExactSizeIfKnown());
            assertEquals(null, spliterator.trySplit(), "a chunk lives until the next step: no batches ahead");
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            spliterator.forEachRemaining(c -> out.writeBytes(c.toArray(JAVA_BYTE)));
            assertArrayEquals(data, out.toByteArray());
            assertThrows(IllegalStateException.class, chunks::iterator, "the stream was the one iteration");
        }
        Chunks chunks = Prefetch.from(new ByteArrayInputStream(data)).chunk(1000).open();
        java.util.stream.Stream<MemorySegment> stream = chunks.stream();
        assertEquals(-1, stream.spliterator().getExactSizeIfKnown(), "a stream source's chunk count is unknown");
        stream.close();
        IllegalStateException closed = assertThrows(IllegalStateException.class, () -> chunks.iterator());
        assertTrue(closed.getMessage().contains("iterated once") || closed.getMessage().contains("closed"));
        try (Chunks kept = Prefetch.from(MemorySegment.ofArray(data)).chunk(1000).open()) {
            List<MemorySegment> views = kept.stream().toList();
            assertEquals(11, views.size());
            assertThrows(IllegalStateException.class, () -> views.get(0).get(JAVA_BYTE, 0),
                "a kept chunk fails, it never shows refilled bytes");
            long sum = 0;
            for (byte b : data) {
                sum += b;
            }
            try (Chunks again = Prefetch.from(MemorySegment.ofArray(data)).chunk(1000).open()) {
                long streamed = again.stream().mapToLong(c -> {
                    long s = 0;
                    for (byte b : c.toArray(JAVA_BYTE)) {
                        s += b;
                    }
                    return s;
                }).sum();
                assertEquals(sum, streamed);
            }
        }
    }

    @Test
    void badOptionsAndSourcesAreRefusedNamingTheRule() throws IOException {
        Prefetch p = Prefetch.from(MemorySegment.ofArray(new byte[1]));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> p.chunk(0)).getMessage()
            .contains("1 to 1073741824 bytes (1 GiB), got 0"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> p.chunk((1L << 30) + 1)).getMessage()
            .contains("got 1073741825"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> p.stages(0)).getMessage()
            .contains("1 to 255 stages, got 0"));
        assertThrows(IllegalArgumentException.class, () -> p.stages(256));
        assertThrows(NullPointerException.class, () -> Prefetch.from((Path) null));
        assertThrows(NullPointerException.class, () -> p.copyEngine(null));
        Pipe pipe = Pipe.open();
        try {
            pipe.source().configureBlocking(false);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Prefetch.from(pipe.source()));
            assertTrue(e.getMessage().contains("must be blocking"), e.getMessage());
        } finally {
            pipe.source().close();
            pipe.sink().close();
        }
        IllegalArgumentException small = assertThrows(IllegalArgumentException.class,
            () -> Prefetch.from(MemorySegment.ofArray(new byte[8192])).chunk(4096)
                .buffers((bytes, alignment) -> Arena.ofAuto().allocate(16)).open());
        assertTrue(small.getMessage().contains("16 bytes for a stage of 4096"), small.getMessage());
        java.io.UncheckedIOException missing = assertThrows(java.io.UncheckedIOException.class,
            () -> Prefetch.from(dir.resolve("missing")).open());
        assertTrue(missing.getMessage().contains("missing"), missing.getMessage());
    }

    /** The prefetch reader thread (there is one alive in this test). */
    private static Thread readerThread() {
        AtomicReference<Thread> found = new AtomicReference<>();
        Teams.awaitTrue("a prefetch reader thread runs", () -> {
            Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith("jpipeline-prefetch-reader"))
                .filter(Thread::isAlive).findFirst().ifPresent(found::set);
            return found.get() != null;
        });
        return found.get();
    }
}
