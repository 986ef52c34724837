package dev.jpipeline.prefetch;

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

    /** What a fill read: {@code length} bytes, and whether the source ended. */
    record Filled(long length, boolean end) {
    }

    private StreamReads() {
    }

    /**
     * An input stream as a channel whose read is one {@code InputStream.read}: unlike
     * {@link java.nio.channels.Channels#newChannel(InputStream)}, which loops for as long as the stream returns no
     * bytes (forever, for a broken stream), a read that returns 0 comes back, so that {@link #fill} counts it.
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
                if (n > want) {
                    throw new IOException("the input stream returned " + n + " bytes for a read of at most " + want);
                }
                if (n > 0) {
                    dst.put(transfer, 0, n);
                }
                return n < 0 ? -1 : n;
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
     *
     * @throws IOException when a read fails, or the source keeps returning no bytes
     */
    static Filled fill(ReadableByteChannel source, MemorySegment stage, BooleanSupplier stop) throws IOException {
        ByteBuffer into = stage.asByteBuffer();
        for (int empty = 0; into.hasRemaining() && !stop.getAsBoolean(); ) {
            int n = source.read(into);
            if (n < 0) {
                return new Filled(into.position(), true);
            }
            empty = n == 0 ? empty + 1 : 0;
            if (empty == MAX_EMPTY_READS) {
                throw new IOException("the source returned no bytes " + MAX_EMPTY_READS
                    + " times in a row (a non-blocking channel cannot be prefetched)");
            }
        }
        return new Filled(into.position(), false);
    }
}
