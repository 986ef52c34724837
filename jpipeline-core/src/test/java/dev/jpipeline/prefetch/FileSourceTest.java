package dev.jpipeline.prefetch;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Iterator;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Files as sources ({@link Prefetch#from(FileChannel)}, {@link Prefetch#from(Path)}): read from the position to
 * the size at {@code open()}, a file that shrinks failing at the chunk it no longer holds; a file sized only at its
 * end ({@code /proc}, a FIFO) read in order to its real end; a channel or path that cannot be read refused at
 * {@code open()}, in both forms.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)    // a hang fails
class FileSourceTest {

    @Test
    void aFileTruncatedUnderTheIterationFailsAtItsChunkAndOneGrownIsReadToItsSizeAtOpen() throws IOException {
        Path file = Files.createTempFile("prefetch-file", ".bin");
        try {
            byte[] data = new byte[4000];
            new Random(5).nextBytes(data);
            Files.write(file, data);
            try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
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
            Files.deleteIfExists(file);
        }
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
        TeamThreads.assertNoneLeft();
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
    void aWriteOnlyFileChannelIsRefusedAtOpenInBothForms(@TempDir Path dir) throws IOException {
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
    void aDirectoryIsRefusedAtOpenInBothForms(@TempDir Path dir) {
        UncheckedIOException e = assertThrows(UncheckedIOException.class, () -> Prefetch.from(dir).open());
        assertTrue(e.getMessage().contains("is a directory"), e.getMessage());
        e = assertThrows(UncheckedIOException.class,
            () -> Prefetch.from(dir).parallel(1, 1).reduce(0L, MemorySegment::byteSize, Long::sum));
        assertTrue(e.getMessage().contains("is a directory"), e.getMessage());
    }
}
