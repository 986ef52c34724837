package dev.jpipeline.prefetch;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Native stage buffers kept between iterations, so that a {@code Prefetch} opened once per file (as the README
 * does) pays no allocation, zeroing and page faults per pass: on a VM a fresh page costs far more than on bare
 * metal (allocating, touching and freeing 4 buffers of 4 MiB took 11-32 ms on the 2-core Firecracker VM, as long
 * as a whole 256 MiB pass of a plain read loop).
 *
 * <pre>
 * Algorithm (all under this object's monitor)
 *
 *   take(bytes) : capacity = bytes rounded up to a page; the idle buffer of the smallest capacity in
 *                 [capacity, 2 * capacity], sliced to bytes; else a new one of that capacity, in a shared arena of
 *                 its own (the range is of capacities, not of bytes: a stage under half a page, a file of 100
 *                 bytes, would otherwise never fit the page it was given and allocate one at every take)
 *   give(b)     : b goes back to the idle buffers of its capacity, stamped with the time, most recent last;
 *                 then the idle buffers are cut to the bound, oldest first
 *   reaper      : a daemon thread, started when the first buffer turns idle, that frees every buffer idle for
 *                 longer than idleNanos, sleeps until the next one would be due, and ends when none is idle
 *
 * Invariants: a buffer is either taken (by exactly one live iteration) or idle (in `idle`), never both;
 *             idleBytes is the sum of the idle buffers' capacities and never exceeds maxIdleBytes after give.
 * </pre>
 *
 * A buffer's arena is closed only while the buffer is idle, so no live iteration ever sees its memory freed. A
 * reused buffer is not zeroed: the chunks handed out are views of exactly the bytes read into it.
 */
final class StageBufferPool {

    /** Buffers start on a page, so that file reads into them start on one too. */
    static final long ALIGNMENT = 4096;

    /**
     * The pool every iteration without a buffer allocator uses: at most 256 MiB idle, each buffer freed after
     * 2 s unused (system properties {@code jpipeline.prefetch.pooledBytes}, {@code jpipeline.prefetch.idleMillis};
     * a bound of 0 or less turns pooling off, an idle time is taken between 0 and a day), so that no setting can
     * keep {@code Prefetch} from loading.
     */
    static final StageBufferPool SHARED = new StageBufferPool(
        Math.max(0, Long.getLong("jpipeline.prefetch.pooledBytes", 256L << 20)),
        TimeUnit.MILLISECONDS.toNanos(Math.clamp(Long.getLong("jpipeline.prefetch.idleMillis", 2_000), 0,
            TimeUnit.DAYS.toMillis(1))));

    /**
     * One buffer: its arena (closed to free it), its whole memory, and when it was last given back.
     *
     * @param arena     the buffer's own arena
     * @param memory    all of the buffer's memory (its capacity, a multiple of a page)
     * @param idleSince {@link System#nanoTime()} when it was given back (0 while taken)
     */
    record Buffer(Arena arena, MemorySegment memory, long idleSince) {

        long capacity() {
            return memory.byteSize();
        }

        /** The first {@code bytes} bytes: what an iteration uses of it. */
        MemorySegment slice(long bytes) {
            return memory.asSlice(0, bytes);
        }
    }

    private final long maxIdleBytes;
    private final long idleNanos;
    /** Idle buffers by capacity, most recently given last; guarded by this. */
    private final TreeMap<Long, ArrayDeque<Buffer>> idle = new TreeMap<>();
    /** Sum of the idle buffers' capacities; guarded by this. */
    private long idleBytes;
    /** Buffers ever allocated, for tests and benchmarks; guarded by this. */
    private long allocations;
    /** Whether a reaper thread is running; guarded by this. */
    private boolean reaping;

    /**
     * @param maxIdleBytes the most memory kept idle (0: none, every buffer is freed when given back)
     * @param idleNanos    how long a buffer may stay idle before it is freed
     */
    StageBufferPool(long maxIdleBytes, long idleNanos) {
        if (maxIdleBytes < 0 || idleNanos < 0) {
            throw new IllegalArgumentException("a stage buffer pool needs a bound >= 0 and an idle time >= 0, got "
                + maxIdleBytes + " bytes and " + idleNanos + " ns");
        }
        this.maxIdleBytes = maxIdleBytes;
        this.idleNanos = idleNanos;
    }

    /**
     * A buffer of at least {@code bytes} bytes (a pooled one of at most twice that rounded up to a page, or a new
     * one), page-aligned, accessible from any thread, for the caller alone until it {@link #give}s it back.
     *
     * @throws OutOfMemoryError when a new buffer cannot be allocated
     */
    Buffer take(long bytes) {
        long capacity = (bytes + ALIGNMENT - 1) & -ALIGNMENT;
        synchronized (this) {
            Map.Entry<Long, ArrayDeque<Buffer>> fit = idle.ceilingEntry(capacity);
            if (fit != null && fit.getKey() <= 2 * capacity) {
                Buffer b = fit.getValue().pollLast();   // the most recently used: its pages are likeliest warm
                if (fit.getValue().isEmpty()) {
                    idle.remove(fit.getKey());
                }
                idleBytes -= b.capacity();
                return b;
            }
            allocations++;
        }
        Arena arena = Arena.ofShared();
        try {
            return new Buffer(arena, arena.allocate(capacity, ALIGNMENT), 0);
        } catch (RuntimeException | Error e) {
            arena.close();
            throw e;
        }
    }

    /**
     * Takes back a buffer from {@link #take}: nothing may read or write it any more. It is kept for the next
     * iteration, or freed when the pool is full.
     */
    void give(Buffer buffer) {
        ArrayDeque<Buffer> freed = new ArrayDeque<>();
        synchronized (this) {
            if (buffer.capacity() > maxIdleBytes) {
                freed.add(buffer);
            } else {
                idle.computeIfAbsent(buffer.capacity(), k -> new ArrayDeque<>())
                    .addLast(new Buffer(buffer.arena(), buffer.memory(), System.nanoTime()));
                idleBytes += buffer.capacity();
                while (idleBytes > maxIdleBytes) {
                    freed.add(removeOldest());
                }
                if (!reaping && !idle.isEmpty()) {
                    reaping = true;
                    Thread.ofPlatform().daemon().name("jpipeline-buffer-reaper").start(this::reap);
                }
            }
        }
        freed.forEach(b -> b.arena().close());      // outside the monitor: a shared arena's close is a handshake
    }

    /** The idle buffer given back longest ago, removed from the idle buffers; the caller frees it. */
    private Buffer removeOldest() {
        Buffer oldest = oldestIdle();
        ArrayDeque<Buffer> sameSize = idle.get(oldest.capacity());
        sameSize.pollFirst();
        if (sameSize.isEmpty()) {
            idle.remove(oldest.capacity());
        }
        idleBytes -= oldest.capacity();
        return oldest;
    }

    /** The reaper's loop: frees buffers idle too long, until none is idle. */
    private void reap() {
        for (;;) {
            ArrayDeque<Buffer> expired = new ArrayDeque<>();
            long sleep;
            synchronized (this) {
                long now = System.nanoTime();
                sleep = -1;
                while (!idle.isEmpty()) {
                    Buffer oldest = oldestIdle();
                    long due = oldest.idleSince() + idleNanos;
                    if (due - now > 0) {
                        sleep = due - now;
                        break;
                    }
                    expired.add(removeOldest());
                }
                if (sleep < 0) {
                    reaping = false;
                }
            }
            expired.forEach(b -> b.arena().close());
            if (sleep < 0) {
                return;
            }
            LockSupport.parkNanos(this, sleep);
        }
    }

    /** The idle buffer given back longest ago (the first of its capacity: each list is in order of return). */
    private Buffer oldestIdle() {
        Buffer oldest = null;
        for (ArrayDeque<Buffer> sameSize : idle.values()) {
            Buffer first = sameSize.peekFirst();
            if (oldest == null || first.idleSince() - oldest.idleSince() < 0) {
                oldest = first;
            }
        }
        return oldest;
    }

    /** Buffers allocated so far (a pooled take allocates none). */
    synchronized long allocations() {
        return allocations;
    }

    /** Bytes held idle now. */
    synchronized long idleBytes() {
        return idleBytes;
    }
}
