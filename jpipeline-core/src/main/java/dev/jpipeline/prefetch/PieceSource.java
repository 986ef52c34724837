package dev.jpipeline.prefetch;

import dev.jpipeline.MemcpyAsync;
import dev.jpipeline.Pipeline;
import dev.jpipeline.internal.copy.CopyWorkers;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Iterator;
import java.util.Objects;

/**
 * A source whose pieces can be copied asynchronously: each piece is one {@code memcpyAsync} (a positional file
 * read, or a copy from memory) into a stage buffer, issued into the issuing thread's pipeline: the iterating
 * thread's thread-scope one ({@link AheadFeed}), or a producer's of the parallel form.
 */
sealed interface PieceSource permits PieceSource.Positional, PieceSource.IterablePieces {

    /**
     * A source of known size whose bytes can be copied from any position, so that several producers can fill
     * shares of one stage.
     */
    sealed interface Positional extends PieceSource permits FilePieces, SegmentPieces {
        /** The source's size in bytes. */
        long size();

        /**
         * Issues the asynchronous copy of the source's bytes {@code [offset, offset + length)} into the start of
         * {@code dst}, as part of {@code pipe}'s acquired stage.
         */
        void copy(MemorySegment dst, long offset, long length, Pipeline pipe);
    }

    /** Whether another piece follows (may run user code: an {@code Iterable}'s iterator). */
    boolean more();

    /**
     * Issues the asynchronous copy of the next piece into the start of {@code stage}, as part of {@code pipe}'s
     * acquired stage, and returns the piece's length (at most {@code stage}'s size).
     */
    long issue(MemorySegment stage, Pipeline pipe);

    /** Closes what the source opened itself (a file given by path); never the user's own channel. */
    void close();

    /**
     * The bytes {@code [start, end)} of a file, read with positional reads on the copy engine. A file given by path
     * is opened here and may be read by the iterating thread itself (it helps a wait, or the machine is busy): an
     * interrupt of that thread inside a read closes the channel, as {@code FileChannel} does, so such a file is
     * reopened and the chunk {@link #reread read again}, the interrupt kept.
     */
    final class FilePieces implements Positional {
        /** The channel; replaced by {@link #reread} after an interrupt closed it (then joined by the iteration). */
        private FileChannel channel;
        /** The file's path where it was opened here, else null (a user's channel: never reopened). */
        private final Path path;
        private final long start;
        private final long end;
        private final boolean owned;
        /** The next piece's file position. */
        private long position;

        /** @param owned whether the channel was opened for this iteration (then {@link #close} closes it) */
        FilePieces(FileChannel channel, long start, long end, boolean owned) {
            this(channel, null, start, end, owned);
        }

        /** @param path the file opened here as {@code channel}, which it may reopen; null for a user's channel */
        FilePieces(FileChannel channel, Path path, long start, long end, boolean owned) {
            this.channel = channel;
            this.path = path;
            this.start = start;
            this.position = start;
            this.end = end;
            this.owned = owned;
        }

        /**
         * Reads the source's bytes {@code [offset, offset + length)} into {@code dst} again when {@code failure} is
         * the close of a file opened here (an interrupt of the iterating thread inside a read it performed),
         * reopening the file first if it is closed. The read runs on a thread of its own, which no interrupt of the
         * caller's reaches (the caller waits for it uninterruptibly, keeping its interrupt status), so that a
         * thread interrupted again and again still gets its chunk.
         *
         * @return whether the chunk is now in {@code dst}; false when the failure was of another kind, or the read
         *         again failed (the first failure stands)
         */
        boolean reread(Throwable failure, MemorySegment dst, long offset, long length) {
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
                    ByteBuffer into = dst.asSlice(0, length).asByteBuffer();
                    while (into.hasRemaining()) {
                        if (channel.read(into, start + offset + into.position()) < 0) {
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
        public long size() {
            return end - start;
        }

        @Override
        public void copy(MemorySegment dst, long offset, long length, Pipeline pipe) {
            MemcpyAsync.memcpyAsync(dst, channel, start + offset, length, pipe);
        }

        @Override
        public boolean more() {
            return position < end;
        }

        @Override
        public long issue(MemorySegment stage, Pipeline pipe) {
            long length = Math.min(stage.byteSize(), end - position);
            copy(stage, position - start, length, pipe);
            position += length;
            return length;
        }

        @Override
        public void close() {
            if (owned) {
                try {
                    channel.close();            // the reopened one, where an interrupt closed the first
                } catch (IOException e) {
                    throw new UncheckedIOException("closing the prefetched file failed", e);
                }
            }
        }
    }

    /** Bytes in memory, copied with {@code memcpyAsync}. */
    final class SegmentPieces implements Positional {
        private final MemorySegment data;
        private long position;

        SegmentPieces(MemorySegment data) {
            this.data = data;
        }

        @Override
        public long size() {
            return data.byteSize();
        }

        @Override
        public void copy(MemorySegment dst, long offset, long length, Pipeline pipe) {
            MemcpyAsync.memcpyAsync(dst, data.asSlice(offset, length), length, pipe);
        }

        @Override
        public boolean more() {
            return position < data.byteSize();
        }

        @Override
        public long issue(MemorySegment stage, Pipeline pipe) {
            long length = Math.min(stage.byteSize(), data.byteSize() - position);
            copy(stage, position, length, pipe);
            position += length;
            return length;
        }

        @Override
        public void close() {
        }
    }

    /**
     * The segments of an iterator, in order, each cut into pieces of at most a stage: a piece never spans two
     * segments. The iterator runs on the iterating thread, up to the stages ahead of the iteration.
     */
    final class IterablePieces implements PieceSource {
        private final Iterator<MemorySegment> segments;
        private MemorySegment current;
        private long position;
        private long index = -1;

        IterablePieces(Iterator<MemorySegment> segments) {
            this.segments = Objects.requireNonNull(segments, "the Iterable's iterator() returned null");
        }

        @Override
        public boolean more() {
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

        @Override
        public long issue(MemorySegment stage, Pipeline pipe) {
            long length = Math.min(stage.byteSize(), current.byteSize() - position);
            MemcpyAsync.memcpyAsync(stage, current.asSlice(position, length), length, pipe);
            position += length;
            return length;
        }

        @Override
        public void close() {
        }
    }
}
