package dev.jpipeline.internal.copy;

import dev.jpipeline.internal.PhaseBarrier;
import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;

/**
 * One asynchronous copy, split into {@code chunks} equal chunks that the engine's workers claim one at a time
 * (so several workers can share one copy without a task object per chunk). Submissions are recycled by the
 * engine once nobody can touch them any more.
 *
 * <pre>
 * claimed   : next chunk to hand out (getAndAdd); a worker that gets an index >= chunks has nothing to do
 * remaining : chunks not yet finished; the worker that brings it to 0 calls the completion
 * failure   : the first chunk failure, published before the remaining decrement that ends the copy
 * refs      : queue entries plus workers and helpers still inside work(); set to the number of entries on
 *             submission, dropped by each worker after work() returns. Only the release that brings it to 0
 *             recycles the submission, so a worker can never mix the counters of one copy with the chunks of the
 *             next. A waiting thread joins a copy in progress with join(): a CAS from refs > 0 to refs + 1, so it
 *             never takes a submission that is pooled or being prepared (refs == 0 until it is published).
 * target    : the barrier the copy is tied to (its landing arrives there), or null: what a waiting thread looks
 *             for when it helps (CopyWorkers.helpWith)
 * </pre>
 *
 * Fault isolation: a chunk's failure (any Throwable: an IOException, a closed Arena, a WrongThreadException) is
 * recorded for this copy only. The worker clears its interrupt status before each chunk and after a failure, so
 * that a positional read never runs interrupted (an interrupted FileChannel read closes the user's channel); a
 * thread that copies for itself (a helping waiter, performHere's caller) gets the interrupts so cleared back when
 * its work() returns. A read that returns no bytes {@link #MAX_EMPTY_READS} times in a row fails the copy instead of spinning forever.
 */
public final class CopySubmission {

    private MemorySegment dst;
    private MemorySegment src;
    private FileChannel channel;
    private long position;
    private long chunkBytes;
    private int chunks;
    /** Reads in a row that may return no bytes before a file copy fails (a source that makes no progress). */
    static final int MAX_EMPTY_READS = 1024;
    /** The largest read into one ByteBuffer (which holds at most 2 GiB). */
    private static final long MAX_READ_WINDOW = 1L << 30;
    /** The window of a read into a heap segment over a non-byte array (through a byte[] bounce buffer). */
    private static final long BOUNCE_WINDOW = 1L << 20;

    private CopyLanding completion;
    /** The barrier the copy is tied to, or null; written before the submission is published (queue lock). */
    private PhaseBarrier target;

    private volatile int claimed;
    private volatile int remaining;
    private volatile int refs;
    private volatile Throwable failure;

    /** Made by the engine's pool, and by {@link #perform}. */
    CopySubmission() {
    }

    /**
     * Performs one copy at once, on the calling thread, through the workers' copy path: checked execution's late
     * landings (a checked kernel's, a checked pipeline's), where a copy lands at a point the checker chooses, and
     * the engine's reads on the issuing thread.
     * The caller's interrupt status is kept, but not seen by the copy (an interrupted positional read would close
     * the user's channel); an interrupt that arrives during the copy is kept too (a read it reached has failed,
     * its channel closed), so that a caller that stops on interrupt still sees it.
     *
     * @param channel  the file to read, or null to copy {@code src}
     * @param position where in the file the read starts (ignored for a memory copy)
     * @return the copy's failure, or null when it landed
     */
    public static Throwable perform(MemorySegment dst, MemorySegment src, FileChannel channel, long position) {
        return new CopySubmission().performHere(dst, src, channel, position);
    }

    /**
     * {@link #perform(MemorySegment, MemorySegment, FileChannel, long)} with this submission, which must be idle (a
     * pooled one: the engine's reads on the issuing thread); it holds the copy's references until {@link #clear}.
     */
    Throwable performHere(MemorySegment dst, MemorySegment src, FileChannel channel, long position) {
        long chunk = Math.max(1, dst.byteSize());
        if (channel == null) {
            memory(dst, src, chunk, null);
        } else {
            file(dst, channel, position, chunk, null);
        }
        work(true);         // one chunk: it clears the caller's interrupt before reading and sets it again after
        return failure();
    }

    void memory(MemorySegment dst, MemorySegment src, long chunkBytes, CopyLanding completion) {
        this.channel = null;
        this.src = src;
        prepare(dst, chunkBytes, completion);
    }

    /** Prepares a positional file read. */
    void file(MemorySegment dst, FileChannel channel, long position, long chunkBytes, CopyLanding completion) {
        this.src = null;
        this.channel = channel;
        this.position = position;
        prepare(dst, chunkBytes, completion);
    }

    private void prepare(MemorySegment dst, long chunkBytes, CopyLanding completion) {
        this.dst = dst;
        this.chunkBytes = chunkBytes;
        this.chunks = (int) Math.max(1, (dst.byteSize() + chunkBytes - 1) / chunkBytes);
        this.completion = completion;
        this.failure = null;
        CLAIMED.setRelease(this, 0);
        REMAINING.setRelease(this, chunks);
    }

    int chunks() {
        return chunks;
    }

    /** Ties the copy to {@code barrier} for helpers (before it is published), or to none. */
    void target(PhaseBarrier barrier) {
        this.target = barrier;
    }

    /** The barrier a helper of this copy waits for; racy outside a reference (a hint, checked again after join). */
    PhaseBarrier target() {
        return target;
    }

    /** Whether chunks are left to claim (racy: a hint for a helper deciding whether to join). */
    boolean unclaimed() {
        return claimed < chunks;
    }

    /**
     * Takes a reference to a copy in progress for a helper, unless it is pooled or being prepared.
     *
     * @return whether the reference was taken: the caller then calls {@link #work()} and {@link #release()}
     */
    boolean join() {
        for (int r; (r = refs) > 0; ) {
            if (REFS.compareAndSet(this, r, r + 1)) {
                return true;
            }
        }
        return false;
    }

    /** Records how many queue entries refer to this submission (before it is published by the queue lock). */
    void referencedBy(int entries) {
        REFS.setRelease(this, entries);
    }

    /** Drops one reference. @return whether it was the last, so that the caller may recycle the submission */
    boolean release() {
        return (int) REFS.getAndAdd(this, -1) == 1;
    }

    /**
     * Claims and performs chunks until none is left, on a worker: the interrupts it clears stay cleared (a worker
     * never stays interrupted).
     *
     * @return the completion to call (with {@link #failure()}) if this worker finished the copy, else null
     */
    CopyLanding work() {
        return work(false);
    }

    /**
     * Claims and performs chunks until none is left. The thread's interrupt status is cleared before each chunk
     * (a positional read must never run interrupted: that would close its channel) and after a failed one.
     *
     * @param keepInterrupt whether an interrupt that this call cleared is set again when it returns: a thread that
     *                      copies for itself (a waiter that helps, {@link #performHere}'s caller) keeps its own
     *                      interrupts, even one that reached it between two chunks or failed a read
     * @return the completion to call (with {@link #failure()}) if this thread finished the copy, else null
     */
    CopyLanding work(boolean keepInterrupt) {
        CopyLanding done = null;
        boolean cleared = false;
        for (int chunk; (chunk = (int) CLAIMED.getAndAdd(this, 1)) < chunks; ) {
            try {
                if (failure == null) {
                    cleared |= Thread.interrupted();    // never read a channel interrupted: that would close it
                    copyChunk(chunk);
                }
            } catch (Throwable t) {
                cleared |= Thread.interrupted();        // a failed access may leave the thread interrupted
                FAILURE.compareAndSet(this, null, t);
            }
            if ((int) REMAINING.getAndAdd(this, -1) == 1) {
                done = completion;
            }
        }
        if (keepInterrupt && cleared) {
            Thread.currentThread().interrupt();
        }
        return done;
    }

    CopyLanding completion() {
        return completion;
    }

    Throwable failure() {
        return failure;
    }

    private void copyChunk(int chunk) throws IOException {
        long offset = chunk * chunkBytes;
        long length = Math.min(chunkBytes, dst.byteSize() - offset);
        if (channel == null) {
            MemorySegment.copy(src, offset, dst, offset, length);
            return;
        }
        // A segment over a heap array other than byte[] has no ByteBuffer view: read through a bounce buffer.
        boolean bounce = dst.heapBase().map(base -> !(base instanceof byte[])).orElse(false);
        long maxWindow = bounce ? BOUNCE_WINDOW : MAX_READ_WINDOW;
        for (long done = 0; done < length; ) {
            // a ByteBuffer holds at most 2 GiB: read a larger chunk in windows of 1 GiB
            long window = Math.min(length - done, maxWindow);
            MemorySegment part = dst.asSlice(offset + done, window);
            if (bounce) {
                byte[] buffer = new byte[(int) window];
                readWindow(ByteBuffer.wrap(buffer), offset + done);
                MemorySegment.copy(MemorySegment.ofArray(buffer), 0, part, 0, window);
            } else {
                readWindow(part.asByteBuffer(), offset + done);
            }
            done += window;
        }
    }

    /**
     * Fills {@code target} from the file, at file position {@code position + offset}. Progress is what the buffer's
     * position advanced, not the count a read returns: a channel whose count disagrees with it (a positive count for
     * bytes it never put, which would spin this loop forever) or that returns a negative count other than -1 is
     * broken, and the copy fails naming both.
     */
    private void readWindow(ByteBuffer target, long offset) throws IOException {
        int empty = 0;
        while (target.hasRemaining()) {
            int before = target.position();
            long at = position + offset + before;
            int read = channel.read(target, at);
            if (read == -1) {
                throw new EOFException("file ends before byte " + at + " (reading " + dst.byteSize()
                    + " bytes from position " + position + ")");
            }
            if (read < 0 || target.position() - before != read) {
                throw new IOException("a broken channel: " + channel + " returned " + read + " for a positional "
                    + "read at position " + at + " but the buffer's position advanced by " + (target.position()
                    - before) + " bytes (reading " + dst.byteSize() + " bytes from position " + position + ")");
            }
            if (read > 0) {
                empty = 0;
            } else if (++empty >= MAX_EMPTY_READS) {
                throw new java.io.IOException("the source makes no progress: " + channel + " returned 0 bytes "
                    + MAX_EMPTY_READS + " times in a row for a positional read at position " + at + " (reading "
                    + dst.byteSize() + " bytes from position " + position + ")");
            } else {
                Thread.yield();
            }
        }
    }

    /** Drops references so that a pooled submission keeps no segment or channel alive. */
    void clear() {
        target = null;
        dst = null;
        src = null;
        channel = null;
        completion = null;
        failure = null;
    }

    private static final VarHandle CLAIMED;
    private static final VarHandle REMAINING;
    private static final VarHandle FAILURE;
    private static final VarHandle REFS;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            CLAIMED = lookup.findVarHandle(CopySubmission.class, "claimed", int.class);
            REMAINING = lookup.findVarHandle(CopySubmission.class, "remaining", int.class);
            FAILURE = lookup.findVarHandle(CopySubmission.class, "failure", Throwable.class);
            REFS = lookup.findVarHandle(CopySubmission.class, "refs", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
