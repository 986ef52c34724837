package dev.jpipeline.prefetch;

import dev.jpipeline.prefetch.Source.Filled;
import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.util.function.BooleanSupplier;

/**
 * Reading a stream source (a blocking channel, or an input stream through one) into a stage buffer, in order, by
 * the one thread that reads it: the prefetch reader thread, or producer 0 of the parallel form.
 */
final class StreamReads {

    /** A source that returns no bytes this many times in a row fails (it is non-blocking, or broken). */
    private static final int MAX_EMPTY_READS = 1000;

    private StreamReads() {
    }

    /**
     * An input stream as a channel whose read is one {@code InputStream.read}: unlike
     * {@link java.nio.channels.Channels#newChannel(InputStream)}, which loops for as long as the stream returns no
     * bytes (forever, for a broken stream), a read that returns 0 comes back, so that {@link #fill} counts it. A
     * count the stream's contract rules out (more than asked, or negative other than -1, its end) is a broken
     * stream: the read fails, naming the count, rather than ending the stream or handing out bytes it never read.
     */
    static ReadableByteChannel channel(InputStream in) {
        return new ReadableByteChannel() {
            private byte[] transfer = new byte[0];
            private boolean open = true;

            @Override
            public int read(ByteBuffer dst) throws IOException {
                int want = Math.min(dst.remaining(), 64 << 10);
                if (transfer.length < want) {
                    transfer = new byte[want];
                }
                int n = in.read(transfer, 0, want);
                if (n > want || n < -1) {
                    throw new IOException("the input stream returned " + n + " from a read of at most " + want
                        + " bytes: a count is 0 to " + want + ", or -1 at the end (a broken stream)");
                }
                if (n > 0) {
                    dst.put(transfer, 0, n);
                }
                return n;
            }

            @Override
            public boolean isOpen() {
                return open;
            }

            @Override
            public void close() {
                open = false;
            }
        };
    }

    /**
     * Reads into {@code stage} until it is full, the source ends, or {@code stop} says so (checked between reads).
     * Progress is judged by the buffer, not by the count a read returns: a read whose count disagrees with how far
     * it moved the buffer's position (a positive count for bytes it never put, or fewer or more bytes than it said),
     * or whose count is negative other than -1, is a broken channel and fails, naming the count, the progress and
     * where in the stage it read; trusting the count would spin forever on a channel that says it read bytes
     * while the buffer stays where it was. A read that moved nothing counts towards {@link #MAX_EMPTY_READS}.
     *
     * @throws IOException when a read fails, a read's count disagrees with its progress, or the source keeps
     *                     returning no bytes
     */
    static Filled fill(ReadableByteChannel source, MemorySegment stage, BooleanSupplier stop) throws IOException {
        ByteBuffer into = stage.asByteBuffer();
        for (int empty = 0; into.hasRemaining() && !stop.getAsBoolean(); ) {
            int before = into.position();
            int n = source.read(into);
            int progress = into.position() - before;
            if (n == -1 && progress == 0) {
                return new Filled(into.position(), true, null);
            }
            if (n != progress) {
                throw new IOException("the channel's read returned " + n + " but the buffer's position advanced by "
                    + progress + " bytes (at byte " + before + " of the chunk, " + (into.limit() - before)
                    + " bytes asked): a read returns the bytes it put, or -1 at the end (a broken channel)");
            }
            empty = n == 0 ? empty + 1 : 0;
            if (empty == MAX_EMPTY_READS) {
                throw new IOException("the source returned no bytes " + MAX_EMPTY_READS
                    + " times in a row (a non-blocking channel cannot be prefetched)");
            }
        }
        return new Filled(into.position(), false, null);
    }
}
