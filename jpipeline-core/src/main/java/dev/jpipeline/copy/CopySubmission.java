package dev.jpipeline.copy;

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
 * refs      : queue entries plus workers still inside work(); set to the number of entries on submission,
 *             dropped by each worker after work() returns. Only the release that brings it to 0 recycles the
 *             submission, so a worker can never mix the counters of one copy with the chunks of the next.
 * </pre>
 */
final class CopySubmission {

    private MemorySegment dst;
    private MemorySegment src;
    private FileChannel channel;
    private long position;
    private long chunkBytes;
    private int chunks;
    private CopyCompletion completion;

    private volatile int claimed;
    private volatile int remaining;
    private volatile int refs;
    private volatile Throwable failure;

    /** Prepares a memory-to-memory copy; fields are published to workers by the engine's queue lock. */
    void memory(MemorySegment dst, MemorySegment src, long chunkBytes, CopyCompletion completion) {
        this.channel = null;
        this.src = src;
        prepare(dst, chunkBytes, completion);
    }

    /** Prepares a positional file read. */
    void file(MemorySegment dst, FileChannel channel, long position, long chunkBytes, CopyCompletion completion) {
        this.src = null;
        this.channel = channel;
        this.position = position;
        prepare(dst, chunkBytes, completion);
    }

    private void prepare(MemorySegment dst, long chunkBytes, CopyCompletion completion) {
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

    /** Records how many queue entries refer to this submission (before it is published by the queue lock). */
    void referencedBy(int entries) {
        REFS.setRelease(this, entries);
    }

    /** Drops one reference. @return whether it was the last, so that the caller may recycle the submission */
    boolean release() {
        return (int) REFS.getAndAdd(this, -1) == 1;
    }

    /**
     * Claims and performs chunks until none is left.
     *
     * @return the completion to call (with {@link #failure()}) if this worker finished the copy, else null
     */
    CopyCompletion work() {
        CopyCompletion done = null;
        for (int chunk; (chunk = (int) CLAIMED.getAndAdd(this, 1)) < chunks; ) {
            try {
                if (failure == null) {
                    copyChunk(chunk);
                }
            } catch (Throwable t) {
                FAILURE.compareAndSet(this, null, t);
            }
            if ((int) REMAINING.getAndAdd(this, -1) == 1) {
                done = completion;
            }
        }
        return done;
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
        ByteBuffer target = dst.asSlice(offset, length).asByteBuffer();
        while (target.hasRemaining()) {
            long at = position + offset + target.position();
            if (channel.read(target, at) < 0) {
                throw new EOFException("file ends before byte " + at + " (reading " + dst.byteSize()
                    + " bytes from position " + position + ")");
            }
        }
    }

    /** Drops references so that a pooled submission keeps no segment or channel alive. */
    void clear() {
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
