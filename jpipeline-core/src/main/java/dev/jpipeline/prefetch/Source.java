package dev.jpipeline.prefetch;

import dev.jpipeline.MemcpyAsync;
import dev.jpipeline.Pipeline;
import dev.jpipeline.internal.copy.CopyWorkers;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.channels.NonReadableChannelException;
import java.nio.channels.ReadableByteChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Iterator;
import java.util.Objects;
import java.util.function.BooleanSupplier;

/**
 * An opened source of a prefetch: one kind per way its bytes reach a stage buffer, each opened by one
 * {@link Prefetch#open()} or {@code reduce} and closed by the {@link StageLedger} once nothing reads it any more.
 *
 * <pre>
 *   Positional  a file range (FileRange) or memory (Memory): a size known at open, and bytes that can be copied
 *               from any position, so that several producers can each copy a share of one chunk. Chunk k is the
 *               bytes [k * chunk, min((k + 1) * chunk, size)); the last chunk ends the source.
 *   Segments    the segments of a user's Iterable, each cut into pieces of at most a chunk (a piece never spans two
 *               segments), one piece a chunk; an empty chunk marked end follows the last piece.
 *   Stream      a blocking channel (an InputStream through one, or a file sized only at its end) read in order
 *               until a chunk is full or the channel ends (then that chunk, perhaps empty, is marked end).
 * </pre>
 *
 * Positional sources and Segments reach a stage by asynchronous copies ({@code memcpyAsync}: on the copy engine, or
 * on the issuing thread where the copy policy says so), so the iterating thread issues them ahead of itself; a
 * stream's reads may block for as long as the source likes ({@link #blocks()}), so a thread of their own performs
 * them. {@link #fill} is the one place that tells the kinds apart when reading: an exhaustive switch, so that a new
 * kind is a compile error until it says how its chunks are read.
 *
 * <p>Threads: Segments and a Stream are read in order, chunk after chunk, by one thread (the iterating thread, the
 * reader, or the one producer of a run), so their position is plain state. A positional source is only read from:
 * producers copy their shares of a chunk from it at once; its only write, FileRange's channel replaced by
 * {@link #readAgain}, happens for the thread-scope feed alone, whose one thread joins the thread that wrote it.
 */
sealed interface Source permits Source.Positional, Source.Segments, Source.Stream {

    /**
     * What one fill put into a stage: {@code length} bytes, whether the source ends with this chunk, and the
     * source's own failure (a read, a refused copy, a user's iterator that threw), which ends it too.
     */
    record Filled(long length, boolean end, Throwable failure) {
        static Filled failed(Throwable failure) {
            return new Filled(0, true, failure);
        }
    }

    /** The source's size in bytes when it is positional, else -1 (known only at its end). */
    long size();

    /**
     * Whether its reads may block for as long as the source likes (a stream): then a thread of its own reads it,
     * the iterating thread never does, and the copy engine is not used.
     */
    boolean blocks();

    /**
     * Closes what was opened for this prefetch (a file), never the user's own channel or stream; idempotent.
     *
     * @param failure the failure that ends the prefetch, to which a failure to close is added; null when it ends
     *                normally: a file of a positional source then throws its close's failure, a file read as a
     *                stream drops it (a file only read from loses nothing when its close fails)
     */
    void close(Throwable failure);

    /**
     * Reads chunk {@code k} again, synchronously, after its copy failed with {@code failure}, where the source
     * can: only a file opened here, closed by an interrupt of the thread that performed its read.
     *
     * @return whether the chunk's {@code length} bytes are now at the start of {@code stage}
     */
    default boolean readAgain(Throwable failure, long k, long chunk, long length, MemorySegment stage) {
        return false;
    }

    /**
     * Fills share {@code part} of {@code parts} of chunk {@code k} (chunks of {@code chunk} bytes) into the start of
     * {@code stage}, as part of {@code pipe}'s acquired stage: issues its asynchronous copies, or reads a stream
     * until the stage is full, the stream ends, or {@code stop} says so. Only a positional source has shares; any
     * other is filled whole, by part 0 of 1. A failure of the source is returned, never thrown, so that the
     * caller still commits the stage it acquired.
     *
     * @return the whole chunk's length, whether it is the source's last, and the source's failure
     */
    default Filled fill(long k, long chunk, MemorySegment stage, Pipeline pipe, int part, int parts,
                        BooleanSupplier stop) {
        try {
            return switch (this) {
                case Positional positional -> {
                    long position = k * chunk;
                    long length = Math.min(chunk, positional.size() - position);
                    long from = StageLedger.shareStart(length, parts, part, 1);
                    long to = StageLedger.shareStart(length, parts, part + 1, 1);
                    if (to > from) {            // a copy writes from the start of its destination
                        MemorySegment share = from == 0 ? stage : stage.asSlice(from, to - from);
                        positional.copy(share, position + from, to - from, pipe);
                    }
                    yield new Filled(length, position + length >= positional.size(), null);
                }
                case Segments segments -> segments.more()
                    ? new Filled(segments.issue(stage, pipe), false, null) : new Filled(0, true, null);
                case Stream stream -> StreamReads.fill(stream.channel(), stage, stop);
            };
        } catch (IOException | RuntimeException | Error e) {     // the source's own Error is its chunk's failure
            return Filled.failed(e);
        }
    }

    /**
     * A user's file channel from its position to its size: positional when its size says how many bytes it holds
     * ({@link #sizeHolds}), else read in order to its real end, as a stream (which moves its position).
     *
     * @param copying refuses a closed copy engine; run before a source that copies is made
     * @throws IllegalArgumentException when the channel has bytes to read and was not opened for reading
     */
    static Source ofChannel(FileChannel channel, Runnable copying) throws IOException {
        long from = channel.position();
        long size = channel.size();
        boolean holds;
        try {
            holds = size > from && sizeHolds(channel, size);            // a read: checks readability first
        } catch (NonReadableChannelException e) {
            throw new IllegalArgumentException("a prefetched FileChannel must be open for reading: " + channel
                + " was opened without READ", e);
        }
        if (!holds) {
            return new Stream(channel, null);
        }
        copying.run();
        return new FileRange(channel, null, from, size);
    }

    /**
     * A file opened here by path, closed with the source: positional when it is a regular file whose size holds
     * ({@link #sizeHolds}); else (a {@code /proc} file, a FIFO, a device, an empty file) read in order to its real
     * end, as a stream.
     *
     * @param copying refuses a closed copy engine; run before a source that copies is made
     * @throws IOException when the file cannot be opened or sized, or is a directory
     */
    static Source ofPath(Path path, Runnable copying) throws IOException {
        BasicFileAttributes file = Files.readAttributes(path, BasicFileAttributes.class);
        if (file.isDirectory()) {
            throw new IOException(path + " is a directory");
        }
        FileChannel channel = FileChannel.open(path, StandardOpenOption.READ);
        try {
            long size = file.isRegularFile() ? channel.size() : 0;        // 0: read in order, as a stream
            if (!sizeHolds(channel, size)) {
                return new Stream(channel, channel);
            }
            copying.run();
            CopyWorkers.waitersMayRead(channel);        // ours: the iterating thread may read it (issue 25)
            return new FileRange(channel, path, 0, size);
        } catch (IOException | RuntimeException | Error e) {
            closeOwned(channel, e);
            throw e;
        }
    }

    /**
     * Whether a file of {@code size} bytes by its own account holds them: its byte {@code size - 1} can be read
     * (one positional read of a byte, which leaves the channel's position as it was). A file that ends before it
     * (a {@code /sys} attribute, which states 4096 bytes and holds a few; a file truncated since it was sized) is
     * read in order to its real end instead, as a stream is, as {@code cat} reads it: positional reads of the size
     * it states would fail at its first chunk. A file that shrinks after this look fails at the chunk it no longer
     * holds.
     *
     * <p>Only the file's end says no: a read that fails or returns no byte leaves the size as stated, and the
     * chunk that reads that byte fails (or succeeds) as it would have.
     *
     * @return false when {@code size} is 0 (sized only at its end) or the byte is past the file's end
     * @throws NonReadableChannelException when the channel was not opened for reading
     */
    static boolean sizeHolds(FileChannel channel, long size) {
        if (size <= 0) {
            return false;
        }
        try {
            return channel.read(ByteBuffer.allocate(1), size - 1) >= 0;
        } catch (IOException e) {
            return true;                // not this look's to report: the read of that chunk fails, at its chunk
        }
    }

    /**
     * Closes a file opened for this prefetch (null: none), keeping {@code failure} first: a failure to close is
     * added to it; without one it is dropped.
     */
    private static void closeOwned(Closeable owned, Throwable failure) {
        if (owned != null) {
            try {
                owned.close();
            } catch (IOException | RuntimeException closing) {
                if (failure != null) {
                    failure.addSuppressed(closing);
                }
            }
        }
    }

    /**
     * A source of known size whose bytes can be copied from any position, so that several producers can fill
     * shares of one stage.
     */
    sealed interface Positional extends Source permits FileRange, Memory {
        /**
         * Issues the asynchronous copy of the source's bytes {@code [offset, offset + length)} into the start of
         * {@code dst}, as part of {@code pipe}'s acquired stage.
         */
        void copy(MemorySegment dst, long offset, long length, Pipeline pipe);

        @Override
        default boolean blocks() {
            return false;
        }
    }

    /**
     * The bytes {@code [start, end)} of a file, read with positional reads on the copy engine. A file given by path
     * is opened here and may be read by the iterating thread itself (it helps a wait, or the machine is busy): an
     * interrupt of that thread inside a read closes the channel, as {@code FileChannel} does, so such a file is
     * reopened and the chunk {@link #readAgain read again}, the interrupt kept.
     */
    final class FileRange implements Positional {
        /**
         * The channel; replaced by {@link #readAgain} after an interrupt closed it, on a thread of its own that the
         * iterating thread joins (the join orders the write before the iterating thread's next use).
         */
        private FileChannel channel;
        /** The file's path where it was opened here (then {@link #close} closes it), else null: a user's channel. */
        private final Path path;
        private final long start;
        private final long end;

        /** @param path the file opened here as {@code channel}, which it may reopen; null for a user's channel */
        FileRange(FileChannel channel, Path path, long start, long end) {
            this.channel = channel;
            this.path = path;
            this.start = start;
            this.end = end;
        }

        @Override
        public long size() {
            return end - start;
        }

        @Override
        public void copy(MemorySegment dst, long offset, long length, Pipeline pipe) {
            MemcpyAsync.memcpyAsync(dst, channel, start + offset, length, pipe);
        }

        /**
         * Reads chunk {@code k} into {@code stage} again when {@code failure} is the close of a file opened here (an
         * interrupt of the iterating thread inside a read it performed), reopening the file first if it is closed.
         * The read runs on a thread of its own, which no interrupt of the caller's reaches (the caller waits for it
         * uninterruptibly, keeping its interrupt status), so that a thread interrupted again and again still gets
         * its chunk. False when the failure was of another kind, or the read again failed (the first failure
         * stands).
         */
        @Override
        public boolean readAgain(Throwable failure, long k, long chunk, long length, MemorySegment stage) {
            if (path == null || !(failure instanceof ClosedChannelException)) {
                return false;
            }
            boolean[] read = new boolean[1];
            Thread reader = Thread.ofPlatform().daemon().name("jpipeline-reread").start(() -> {
                try {
                    if (!channel.isOpen()) {
                        channel = FileChannel.open(path, StandardOpenOption.READ);
                        CopyWorkers.waitersMayRead(channel);
                    }
                    ByteBuffer into = stage.asSlice(0, length).asByteBuffer();
                    while (into.hasRemaining()) {
                        if (channel.read(into, start + k * chunk + into.position()) < 0) {
                            return;             // the file shrank: the first failure stands
                        }
                    }
                    read[0] = true;
                } catch (IOException | RuntimeException e) {
                    // the first failure stands
                }
            });
            boolean interrupted = false;
            while (reader.isAlive()) {
                try {
                    reader.join();              // its writes (the channel, the bytes) happen-before the return
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            return read[0];
        }

        @Override
        public void close(Throwable failure) {
            if (path == null) {
                return;
            }
            try {
                channel.close();                // the reopened one, where an interrupt closed the first
            } catch (IOException e) {
                UncheckedIOException closing = new UncheckedIOException("closing the prefetched file failed", e);
                if (failure == null) {
                    throw closing;
                }
                failure.addSuppressed(closing);
            }
        }
    }

    /** Bytes in memory, copied with {@code memcpyAsync}; the segment stays the user's. */
    record Memory(MemorySegment data) implements Positional {
        @Override
        public long size() {
            return data.byteSize();
        }

        @Override
        public void copy(MemorySegment dst, long offset, long length, Pipeline pipe) {
            MemcpyAsync.memcpyAsync(dst, data.asSlice(offset, length), length, pipe);
        }

        @Override
        public void close(Throwable failure) {
        }
    }

    /**
     * The segments of an iterator, in order, each cut into pieces of at most a stage: a piece never spans two
     * segments. The iterator runs on the thread that fills, up to the stages ahead of the iteration.
     */
    final class Segments implements Source {
        private final Iterator<MemorySegment> segments;
        private MemorySegment current;
        private long position;
        private long index = -1;

        Segments(Iterator<MemorySegment> segments) {
            this.segments = Objects.requireNonNull(segments, "the Iterable's iterator() returned null");
        }

        @Override
        public long size() {
            return -1;
        }

        @Override
        public boolean blocks() {
            return false;
        }

        /** Whether another piece follows (runs the user's iterator). */
        boolean more() {
            while (current == null || position == current.byteSize()) {
                if (!segments.hasNext()) {
                    return false;
                }
                current = segments.next();
                index++;
                position = 0;
                if (current == null) {
                    throw new NullPointerException("the source's segment " + index + " is null");
                }
            }
            return true;
        }

        /** Issues the copy of the next piece into the start of {@code stage}; returns its length. */
        long issue(MemorySegment stage, Pipeline pipe) {
            long length = Math.min(stage.byteSize(), current.byteSize() - position);
            MemcpyAsync.memcpyAsync(stage, current.asSlice(position, length), length, pipe);
            position += length;
            return length;
        }

        @Override
        public void close(Throwable failure) {
        }
    }

    /**
     * A blocking channel read in order; {@code owned} is a file opened for this prefetch (a file sized only at its
     * end), closed with the source, else null: the user's channel or stream is never closed.
     */
    record Stream(ReadableByteChannel channel, Closeable owned) implements Source {
        @Override
        public long size() {
            return -1;
        }

        @Override
        public boolean blocks() {
            return true;
        }

        @Override
        public void close(Throwable failure) {
            closeOwned(owned, failure);
        }
    }
}
