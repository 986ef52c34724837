package dev.jpipeline.cli;

import dev.jpipeline.MemcpyAsync;
import dev.jpipeline.Pipeline;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.ReadableByteChannel;

/**
 * What {@code jpipeline stream} streams: a file of known size or a memory segment, filled into the stages by all
 * producers at once with asynchronous copies, or a stream of unknown size (a pipe, a FIFO, {@code /proc}, stdin),
 * read in order by a single producer up to its end.
 */
sealed interface StreamSource {

    /** The name shown in the report. */
    String name();

    /** The size in bytes, or -1 when it is known only at the end. */
    long size();

    /**
     * Producer {@code producer} of {@code producers} fills its share of {@code stage} with the stream's bytes from
     * {@code offset} on, at most {@code stage}'s size, and returns how many bytes the stage holds: the stage's size
     * but for the last one, which holds fewer (possibly none). The bytes land by the time the pipeline's consumers
     * are released by their wait.
     */
    long fill(MemorySegment stage, long offset, int producer, int producers, Pipeline pipe) throws IOException;

    /** A file of known size, read with positional reads (on the copy engine, or the producers: the copy policy). */
    record File(String name, FileChannel channel, long size) implements StreamSource {
        @Override
        public long fill(MemorySegment stage, long offset, int producer, int producers, Pipeline pipe) {
            long length = Math.min(stage.byteSize(), size - offset);
            long[] share = StreamJob.share(length, producers, producer, 1);
            MemcpyAsync.memcpyAsync(stage.asSlice(share[0], share[1]), channel, offset + share[0], share[1], pipe);
            return length;
        }
    }

    /** Bytes in memory, copied with {@code memcpyAsync}. */
    record Memory(String name, MemorySegment data) implements StreamSource {
        @Override
        public long size() {
            return data.byteSize();
        }

        @Override
        public long fill(MemorySegment stage, long offset, int producer, int producers, Pipeline pipe) {
            long length = Math.min(stage.byteSize(), data.byteSize() - offset);
            long[] share = StreamJob.share(length, producers, producer, 1);
            MemcpyAsync.memcpyAsync(stage.asSlice(share[0], share[1]), data.asSlice(offset + share[0], share[1]),
                share[1], pipe);
            return length;
        }
    }

    /** A stream read in order to its end by one producer, synchronously (it has no positions to split). */
    record Sequential(String name, ReadableByteChannel channel) implements StreamSource {
        @Override
        public long size() {
            return -1;
        }

        @Override
        public long fill(MemorySegment stage, long offset, int producer, int producers, Pipeline pipe)
            throws IOException {
            if (producers != 1) {
                throw new IllegalArgumentException("a stream of unknown size is read by one producer, not "
                    + producers);
            }
            ByteBuffer buffer = stage.asByteBuffer();
            while (buffer.hasRemaining() && channel.read(buffer) >= 0) {
                // read until the stage is full or the stream ends
            }
            return buffer.position();
        }
    }
}
