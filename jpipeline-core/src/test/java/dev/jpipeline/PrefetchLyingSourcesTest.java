package dev.jpipeline;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.prefetch.ChunkFailedException;
import dev.jpipeline.prefetch.Chunks;
import dev.jpipeline.prefetch.Prefetch;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.ReadableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Sources that lie (issue 26): a channel whose count disagrees with what it put in the buffer, a file whose size
 * is not its content ({@code /sys}), an input stream's negative count other than -1, a mapped file truncated under
 * the parallel form, and a mapper's exception whose {@code toString()} throws. Each fails at its chunk with the
 * values involved, or is read as it really is; nothing hangs.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)     // a hang fails
class PrefetchLyingSourcesTest {

    /** The team threads of the parallel form have all ended. */
    private static void assertNoTeamThreadLeft() {
        Teams.awaitTrue("the team threads end", () -> Thread.getAllStackTraces().keySet().stream()
            .noneMatch(t -> t.getName().startsWith("jpipeline-team-") && t.isAlive()));
    }

    /** A channel of {@code length} zero bytes whose read says it read {@code said} bytes but puts {@code put}. */
    private static ReadableByteChannel lying(int length, int said, int put) {
        return new ReadableByteChannel() {
            private int left = length;

            @Override
            public int read(ByteBuffer dst) {
                if (left == 0) {
                    return -1;
                }
                int n = Math.min(put, Math.min(left, dst.remaining()));
                dst.put(new byte[n]);
                left -= n;
                return said;
            }

            @Override
            public boolean isOpen() {
                return true;
            }

            @Override
            public void close() {
            }
        };
    }

    /** Both forms fail at chunk {@code chunk} with a cause whose message holds every one of {@code words}. */
    private static void assertFailsInBothForms(Supplier<Prefetch> prefetch, long chunk, String... words) {
        try (Chunks chunks = prefetch.get().open()) {
            Iterator<MemorySegment> it = chunks.iterator();
            for (long k = 0; k < chunk; k++) {
                it.next();
            }
            ChunkFailedException e = assertThrows(ChunkFailedException.class, it::hasNext);
            assertEquals(chunk, e.chunk(), e.toString());
            for (String word : words) {
                assertTrue(e.getCause().getMessage().contains(word), word + " in " + e.getMessage());
            }
        }
        ChunkFailedException e = assertThrows(ChunkFailedException.class, () -> prefetch.get().parallel(1, 2)
            .reduce(0L, MemorySegment::byteSize, Long::sum));
        assertEquals(chunk, e.chunk(), e.toString());
        for (String word : words) {
            assertTrue(e.getCause().getMessage().contains(word), word + " in " + e.getMessage());
        }
        assertNoTeamThreadLeft();
    }

    @Test
    void aChannelThatSaysItReadBytesItDidNotPutFailsInsteadOfSpinning() {
        // nothing put, 7 said: the reader spun forever and the loop waited uninterruptibly before
        assertFailsInBothForms(() -> Prefetch.from(lying(1000, 7, 0)).chunk(100), 0,
            "returned 7", "advanced by 0", "at byte 0 of the chunk");
        // fewer put than said: judged by the buffer, the count is a lie however the reads add up
        assertFailsInBothForms(() -> Prefetch.from(lying(1000, 50, 10)).chunk(100), 0,
            "returned 50", "advanced by 10");
        // more put than said, after two honest chunks
        assertFailsInBothForms(() -> Prefetch.from(new ReadableByteChannel() {
            private long read;

            @Override
            public int read(ByteBuffer dst) {
                int n = Math.min(dst.remaining(), 30);
                dst.put(new byte[n]);
                read += n;
                return read > 200 ? n - 1 : n;
            }

            @Override
            public boolean isOpen() {
                return true;
            }

            @Override
            public void close() {
            }
        }).chunk(100), 2, "returned 29", "advanced by 30");
    }

    /** A bad input stream: {@code good} honest bytes, then every read returns {@code broken}. */
    private static InputStream negativeAfter(int good, int broken) {
        return new ByteArrayInputStream(new byte[good]) {
            @Override
            public synchronized int read(byte[] b, int off, int len) {
                return pos < good ? super.read(b, off, len) : broken;
            }
        };
    }

    @Test
    void anInputStreamsNegativeCountOtherThanMinusOneIsABrokenStreamNotItsEnd() {
        // -2 ended the stream silently before: 250 bytes delivered, no failure
        assertFailsInBothForms(() -> Prefetch.from(negativeAfter(250, -2)).chunk(100), 2, "returned -2");
        assertFailsInBothForms(() -> Prefetch.from(negativeAfter(0, Integer.MIN_VALUE)).chunk(100), 0,
            "returned " + Integer.MIN_VALUE);
        long read = Prefetch.from(negativeAfter(250, -1)).chunk(100).parallel(1, 1)
            .reduce(0L, MemorySegment::byteSize, Long::sum);
        assertEquals(250, read, "-1 is the end");
    }

    /** A "file" of {@code data} that reports {@code size} bytes, as a sysfs attribute reports 4096. */
    private static final class SizeLyingChannel extends PositionalReadChannel {
        private final byte[] data;
        private final long size;
        private long position;

        SizeLyingChannel(byte[] data, long size) {
            this.data = data;
            this.size = size;
        }

        @Override
        public int read(ByteBuffer dst, long at) {
            if (at >= data.length) {
                return -1;
            }
            int n = (int) Math.min(dst.remaining(), data.length - at);
            dst.put(data, (int) at, n);
            return n;
        }

        @Override
        public int read(ByteBuffer dst) {
            int n = read(dst, position);
            if (n > 0) {
                position += n;
            }
            return n;
        }

        @Override
        public long position() {
            return position;
        }

        @Override
        public long size() {
            return size;
        }
    }

    @Test
    void aFileThatHoldsFewerBytesThanItsSizeIsReadToItsRealEnd() {
        byte[] data = "always [madvise] never\n".getBytes(StandardCharsets.US_ASCII);
        try (Chunks chunks = Prefetch.from(new SizeLyingChannel(data, 4096)).chunk(1000).open()) {
            assertEquals(-1, chunks.size(), "the size is known only at the end");
            ByteArrayOutputStream read = new ByteArrayOutputStream();
            for (MemorySegment chunk : chunks) {
                read.writeBytes(chunk.toArray(JAVA_BYTE));
            }
            assertArrayEquals(data, read.toByteArray());
        }
        assertEquals(data.length, Prefetch.from(new SizeLyingChannel(data, 4096)).chunk(1000).parallel(1, 2)
            .reduce(0L, MemorySegment::byteSize, Long::sum));
        assertNoTeamThreadLeft();
        // a file whose stated size is true keeps its positional reads and its size
        try (Chunks chunks = Prefetch.from(new SizeLyingChannel(data, data.length)).chunk(1000).open()) {
            assertEquals(data.length, chunks.size());
            assertEquals(data.length, chunks.stream().mapToLong(MemorySegment::byteSize).sum());
        }
    }

    /** A readable /sys attribute that states 4096 bytes and holds fewer, or null. */
    static Path sysfsFile() throws IOException {
        for (String name : List.of("/sys/kernel/mm/transparent_hugepage/enabled", "/sys/devices/system/cpu/online",
                "/sys/class/net/lo/uevent", "/sys/kernel/mm/transparent_hugepage/defrag")) {
            Path file = Path.of(name);
            if (Files.isRegularFile(file) && Files.isReadable(file) && Files.size(file) > 0
                && Files.readAllBytes(file).length < Files.size(file)) {
                return file;
            }
        }
        return null;
    }

    @Test
    void aSysfsFileIsReadToItsRealEndInBothForms() throws IOException {
        Path sys = sysfsFile();
        Assumptions.assumeTrue(sys != null, "no readable /sys attribute whose size (4096) exceeds its content here");
        byte[] content = Files.readAllBytes(sys);           // as cat reads it
        ByteArrayOutputStream read = new ByteArrayOutputStream();
        try (Chunks chunks = Prefetch.from(sys).chunk(64).stages(2).open()) {
            for (MemorySegment chunk : chunks) {
                read.writeBytes(chunk.toArray(JAVA_BYTE));
            }
        }
        assertArrayEquals(content, read.toByteArray(), sys.toString());
        assertEquals(content.length, Prefetch.from(sys).chunk(64).parallel(2, 2)
            .reduce(0L, MemorySegment::byteSize, Long::sum));
        try (FileChannel channel = FileChannel.open(sys); Chunks chunks = Prefetch.from(channel).open()) {
            assertEquals(content.length, chunks.stream().mapToLong(MemorySegment::byteSize).sum());
        }
        assertNoTeamThreadLeft();
    }

    /** A mapper's failure whose {@code toString()} (and message) throws. */
    private static final class UnprintableException extends RuntimeException {
        @Override
        public String getMessage() {
            throw new IllegalStateException("getMessage of a broken exception");
        }

        @Override
        public String toString() {
            throw new IllegalStateException("toString of a broken exception");
        }
    }

    @Test
    void aMapperExceptionWhoseToStringThrowsKeepsItsChunkIndex() {
        UnprintableException planted = new UnprintableException();
        ChunkFailedException e;
        byte[] data = new byte[1000];
        data[300] = 3;
        e = assertThrows(ChunkFailedException.class, () ->
            Prefetch.from(MemorySegment.ofArray(data)).chunk(100).parallel(1, 2).reduce(0L, chunk -> {
                if (chunk.get(JAVA_BYTE, 0) == 3) {
                    throw planted;
                }
                return chunk.byteSize();
            }, Long::sum));
        assertEquals(3, e.chunk(), e.getMessage());
        assertEquals(300, e.position());
        assertSame(planted, e.getCause());
        assertTrue(e.getMessage().contains(UnprintableException.class.getName()), e.getMessage());
        assertTrue(e.getMessage().contains("toString() threw"), e.getMessage());
        assertNoTeamThreadLeft();
    }

    @Test
    void aMappedFileTruncatedUnderTheParallelFormReportsTheFaultAtItsChunk(@TempDir Path dir) throws IOException {
        Path file = Files.write(dir.resolve("mapped"), new byte[64 << 10]);
        try (Arena arena = Arena.ofShared();
             FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            MemorySegment mapped = channel.map(FileChannel.MapMode.READ_ONLY, 0, 64 << 10, arena);
            channel.truncate(0);            // someone else's truncation: every page of the mapping is gone
            // shares of 2 KiB: copied inline by the producers (below the copy engine's inline threshold)
            ChunkFailedException e = assertThrows(ChunkFailedException.class, () -> Prefetch.from(mapped).chunk(4096)
                .parallel(2, 2).reduce(0L, MemorySegment::byteSize, Long::sum));
            assertEquals(0, e.chunk(), e.toString());
            assertEquals(0, e.position());
            assertInstanceOf(InternalError.class, e.getCause(), "the fault, not a producer's quit: " + e);
            assertTrue(e.getMessage().startsWith("reading chunk 0 (from byte 0)"), e.getMessage());
            assertTrue(!e.getMessage().contains("quit after acquiring"), e.getMessage());
        }
        assertNoTeamThreadLeft();
    }

    @Test
    void aHonestChannelOfShortReadsIsReadWhole() {
        byte[] data = new byte[1234];
        Arrays.fill(data, (byte) 9);
        long read = Prefetch.from(new ReadableByteChannel() {
            private int at;

            @Override
            public int read(ByteBuffer dst) {
                if (at == data.length) {
                    return -1;
                }
                int n = Math.min(dst.remaining(), Math.min(7, data.length - at));
                dst.put(data, at, n);
                at += n;
                return n;
            }

            @Override
            public boolean isOpen() {
                return true;
            }

            @Override
            public void close() {
            }
        }).chunk(100).parallel(1, 2).reduce(0L, MemorySegment::byteSize, Long::sum);
        assertEquals(1234, read);
    }
}
