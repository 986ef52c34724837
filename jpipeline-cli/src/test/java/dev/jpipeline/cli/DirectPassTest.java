package dev.jpipeline.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Random;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The direct pass that verifies {@code stream --processes} ({@link StreamDigest#direct}), read ahead through the
 * library's {@code Prefetch} front: the JDK's checksums over a file and over memory, for every op, across several
 * of the front's chunks; a read that fails, or a file that changed size, is one line naming the file.
 */
@Timeout(120)
class DirectPassTest {

    /** Over four of the pass's 1 MiB chunks, the last one partial, and a partial last word. */
    private static final int SIZE = (3 << 20) + 4321;

    private static byte[] bytes(int size) {
        byte[] data = new byte[size];
        new Random(14).nextBytes(data);
        return data;
    }

    /** What the JDK (and, for sum, the one-pass word sum) gives over {@code data}, as the report shows it. */
    private static String expected(StreamOp op, byte[] data) throws Exception {
        return switch (op) {
            case SUM -> String.format("0x%016x", StreamJob.sumWords(MemorySegment.ofArray(data)));
            case CRC32C -> {
                CRC32C crc = new CRC32C();
                crc.update(data);
                yield String.format("0x%08x", crc.getValue());
            }
            case SHA256 -> HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
        };
    }

    @Test
    void aFileAndMemoryGiveTheJdksChecksumsForEveryOp(@TempDir Path dir) throws Exception {
        for (int size : new int[] {SIZE, 10, 1 << 20}) {
            byte[] data = bytes(size);
            Path file = dir.resolve("data-" + size + ".bin");
            Files.write(file, data);
            try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ);
                 Arena arena = Arena.ofShared()) {
                MemorySegment memory = arena.allocate(size, 64).copyFrom(MemorySegment.ofArray(data));
                for (StreamOp op : StreamOp.values()) {
                    String want = expected(op, data);
                    assertEquals(want, StreamDigest.direct(new StreamSource.File(file.toString(), channel, size), op),
                        op + " over a file of " + size + " bytes");
                    assertEquals(want, StreamDigest.direct(new StreamSource.Memory("memory", memory), op),
                        op + " over " + size + " bytes of memory");
                    assertEquals(0, channel.position(), "the channel's position is left as it was");
                }
            }
        }
    }

    @Test
    void aReadThatFailsIsOneLineNamingTheFileAndTheByte(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("data.bin");
        Files.write(file, bytes(SIZE));
        try (FileChannel channel = new FailingChannel(FileChannel.open(file, StandardOpenOption.READ), 1 << 20)) {
            for (StreamOp op : StreamOp.values()) {
                IOException e = assertThrows(IOException.class,
                    () -> StreamDigest.direct(new StreamSource.File(file.toString(), channel, SIZE), op), op.toString());
                assertEquals("a direct pass over " + file + " failed at byte " + (1 << 20) + ": java.io.IOException: "
                    + "the disk is on fire at byte " + (1 << 20), e.getMessage());
            }
        }
    }

    @Test
    void aChannelThatCannotBeReadIsOneLineNamingTheFile(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("data.bin");
        Files.write(file, bytes(SIZE));
        FileChannel channel = FileChannel.open(file, StandardOpenOption.READ);
        channel.close();
        IOException e = assertThrows(IOException.class,
            () -> StreamDigest.direct(new StreamSource.File(file.toString(), channel, SIZE), StreamOp.CRC32C));
        assertEquals("a direct pass over " + file + " failed: java.nio.channels.ClosedChannelException",
            e.getMessage());
    }

    @Test
    void aFileThatChangedSizeSinceTheRunIsNamed(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("data.bin");
        Files.write(file, bytes(SIZE));
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            for (long runSize : new long[] {SIZE + 1L, SIZE - 1L}) {
                IOException e = assertThrows(IOException.class, () -> StreamDigest.direct(
                    new StreamSource.File(file.toString(), channel, runSize), StreamOp.CRC32C));
                assertEquals(file + " changed size during the run, from " + runSize + " to " + SIZE + " bytes: a "
                    + "direct pass cannot read what the run read", e.getMessage());
            }
        }
    }

    @Test
    void aStreamOfUnknownSizeHasNoDirectPass() {
        var stdin = new StreamSource.Sequential("stdin", Channels.newChannel(new java.io.ByteArrayInputStream(
            new byte[8])));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> StreamDigest.direct(stdin, StreamOp.SUM));
        assertTrue(e.getMessage().endsWith("not stdin"), e.getMessage());
    }

    /** A file channel whose positional reads of bytes from {@code failAt} on fail; the rest it delegates. */
    private static final class FailingChannel extends FileChannel {
        private final FileChannel file;
        private final long failAt;

        FailingChannel(FileChannel file, long failAt) {
            this.file = file;
            this.failAt = failAt;
        }

        @Override
        public int read(ByteBuffer dst, long position) throws IOException {
            if (position + dst.remaining() > failAt) {
                throw new IOException("the disk is on fire at byte " + Math.max(position, failAt));
            }
            return file.read(dst, position);
        }

        @Override
        public int read(ByteBuffer dst) throws IOException {
            return file.read(dst);
        }

        @Override
        public long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
            return file.read(dsts, offset, length);
        }

        @Override
        public int write(ByteBuffer src) throws IOException {
            return file.write(src);
        }

        @Override
        public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
            return file.write(srcs, offset, length);
        }

        @Override
        public int write(ByteBuffer src, long position) throws IOException {
            return file.write(src, position);
        }

        @Override
        public long position() throws IOException {
            return file.position();
        }

        @Override
        public FileChannel position(long newPosition) throws IOException {
            file.position(newPosition);
            return this;
        }

        @Override
        public long size() throws IOException {
            return file.size();
        }

        @Override
        public FileChannel truncate(long size) throws IOException {
            file.truncate(size);
            return this;
        }

        @Override
        public void force(boolean metaData) throws IOException {
            file.force(metaData);
        }

        @Override
        public long transferTo(long position, long count, WritableByteChannel target) throws IOException {
            return file.transferTo(position, count, target);
        }

        @Override
        public long transferFrom(ReadableByteChannel src, long position, long count) throws IOException {
            return file.transferFrom(src, position, count);
        }

        @Override
        public MappedByteBuffer map(MapMode mode, long position, long size) throws IOException {
            return file.map(mode, position, size);
        }

        @Override
        public FileLock lock(long position, long size, boolean shared) throws IOException {
            return file.lock(position, size, shared);
        }

        @Override
        public FileLock tryLock(long position, long size, boolean shared) throws IOException {
            return file.tryLock(position, size, shared);
        }

        @Override
        protected void implCloseChannel() throws IOException {
            file.close();
        }
    }
}
