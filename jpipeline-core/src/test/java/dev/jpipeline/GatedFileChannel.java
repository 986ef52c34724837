package dev.jpipeline;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Test support: a read-only in-memory "file" whose positional reads can be held back (a gate per start
 * position) or made to fail (from a position on), so that tests control when and how copy chunks land, and
 * whose reads can be observed (which thread reads a position, and when that read has returned).
 */
public final class GatedFileChannel extends PositionalReadChannel {

    private final byte[] data;
    private final Map<Long, CountDownLatch> gates = new ConcurrentHashMap<>();
    private final Map<Long, CountDownLatch> served = new ConcurrentHashMap<>();
    private final Map<Long, Thread> readers = new ConcurrentHashMap<>();
    private volatile long failFrom = Long.MAX_VALUE;

    public GatedFileChannel(byte[] data) {
        this.data = data;
    }

    /** Reads starting at {@code position} wait until the returned latch is counted down. */
    CountDownLatch gate(long position) {
        return gates.computeIfAbsent(position, p -> new CountDownLatch(1));
    }

    /**
     * Counted down when a read starting at {@code position} returns (its bytes are in the destination) or throws.
     * Awaiting it also makes {@link #reader(long)} of that position visible.
     */
    CountDownLatch served(long position) {
        return served.computeIfAbsent(position, p -> new CountDownLatch(1));
    }

    /** The thread that read (or reads) at {@code position}, or null before a read there started. */
    Thread reader(long position) {
        return readers.get(position);
    }

    /** Reads at or after {@code position} throw an IOException. */
    public void failFrom(long position) {
        failFrom = position;
    }

    @Override
    public int read(ByteBuffer dst, long position) throws IOException {
        readers.put(position, Thread.currentThread());
        try {
            return gatedRead(dst, position);
        } finally {
            served(position).countDown();
        }
    }

    private int gatedRead(ByteBuffer dst, long position) throws IOException {
        CountDownLatch gate = gates.get(position);
        if (gate != null) {
            try {
                if (!gate.await(20, TimeUnit.SECONDS)) {
                    throw new IOException("test gate at " + position + " was never opened");
                }
            } catch (InterruptedException e) {
                throw new IOException(e);
            }
        }
        if (position >= failFrom) {
            throw new IOException("injected read error at position " + position);
        }
        if (position >= data.length) {
            return -1;
        }
        int n = (int) Math.min(dst.remaining(), data.length - position);
        dst.put(data, (int) position, n);
        return n;
    }

    @Override
    public long size() {
        return data.length;
    }
}
