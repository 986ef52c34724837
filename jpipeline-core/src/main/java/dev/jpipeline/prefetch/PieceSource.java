package dev.jpipeline.prefetch;

import dev.jpipeline.MemcpyAsync;
import dev.jpipeline.Pipeline;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
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

    /** The bytes {@code [start, end)} of a file, read with positional reads on the copy engine. */
    final class FilePieces implements Positional {
        private final FileChannel channel;
        private final long start;
        private final long end;
        private final boolean owned;
        /** The next piece's file position. */
        private long position;

        /** @param owned whether the channel was opened for this iteration (then {@link #close} closes it) */
        FilePieces(FileChannel channel, long start, long end, boolean owned) {
            this.channel = channel;
            this.start = start;
            this.position = start;
            this.end = end;
            this.owned = owned;
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
                    channel.close();
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
