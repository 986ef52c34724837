package dev.jpipeline.copy;

import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.util.ArrayDeque;
import java.util.Objects;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Worker threads that perform asynchronous copies: jpipeline's stand-in for the GPU's copy hardware behind
 * {@code cuda::memcpy_async} (which, on the host, libcu++ simply performs synchronously).
 *
 * <pre>
 * Algorithm
 *
 *   submit(copy) --lock--&gt; queue: [sub A][sub A][sub B] ...   (a copy of k chunks is queued min(k, workers)
 *                                                               times: one entry per worker that may share it)
 *   worker: take an entry, claim chunks of it until none is left (getAndAdd on the submission), copy each;
 *           the worker that finishes the last chunk calls the copy's completion, then recycles the submission.
 * </pre>
 *
 * A copy of at most {@link #inlineThreshold()} bytes is not worth a hand-off: callers such as
 * {@code MemcpyAsync} perform it inline. Larger copies are split into chunks of at least {@link #minChunk()}
 * bytes, over at most {@link #workers()} workers. An idle worker spins briefly for new work, then parks on a
 * condition. In steady state nothing is allocated: the queue is a circular array and submissions are pooled.
 *
 * <p>Memory consistency effects: actions of the submitting thread before {@code copy} / {@code read}
 * happen-before the copy's reads and writes, which happen-before the completion.
 */
public final class CopyEngine implements AutoCloseable {

    /** Default: copies of up to 64 KiB run inline (a hand-off to a worker costs about as much as copying them). */
    public static final long DEFAULT_INLINE_THRESHOLD = 64 * 1024;
    /** Default: chunks of at least 256 KiB, so that splitting a copy never costs more than it saves. */
    public static final long DEFAULT_MIN_CHUNK = 256 * 1024;
    /** Idle workers spin this many times before parking. */
    private static final int IDLE_SPINS = 1 << 10;

    private static final class Shared {
        static final CopyEngine ENGINE = fromSystemProperties();
    }

    private final int workers;
    private final long inlineThreshold;
    private final long minChunk;
    private final Thread[] threads;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition workAvailable = lock.newCondition();
    /** Queue entries; guarded by lock. */
    private final ArrayDeque<CopySubmission> queue = new ArrayDeque<>();
    /** Recycled submissions; guarded by lock. */
    private final ArrayDeque<CopySubmission> pool = new ArrayDeque<>();
    /** Entries in the queue: written under the lock, read without it by spinning workers. */
    private volatile int queued;
    /** Copies submitted and not yet completed: read by hang detectors (a copy in flight is progress). */
    private final java.util.concurrent.atomic.AtomicInteger inFlight = new java.util.concurrent.atomic.AtomicInteger();
    /** Workers parked on workAvailable; guarded by lock. */
    private int parked;
    private volatile boolean closed;

    private CopyEngine(int workers, long inlineThreshold, long minChunk, String name) {
        this.workers = workers;
        this.inlineThreshold = inlineThreshold;
        this.minChunk = minChunk;
        this.threads = new Thread[workers];
        for (int i = 0; i < workers; i++) {
            threads[i] = Thread.ofPlatform().daemon().name(name + "-" + i).start(this::workLoop);
        }
    }

    /**
     * The engine that pipelines use unless told otherwise. Its settings come from the system properties
     * {@code jpipeline.copy.workers} (default: a quarter of the available processors, 1 to 8),
     * {@code jpipeline.copy.inlineThreshold} and {@code jpipeline.copy.minChunk} (bytes). Its workers are
     * daemon threads; it is never closed.
     */
    public static CopyEngine shared() {
        return Shared.ENGINE;
    }

    private static CopyEngine fromSystemProperties() {
        int defaultWorkers = Math.clamp(Runtime.getRuntime().availableProcessors() / 4, 1, 8);
        return builder()
            .workers(Integer.getInteger("jpipeline.copy.workers", defaultWorkers))
            .inlineThreshold(Long.getLong("jpipeline.copy.inlineThreshold", DEFAULT_INLINE_THRESHOLD))
            .minChunk(Long.getLong("jpipeline.copy.minChunk", DEFAULT_MIN_CHUNK))
            .name("jpipeline-copy")
            .build();
    }

    /** A builder for an engine of one's own (close it when done). */
    public static Builder builder() {
        return new Builder();
    }

    /** Settings of a {@link CopyEngine}. */
    public static final class Builder {
        private int workers = 1;
        private long inlineThreshold = DEFAULT_INLINE_THRESHOLD;
        private long minChunk = DEFAULT_MIN_CHUNK;
        private String name = "jpipeline-copy-engine";

        private Builder() {
        }

        /** Worker threads, 1 to 256 (default 1). */
        public Builder workers(int workers) {
            if (workers < 1 || workers > 256) {
                throw new IllegalArgumentException("copy engine workers must be in 1..256, got " + workers);
            }
            this.workers = workers;
            return this;
        }

        /** Copies of at most this many bytes run inline in the calling thread (0: none; default 64 KiB). */
        public Builder inlineThreshold(long bytes) {
            if (bytes < 0) {
                throw new IllegalArgumentException("copy engine inline threshold must not be negative, got " + bytes);
            }
            this.inlineThreshold = bytes;
            return this;
        }

        /** The smallest chunk a copy is split into, at least 4 KiB (default 256 KiB). */
        public Builder minChunk(long bytes) {
            if (bytes < 4096) {
                throw new IllegalArgumentException("copy engine chunks must be at least 4096 bytes, got " + bytes);
            }
            this.minChunk = bytes;
            return this;
        }

        /** The prefix of the worker threads' names. */
        public Builder name(String name) {
            this.name = Objects.requireNonNull(name, "name");
            return this;
        }

        /** Starts the engine's workers. */
        public CopyEngine build() {
            return new CopyEngine(workers, inlineThreshold, minChunk, name);
        }
    }

    /** The number of worker threads. */
    public int workers() {
        return workers;
    }

    /** Copies of at most this many bytes are better performed inline by the caller. */
    public long inlineThreshold() {
        return inlineThreshold;
    }

    /** The smallest chunk a copy is split into. */
    public long minChunk() {
        return minChunk;
    }

    /** The number of copies submitted whose completion has not been called yet. */
    public int copiesInFlight() {
        return inFlight.get();
    }

    /** Whether a copy of {@code bytes} bytes is better performed inline than handed to a worker. */
    public boolean runsInline(long bytes) {
        return bytes <= inlineThreshold;
    }

    /**
     * Copies {@code src} into {@code dst} (both of the same size) asynchronously, then calls
     * {@code completion}. The caller must not touch either range before the completion.
     *
     * @throws IllegalArgumentException when the sizes differ
     * @throws IllegalStateException    when the engine is closed
     */
    public void copy(MemorySegment dst, MemorySegment src, CopyCompletion completion) {
        if (dst.byteSize() != src.byteSize()) {
            throw new IllegalArgumentException("copy engine: destination has " + dst.byteSize()
                + " bytes but source has " + src.byteSize());
        }
        submit(dst, src, null, 0, completion);
    }

    /**
     * Fills {@code dst} from {@code channel}, starting at file position {@code position}, with positional reads
     * (the channel's own position is not used or changed), then calls {@code completion}; a read error, or the
     * file ending first ({@link java.io.EOFException}), is passed to the completion.
     *
     * @throws IllegalArgumentException when {@code position} is negative
     * @throws IllegalStateException    when the engine is closed
     */
    public void read(MemorySegment dst, FileChannel channel, long position, CopyCompletion completion) {
        Objects.requireNonNull(channel, "channel");
        if (position < 0) {
            throw new IllegalArgumentException("file position must not be negative, got " + position);
        }
        submit(dst, null, channel, position, completion);
    }

    private void submit(MemorySegment dst, MemorySegment src, FileChannel channel, long position,
                        CopyCompletion completion) {
        Objects.requireNonNull(dst, "dst");
        Objects.requireNonNull(completion, "completion");
        long bytes = dst.byteSize();
        int ways = (int) Math.clamp(bytes / minChunk, 1, workers);
        long chunk = (bytes + ways - 1) / ways;
        chunk = Math.max(64, (chunk + 63) & ~63L);          // cache-line aligned chunk boundaries
        lock.lock();
        try {
            if (closed) {
                throw new IllegalStateException("copy engine is closed");
            }
            CopySubmission s = pool.isEmpty() ? new CopySubmission() : pool.pop();
            inFlight.incrementAndGet();
            if (channel == null) {
                s.memory(dst, src, chunk, completion);
            } else {
                s.file(dst, channel, position, chunk, completion);
            }
            int entries = Math.min(s.chunks(), workers);
            s.referencedBy(entries);
            for (int i = 0; i < entries; i++) {
                queue.addLast(s);
            }
            queued += entries;
            if (parked > 0) {
                if (entries == 1) {
                    workAvailable.signal();
                } else {
                    workAvailable.signalAll();
                }
            }
        } finally {
            lock.unlock();
        }
    }

    private void workLoop() {
        for (CopySubmission s; (s = take()) != null; ) {
            CopyCompletion done = s.work();
            if (done != null) {
                try {
                    done.copyDone(s.failure());
                } catch (Throwable t) {
                    // a completion must not kill the worker: report it as an uncaught exception would be
                    Thread.currentThread().getUncaughtExceptionHandler().uncaughtException(Thread.currentThread(), t);
                }
                inFlight.decrementAndGet();
            }
            if (s.release()) {
                recycle(s);
            }
        }
    }

    /** The next queue entry, or null once the engine is closed and the queue drained. */
    private CopySubmission take() {
        for (int i = 0; i < IDLE_SPINS && queued == 0 && !closed; i++) {
            Thread.onSpinWait();
        }
        lock.lock();
        try {
            while (queue.isEmpty()) {
                if (closed) {
                    return null;
                }
                parked++;
                try {
                    workAvailable.awaitUninterruptibly();
                } finally {
                    parked--;
                }
            }
            queued--;
            return queue.pollFirst();
        } finally {
            lock.unlock();
        }
    }

    private void recycle(CopySubmission s) {
        s.clear();
        lock.lock();
        try {
            pool.push(s);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Stops the workers once every submitted copy has been performed and its completion called. Submitting
     * afterwards throws {@link IllegalStateException}. The {@link #shared()} engine cannot be closed.
     */
    @Override
    public void close() {
        if (this == Shared.ENGINE) {
            throw new IllegalStateException("the shared copy engine lives as long as the JVM and cannot be closed");
        }
        lock.lock();
        try {
            closed = true;
            workAvailable.signalAll();
        } finally {
            lock.unlock();
        }
        boolean interrupted = false;
        for (Thread t : threads) {
            while (t.isAlive()) {
                try {
                    t.join();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "CopyEngine[" + workers + " workers, inline up to " + inlineThreshold + " B, chunks >= " + minChunk
            + " B" + (closed ? ", closed" : "") + "]";
    }
}
