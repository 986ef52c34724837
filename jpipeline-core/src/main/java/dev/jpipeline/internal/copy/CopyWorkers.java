package dev.jpipeline.internal.copy;

import dev.jpipeline.AsyncContractFulfillment;
import dev.jpipeline.WaitStrategy;
import dev.jpipeline.internal.wait.Deadlines;
import dev.jpipeline.internal.wait.Oversubscription;
import dev.jpipeline.internal.PhaseBarrier;
import dev.jpipeline.internal.RegionFaults;
import dev.jpipeline.internal.wait.WaitStatus;
import dev.jpipeline.internal.wait.Waitable;
import dev.jpipeline.internal.wait.Waiter;
import dev.jpipeline.internal.wait.Waiting;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.channels.FileChannel;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.Iterator;
import java.util.Objects;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Worker threads that perform asynchronous copies: jpipeline's stand-in for the GPU's copy hardware behind
 * {@code cuda::memcpy_async} (which, on the host, libcu++ simply performs synchronously). The engine behind the
 * public {@code CopyEngine}.
 *
 * <pre>
 * Algorithm
 *
 *   copyInto(dst, src, target) : closed? refuse.  small, or the issuer would only wait? copy inline, done (a
 *                                fault of a mapped side fails the stage, as a worker's copy would)
 *                                else target.tieCopy(), submit
 *   readInto(dst, file, target): closed? refuse.  target.tieCopy(); the issuer would only wait, or the machine is
 *                                seen oversubscribed and jpipeline opened the file? read inline and tell the
 *                                landing (a failed read fails the phase, as a worker's would), else submit
 *   submit --lock--&gt; queue: [sub A][sub A][sub B] ...   (a copy of k chunks is queued min(k, workers) times:
 *                                                         one entry per worker that may share it)
 *   worker: take an entry, claim chunks of it until none is left (getAndAdd on the submission), copy each;
 *           the worker that finishes the last chunk tells the copy's landing, then recycles the submission.
 *   helpWith(barrier), by a thread that waits for a barrier phase with copies pending (Waiting, through
 *           Waitable.helpProgress): takes the queue entries of copies tied to that barrier out of the queue, and
 *           joins such a copy that a worker has started (its active slot, CopySubmission.join), and claims their
 *           chunks like a worker. So a waiter never waits for a copy that no worker has started: on a busy
 *           machine, where a worker may wait a whole time slice to run, the thread that needs the data copies it.
 *           A copy of more than one minimum chunk is split at least two ways, so that a waiter can share a copy
 *           that the engine's only worker has started. A waiter performs memory copies, and reads only from
 *           channels that jpipeline opened itself (waitersMayRead): an interrupt that reaches a thread inside a
 *           FileChannel read closes the channel, and a user's channel is never closed by jpipeline.
 * </pre>
 *
 * Idle workers wait in {@link Waiting#await} on this object (spin briefly, then park); a submission signals them
 * after publishing the queue count (the Dekker pattern of {@link Waiter}). In steady state nothing is allocated:
 * the queue is a circular array and submissions are pooled. A landing that throws is reported to the worker's
 * uncaught-exception handler and never kills the worker.
 *
 * <p>Memory consistency effects: actions of the submitting thread before a submission happen-before the copy's
 * reads and writes, which happen-before the landing.
 */
public final class CopyWorkers implements CopyService, Waitable {

    /** Copies submitted to any engine and not landed yet: a copy in flight is progress for hang detectors. */
    private static final AtomicInteger IN_FLIGHT = new AtomicInteger();
    /**
     * Channels that jpipeline opened itself (a prefetch of a path, the command line's file): a waiting thread may
     * read from them. Weak keys, identity (a FileChannel's equals), guarded by its own lock.
     */
    private static final Set<FileChannel> WAITERS_MAY_READ =
        Collections.synchronizedSet(Collections.newSetFromMap(new WeakHashMap<>()));
    /** Idle workers spin about 10-40 us for new work before they park. */
    private static final WaitStrategy IDLE = WaitStrategy.spinYieldPark(1 << 10, 0);

    private final int workers;
    private final long inlineThreshold;
    private final long minChunk;
    private final Thread[] threads;

    private final ReentrantLock lock = new ReentrantLock();
    /** Queue entries; guarded by lock. */
    private final ArrayDeque<CopySubmission> queue = new ArrayDeque<>();
    /** Recycled submissions; guarded by lock. */
    private final ArrayDeque<CopySubmission> pool = new ArrayDeque<>();
    /** Entries in the queue: written under the lock, read without it by waiting workers (volatile). */
    private volatile int queued;
    /** Set once by close(): read by submitters and by waiting workers (volatile). */
    private volatile boolean closed;
    /** Treiber stack of parked idle workers: accessed through {@code IDLE_WORKERS}. */
    private volatile Waiter idleWorkers;
    /**
     * The submission each worker is inside work() of, else null: set by the worker after it took it and cleared
     * before it drops its reference, read by helpers (who join it only while a reference is held, see join).
     */
    private final AtomicReferenceArray<CopySubmission> active;
    /**
     * Threads inside {@link #helpWith}: raised before a helper claims anything, lowered after its landings, so that
     * close(), once the workers have ended, waits for the copies that helpers took (accessed through HELPERS).
     */
    private volatile int helpers;
    /** How deep the calling thread is inside this engine's helpWith (a landing may wait and help again). */
    private final ThreadLocal<int[]> helpingHere = ThreadLocal.withInitial(() -> new int[1]);

    /**
     * Starts {@code workers} daemon worker threads named {@code name-i}. Copies of at most
     * {@code inlineThreshold} bytes run inline; larger ones are split into chunks of at least {@code minChunk}.
     */
    public CopyWorkers(int workers, long inlineThreshold, long minChunk, String name) {
        this.workers = workers;
        this.inlineThreshold = inlineThreshold;
        this.minChunk = minChunk;
        this.threads = new Thread[workers];
        this.active = new AtomicReferenceArray<>(workers);
        for (int i = 0; i < workers; i++) {
            int index = i;
            threads[i] = Thread.ofPlatform().daemon().name(name + "-" + i).start(() -> workLoop(index));
        }
    }

    /**
     * Lets waiting threads perform reads from {@code channel}, which jpipeline opened and owns: an interrupt of a
     * waiter inside such a read closes it and fails that read's stage, which is the owner's to report.
     */
    public static void waitersMayRead(FileChannel channel) {
        WAITERS_MAY_READ.add(channel);
    }

    /** Copies submitted to any engine whose landing has not been told yet. */
    public static int copiesInFlight() {
        return IN_FLIGHT.get();
    }

    public int workers() {
        return workers;
    }

    public long inlineThreshold() {
        return inlineThreshold;
    }

    public long minChunk() {
        return minChunk;
    }

    public boolean isClosed() {
        return closed;
    }

    @Override
    public AsyncContractFulfillment copyInto(MemorySegment dst, MemorySegment src, PhaseBarrier target,
                                             CopyLanding landing, boolean onIssuer) {
        checkOpen();
        long bytes = dst.byteSize();
        if (onIssuer || bytes <= inlineThreshold) {
            try {
                MemorySegment.copy(src, 0, dst, 0, bytes);
            } catch (InternalError fault) {
                // a fault of a mapped side (a region or file truncated under it): the copy fails its stage, as a
                // worker's copy would, not the call (HotSpot reports the fault this way; other errors pass)
                if (!RegionFaults.isAccessFault(fault)) {
                    throw fault;
                }
                target.tieCopy();
                landing.copyHandedOff();
                landing.copyLanded(fault);
            }
            return AsyncContractFulfillment.NONE;
        }
        target.tieCopy();
        landing.copyHandedOff();
        submitTied(dst, src, null, 0, target, landing);
        return AsyncContractFulfillment.ASYNC;
    }

    @Override
    public AsyncContractFulfillment readInto(MemorySegment dst, FileChannel channel, long position,
                                             PhaseBarrier target, CopyLanding landing, boolean onIssuer) {
        checkOpen();
        target.tieCopy();
        landing.copyHandedOff();
        // a read from a channel jpipeline opened is read here on a machine seen oversubscribed: a worker would wait
        // for a time slice while the thread that needs the data waits for it (a user's channel stays on the
        // engine: its read may block on a device, and an interrupt here would close it)
        if (onIssuer || Oversubscription.busy() && WAITERS_MAY_READ.contains(channel)) {
            CopySubmission s = pooled();
            Throwable failure;
            try {
                failure = s.performHere(dst, null, channel, position);
            } finally {
                recycle(s);
            }
            landing.copyLanded(failure);
            return AsyncContractFulfillment.NONE;
        }
        submitTied(dst, null, channel, position, target, landing);
        return AsyncContractFulfillment.ASYNC;
    }

    /** A submission whose pending arrival is already tied: if the engine closed meanwhile, the copy fails. */
    private void submitTied(MemorySegment dst, MemorySegment src, FileChannel channel, long position,
                            PhaseBarrier target, CopyLanding landing) {
        try {
            target.copiesOn(this);      // before the submission: a waiter that sees it pending may look for it here
            submit(dst, src, channel, position, target, landing);
        } catch (IllegalStateException closedMeanwhile) {
            landing.copyLanded(closedMeanwhile);
            throw closedMeanwhile;
        }
    }

    /**
     * Copies (or reads) asynchronously and then tells {@code landing}; no inline path, no barrier. The caller
     * must not touch either range before the landing.
     *
     * @throws IllegalStateException when the engine is closed
     */
    public void submit(MemorySegment dst, MemorySegment src, FileChannel channel, long position,
                       CopyLanding landing) {
        submit(dst, src, channel, position, null, landing);
    }

    /** {@link #submit(MemorySegment, MemorySegment, FileChannel, long, CopyLanding)} of a copy tied to target. */
    private void submit(MemorySegment dst, MemorySegment src, FileChannel channel, long position,
                        PhaseBarrier target, CopyLanding landing) {
        Objects.requireNonNull(dst, "dst");
        Objects.requireNonNull(landing, "landing");
        long bytes = dst.byteSize();
        // at least two ways (where the copy has two minimum chunks): a waiter can share the only worker's copy
        int ways = Math.clamp(bytes / minChunk, 1, Math.max(2, workers));
        long chunk = (bytes + ways - 1) / ways;
        chunk = Math.max(64, (chunk + 63) & ~63L);          // cache-line aligned chunk boundaries
        lock.lock();
        try {
            checkOpen();
            CopySubmission s = fromPool();
            IN_FLIGHT.incrementAndGet();
            if (channel == null) {
                s.memory(dst, src, chunk, landing);
            } else {
                s.file(dst, channel, position, chunk, landing);
            }
            s.target(target != null && (channel == null || WAITERS_MAY_READ.contains(channel)) ? target : null);
            int entries = Math.min(s.chunks(), workers);
            s.referencedBy(entries);
            for (int i = 0; i < entries; i++) {
                queue.addLast(s);
            }
            queued += entries;
        } finally {
            lock.unlock();
        }
        if (IDLE_WORKERS.getVolatile(this) != null) {
            Waiter.signalAll(IDLE_WORKERS, this);
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("copy engine is closed: no copy of any size can be submitted to it");
        }
    }

    private void workLoop(int index) {
        for (CopySubmission s; (s = take()) != null; ) {
            active.set(index, s);
            CopyLanding done;
            try {
                done = s.work();
            } catch (Throwable t) {
                done = null;        // work() records chunk failures itself; nothing else can throw there
                report(t);
            }
            if (done != null) {
                try {
                    land(s, done);
                } finally {
                    Thread.interrupted();       // whatever the landing did, the next copy starts clean
                }
            }
            active.set(index, null);            // before the release: a helper joins only a referenced copy
            if (s.release()) {
                recycle(s);
            }
        }
    }

    /** Tells a finished copy's landing (a landing must not kill the worker or fail a helper's wait). */
    private static void land(CopySubmission s, CopyLanding done) {
        try {
            done.copyLanded(s.failure());
        } catch (Throwable t) {
            report(t);
        } finally {
            IN_FLIGHT.decrementAndGet();
        }
    }

    /**
     * Performs, on the calling thread, the copies tied to {@code target} that no worker has started (their queue
     * entries) and the unclaimed chunks of those a worker has started, landing each copy whose last chunk it
     * finishes, exactly as a worker would (a failed chunk fails the copy, never this call). The caller's interrupt
     * status is kept, but not seen by the copies (an interrupted positional read would close its channel).
     *
     * @return whether it performed or joined any copy
     */
    public boolean helpWith(PhaseBarrier target) {
        if (!mayHelp(target)) {
            return false;                           // the common case: no atomic, no thread-local
        }
        boolean helped = false;
        int[] mine = helpingHere.get();
        HELPERS.getAndAdd(this, 1);                 // before any claim: close() waits for what a helper claims
        mine[0]++;
        try {
            for (CopySubmission s; (s = claimFor(target)) != null; ) {
                helped = true;
                CopyLanding done = s.work(true);    // an interrupt that reaches this thread stays its own
                boolean interrupted = Thread.interrupted();     // the landing runs as on a worker: not interrupted
                if (done != null) {
                    land(s, done);
                }
                if (Thread.interrupted() | interrupted) {
                    Thread.currentThread().interrupt();
                }
                if (s.release()) {
                    recycle(s);
                }
            }
        } finally {
            mine[0]--;
            HELPERS.getAndAdd(this, -1);            // after the landings: they happen-before close() returns
        }
        return helped;
    }

    /**
     * Whether a copy tied to {@code target} may be left to claim: something is queued, or a worker is inside such a
     * copy with chunks unclaimed. Racy, a hint: {@link #claimFor} decides.
     */
    private boolean mayHelp(PhaseBarrier target) {
        if (queued > 0) {
            return true;
        }
        for (int i = 0; i < workers; i++) {
            CopySubmission s = active.get(i);
            if (s != null && s.target() == target && s.unclaimed()) {
                return true;
            }
        }
        return false;
    }

    /**
     * A referenced copy tied to {@code target} with chunks left: a queue entry taken out of the queue (its
     * reference becomes the caller's), else a worker's copy in progress joined; null when there is none.
     */
    private CopySubmission claimFor(PhaseBarrier target) {
        if (queued > 0) {
            lock.lock();
            try {
                for (Iterator<CopySubmission> it = queue.iterator(); it.hasNext(); ) {
                    CopySubmission s = it.next();
                    if (s.target() == target) {
                        it.remove();
                        queued--;
                        return s;
                    }
                }
            } finally {
                lock.unlock();
            }
        }
        for (int i = 0; i < workers; i++) {
            CopySubmission s = active.get(i);
            if (s != null && s.target() == target && s.unclaimed() && s.join()) {
                if (s.target() == target && s.unclaimed()) {
                    return s;
                }
                if (s.release()) {         // recycled and reused meanwhile for another copy: not ours
                    recycle(s);
                }
            }
        }
        return null;
    }

    private static void report(Throwable t) {
        Thread me = Thread.currentThread();
        me.getUncaughtExceptionHandler().uncaughtException(me, t);
    }

    /** The next queue entry, or null once the engine is closed and the queue drained. */
    private CopySubmission take() {
        for (;;) {
            lock.lock();
            try {
                if (!queue.isEmpty()) {
                    queued--;
                    return queue.pollFirst();
                }
                if (closed) {
                    return null;
                }
            } finally {
                lock.unlock();
            }
            Waiting.await(this, 0, Deadlines.NO_DEADLINE, false, IDLE, this, null);
        }
    }

    /** Idle workers' condition: work is queued, or the engine is closing. */
    @Override
    public WaitStatus poll(long token) {
        return queued > 0 || closed ? WaitStatus.COMPLETE : null;
    }

    @Override
    public void enqueue(Waiter waiter) {
        Waiter.push(IDLE_WORKERS, this, waiter);
    }

    @Override
    public void dequeue(Waiter waiter) {
        Waiter.sweep(IDLE_WORKERS, this);
    }

    /** A recycled submission, or a new one. */
    private CopySubmission pooled() {
        lock.lock();
        try {
            return fromPool();
        } finally {
            lock.unlock();
        }
    }

    /** {@link #pooled()} with the lock already held. */
    private CopySubmission fromPool() {
        return pool.isEmpty() ? new CopySubmission() : pool.pop();
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
     * Stops the workers once every submitted copy has been performed and its landing told, and waits for them and
     * for the waiting threads that perform copies of this engine (helpWith), except when called by one of this
     * engine's own workers (from a landing): then it returns at once and the workers stop on their own, so that a
     * worker never waits for itself or for a peer that waits for it.
     */
    public void close() {
        lock.lock();
        try {
            closed = true;
        } finally {
            lock.unlock();
        }
        Waiter.signalAll(IDLE_WORKERS, this);
        Thread me = Thread.currentThread();
        for (Thread t : threads) {
            if (t == me) {
                return;
            }
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
        awaitHelpers();
        if (interrupted) {
            me.interrupt();
        }
    }

    /**
     * After the workers have ended (the queue is empty, nothing more can be submitted): waits until no other
     * thread is inside helpWith, so that the copies waiters took from the queue or joined have landed too. A
     * landing that a helper runs may itself close the engine: its own help is not waited for.
     */
    private void awaitHelpers() {
        int own = helpingHere.get()[0];
        for (long nap = 10_000; helpers > own; nap = Math.min(2 * nap, 1_000_000)) {
            LockSupport.parkNanos(this, nap);
        }
    }

    @Override
    public String toString() {
        return "copy engine (" + workers + " workers, inline up to " + inlineThreshold + " B, chunks >= " + minChunk
            + " B" + (closed ? ", closed" : "") + ")";
    }

    private static final VarHandle IDLE_WORKERS;
    private static final VarHandle HELPERS;

    static {
        try {
            IDLE_WORKERS = MethodHandles.lookup().findVarHandle(CopyWorkers.class, "idleWorkers", Waiter.class);
            HELPERS = MethodHandles.lookup().findVarHandle(CopyWorkers.class, "helpers", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
