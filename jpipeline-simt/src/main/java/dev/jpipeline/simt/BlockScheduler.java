package dev.jpipeline.simt;

import dev.jpipeline.internal.wait.Deadlines;
import dev.jpipeline.internal.HangDetector;
import java.util.concurrent.locks.LockSupport;

/**
 * Runs one resident thread block's CUDA threads cooperatively: one at a time, switching only when the one that runs
 * blocks in a jpipeline wait (a sync, a pipeline wait, a barrier) or finishes, as a multiprocessor runs a block's
 * warps and as HIP-CPU runs a block's fibers.
 *
 * <pre>
 * The block has one turn. Its holder runs; every other started thread is READY (woken, waiting for the turn, in
 * wake order) or BLOCKED (parked in a wait). When the holder parks or finishes, the next holder is the next
 * unstarted thread, else the oldest ready one (round-robin: every thread gets a first turn before any gets a
 * second, as a GPU starts every thread of a resident block); with neither, the block is idle (holder null) until
 * a wake from outside the block (a landing copy, another block's thread, a timed wait that expired) hands the turn
 * to the woken thread.
 *
 * Who gets the turn is the block's TurnPolicy's: FairTurns is the round-robin above; under checked execution
 * CheckedTurns lets the session's seed pick among the ready threads, the next unstarted one and the copies in
 * flight, at every scheduling point of the holder (yieldPoint) as well, and keeps checked execution's state (virtual
 * deadlines, landings, the hang finding): this class never writes it.
 *
 * Lazy threads: a thread starts as a plain call on the strand (Strand: a virtual thread) that picked it, and keeps
 * that strand only if it blocks; a thread that finishes hands its strand to the next unstarted thread. A kernel
 * that never blocks runs each block as a loop of calls on one strand. A blocking thread's successor gets an idle
 * strand of the launch, or a new one.
 *
 * Invariants (under the lock): holder != null or the block is idle; holder.state == RUNNING and only the holder
 * runs kernel code; a READY thread is in ready[]; nextRank threads have started; unfinished counts those started
 * and not finished plus those not started. A wake that finds its thread RUNNING (between its push of a waiter and
 * its park) leaves a permit, so that no wake-up is lost (the wait routine's Dekker argument holds: the permit is
 * read and written under the lock). The holder field is volatile: a strand waiting for the turn reads it without
 * the lock, after the write that handed it the turn and before its unpark.
 *
 * Interrupts: a CUDA thread's interrupt status neither ends nor shortens its wait for the turn, and is set again
 * when the wait returns (awaitTurn: a park returns at once while the status is set, so a loop that kept it set would
 * spin on its virtual thread's carrier).
 *
 * Compiled threads (Strand.runCompiledThread) may wait without a stack: BLOCKED or READY with strand == null, their
 * state in their frames (suspend, yieldTurn, yieldStackless). Whoever makes such a thread the holder gives it a
 * strand, as for a thread not yet started (launch.run, or the caller's own strand). As the block would go idle
 * with such threads suspended at pipeline waits, one of them calls its wait again with its stack
 * (stacklessWaiterLocked), so that the wait's watch over dead participants runs as on strands.
 *
 * Hang detection: the block, not each thread, is a participant of the launch's hang detector. It is stuck while
 * idle: then every started, unfinished thread is blocked, and the report lists each with what it waits in. Its
 * progress is the count of waits that ended and threads that started, kept by the turn's holder (one writer at a
 * time, ordered by the lock), so a thread that runs or finishes costs no shared counter.
 * </pre>
 */
final class BlockScheduler implements HangDetector.Participant {

    final Launch launch;
    final BlockState block;
    final int slot;
    /** Who gets the turn: FairTurns, or CheckedTurns under checked execution. */
    private final TurnPolicy policy;
    /** Started threads by rank: the abort wakes every blocked one. Guarded by this. */
    private final KernelThread[] threads;
    /** Ready threads, oldest first: a circular queue. Guarded by this. */
    private final KernelThread[] ready;
    private int readyHead;
    private int readyCount;
    /** Written under the lock; volatile for the hang watch's unlocked reads. */
    private volatile int nextRank;
    /** Guarded by this. */
    private int unfinished;
    /** Threads finished: written under the lock, read by checked execution's sync checks in the turn. */
    private int finishedCount;
    /** The thread holding the turn, or null while the block is idle: written under the lock, read by waiters. */
    private volatile KernelThread holder;
    /** Set under the lock when the last thread has finished: read by the hang detector. */
    private volatile boolean done;
    /** Waits that ended, written by the turn's holder only; read by the launch's hang watch. */
    private volatile long waitsEnded;
    /**
     * Set once, under the lock, when the turn's holder kept it past FORWARD_PROGRESS_NANOS while other threads of the
     * block could run (a spin-wait on another thread of its block, legal on sm_70 and later): from then on the
     * block's threads run concurrently, each on its own strand, and a wait parks its thread without handing a turn
     * on. Volatile for awaitTurn's unlocked look. Never set under checked execution, which orders every thread.
     */
    private volatile boolean released;
    /** How many unstarted threads startMore started the last time: guarded by this. */
    private int startBatch = 1;
    /** The launching thread's view of the turn (watchTurn): confined to that thread. */
    private KernelThread watchedHolder;
    private long watchedProgress;
    private long watchedSince;
    /** Compiled threads suspended without a stack (suspend), for tests and diagnostics. */
    static final java.util.concurrent.atomic.LongAdder SUSPENSIONS = new java.util.concurrent.atomic.LongAdder();
    /** How long a holder may keep the turn, with nothing else moving in the block, before the turn is released. */
    static final long FORWARD_PROGRESS_NANOS = 50_000_000L;

    BlockScheduler(Launch launch, BlockState block, int slot) {
        this.launch = launch;
        this.block = block;
        this.slot = slot;
        this.policy = launch.checked == null ? FairTurns.INSTANCE : new CheckedTurns(launch.checked);
        int threadsKept = launch.plain ? 1 : block.size;    // a plain block has one thread object, its first
        this.threads = new KernelThread[threadsKept];
        this.ready = new KernelThread[threadsKept];
        this.unfinished = block.size;
    }

    /** The block's first thread, holding the turn; it has no strand yet. Null when the launch has been aborted. */
    synchronized KernelThread begin() {
        return passTurn();
    }

    /**
     * The block's threads have all run, as a plain loop on {@code first}'s strand (a kernel with no resumption point:
     * Strand.runPlainBlock), or stopped at an abort: the block is done.
     *
     * @return the first thread of the slot's next block, for the same strand to run, or null
     */
    KernelThread finishedPlain(KernelThread first) {
        synchronized (this) {
            first.state = KernelThread.FINISHED;
            finishedCount = block.size;
            unfinished = 0;
            nextRank = block.size;
            holder = null;
            done = true;
        }
        return launch.blockFinished(this);
    }

    /**
     * {@code kt}, the holder, has finished (its strand has done the launch's bookkeeping for it).
     *
     * @return the next thread for the same strand to run: a new thread of this block, or the first thread of the
     *         slot's next block; null when the strand is free (the turn went to a thread with a strand of its own,
     *         or nobody can run)
     */
    KernelThread finished(KernelThread kt) {
        KernelThread next;
        boolean blockDone;
        policy.exiting(kt);
        synchronized (this) {
            kt.state = KernelThread.FINISHED;
            finishedCount++;
            unfinished--;
            next = released ? startUnstartedLocked() : passTurn();
            blockDone = unfinished == 0;
            done = blockDone;
        }
        if (blockDone) {
            return launch.blockFinished(this);
        }
        if (next != null && next.strand != null) {
            LockSupport.unpark(next.strand.thread());
            return null;
        }
        return next;
    }

    /**
     * Parks {@code kt}, the holder, in a wait: hands the turn on, then waits until the turn comes back to it (after
     * a {@link #wake}, or the deadline, or at once when a wake came first). Its interrupt status plays no part and
     * is kept ({@link #awaitTurn}).
     */
    void park(KernelThread kt, Object blocker, long deadline) {
        KernelThread next;
        synchronized (this) {
            if (kt.permit) {
                kt.permit = false;
                return;
            }
            kt.state = KernelThread.BLOCKED;
            deadline = policy.blocking(kt, deadline);
            next = released ? startUnstartedLocked() : passTurn();
        }
        if (next != null && released && next.strand == null) {
            launch.runOnPlatformStrand(next);   // the spinning holders may keep every carrier
        } else if (next != null) {
            launch.run(next);
        }
        awaitTurn(kt, blocker, deadline);
    }

    /**
     * {@code kt}, which has handed the turn on, waits until it holds the turn again (or, under checked execution,
     * until the launch is aborted); at {@code deadline} it wakes itself ({@link #wake}) and goes on waiting for the
     * turn.
     *
     * <p>Not interruptible, and blind to the interrupt status: {@code LockSupport.park} returns at once while the
     * thread's interrupt status is set, so a loop that parked with it set would spin, and a spinning virtual thread
     * never gives its carrier back: once the spinning threads of a launch hold every carrier, the thread holding the
     * turn never runs again, and the launch (every later one too: the spinners never stop) hangs with no hang
     * report (its block is never idle). So the status is cleared for the wait and set again when it returns: the
     * kernel code sees it, as after any other jpipeline wait, and the turn is taken as if it were not set.
     */
    private void awaitTurn(KernelThread kt, Object blocker, long deadline) {
        boolean interrupted = Thread.interrupted();
        boolean timed = deadline != Deadlines.NO_DEADLINE;
        while (!mayRun(kt) && !unwindAtOnce()) {
            if (!timed) {
                LockSupport.park(blocker);
            } else {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    wake(kt);               // the deadline: it is ready to look at its clock, in its turn
                    timed = false;
                } else {
                    LockSupport.parkNanos(blocker, left);
                }
            }
            interrupted |= Thread.interrupted();
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** Wakes {@code kt} (from any thread): it takes the turn at once if the block is idle, else when picked. */
    void wake(KernelThread kt) {
        Thread toUnpark = null;
        KernelThread toRun = null;
        synchronized (this) {
            switch (kt.state) {
                case KernelThread.RUNNING -> kt.permit = true;
                case KernelThread.BLOCKED -> {
                    if (kt.strand == null) {
                        toRun = readyStackless(kt);
                    } else {
                        toUnpark = makeReady(kt);
                    }
                }
                default -> {
                    // READY: already woken; FINISHED: a stale wake
                }
            }
        }
        if (toUnpark != null) {
            LockSupport.unpark(toUnpark);
        }
        if (toRun != null) {
            runStackless(toRun);
        }
    }

    /**
     * {@code kt}, the holder, a compiled thread (Strand.runCompiledThread), gives its stack up: it waits at a sync
     * with nothing of it on any stack (its frame keeps its locals), so its strand goes on with another thread, as
     * when a thread finishes. A wake that came first (its permit) keeps it running.
     *
     * @return {@code kt} when a wake came first: it goes on; else the next thread for the same strand to run, or
     *         null (as {@link #finished})
     */
    KernelThread suspend(KernelThread kt) {
        KernelThread next;
        synchronized (this) {
            if (kt.permit) {
                kt.permit = false;
                return kt;
            }
            kt.state = KernelThread.BLOCKED;
            kt.strand = null;               // a strand takes it up again when it is woken (readyStackless)
            SUSPENSIONS.increment();
            next = released ? startUnstartedLocked() : passTurn();
        }
        if (next != null && next.strand != null) {
            LockSupport.unpark(next.strand.thread());
            return null;
        }
        return next;
    }

    /**
     * {@code kt}, the holder, a compiled thread at a loop head, lets the block's other threads run first: it waits for
     * the turn without a stack, behind the ready threads, while an unstarted or ready thread can take it. Not once
     * the turn is released (every thread runs then).
     *
     * @return {@code kt} when it goes on at once (nothing else can run); else what the same strand runs next, or
     *         null (as {@link #suspend})
     */
    KernelThread yieldTurn(KernelThread kt) {
        KernelThread next;
        synchronized (this) {
            if (released || readyCount == 0 && nextRank >= block.size || policy.ordersEveryThread()) {
                return kt;
            }
            next = requeueLocked(kt);
            if (next == kt) {
                return kt;
            }
        }
        if (next != null && next.strand != null) {
            LockSupport.unpark(next.strand.thread());
            return null;
        }
        return next;
    }

    /** Under the lock: {@code kt}, the holder, waits for the turn without a stack; returns the turn's next holder. */
    private KernelThread requeueLocked(KernelThread kt) {
        kt.strand = null;
        enqueueReady(kt);
        return passTurn();
    }

    /**
     * Under the lock: a thread suspended without a stack is woken. It runs at once when the turn is released or the
     * block idle (returned: the caller gives it a strand, runStackless), else it waits for the turn in the ready
     * queue, where the turn's next holder picks it up with its own strand.
     */
    private KernelThread readyStackless(KernelThread kt) {
        if (released) {
            kt.state = KernelThread.RUNNING;
            return kt;
        }
        if (holder == null) {
            kt.state = KernelThread.RUNNING;
            holder = kt;
            return kt;
        }
        enqueueReady(kt);
        return null;
    }

    /** Gives a woken stackless thread a strand: a platform one once the turn is released (see releaseTurn). */
    private void runStackless(KernelThread kt) {
        if (released) {
            launch.runOnPlatformStrand(kt);
        } else {
            launch.run(kt);
        }
    }

    /**
     * Under checked execution, a scheduling point of {@code kt}, the holder: the session may hand the turn to another
     * thread, or land a copy, before {@code kt} goes on. Without another candidate it returns at once.
     */
    void yieldPoint(KernelThread kt, String what) {
        if (kt.yieldDecided) {
            kt.yieldDecided = false;        // a compiled scheduling point decided before the call (yieldStackless)
            return;
        }
        if (kt.deferring) {
            String pending = kt.deferredYield;
            kt.deferredYield = what;        // decided behind the call (Strand.deferredPoint)
            if (pending == null) {
                return;
            }
            what = pending;                 // a second: the first is decided now, with the stack
        }
        yieldPointNow(kt, what);
    }

    /** Under checked execution: a deferred scheduling point of {@code kt} is decided now, before it waits. */
    void flushDeferred(KernelThread kt) {
        String pending = kt.deferredYield;
        if (pending != null) {
            kt.deferredYield = null;
            yieldPointNow(kt, pending);
        }
    }

    private void yieldPointNow(KernelThread kt, String what) {
        KernelThread next;
        synchronized (this) {
            if (!policy.mayHandOn(this, kt)) {
                return;
            }
            enqueueReady(kt);
            next = passTurn();
            if (next != kt) {
                policy.handedOn(kt, what, next);
            }
        }
        if (next != kt) {
            launch.run(next);
            awaitTurn(kt, this, Deadlines.NO_DEADLINE);
        }
        launch.monitor.checkAborted();
    }

    /**
     * Under checked execution, a compiled scheduling point of {@code kt}, the holder, before its call: the session
     * decides as at {@link #yieldPoint}, and a thread it switches from waits for the turn without a stack (it
     * resumes behind the decision). Either way the decision is spent: kt.yieldDecided, so that the call's own
     * scheduling point passes.
     *
     * @return {@code kt} when it goes on; else the thread that holds the turn now, which the caller runs (its
     *         strand unparked, or on the caller's strand) once kt's frame is kept
     */
    KernelThread yieldStackless(KernelThread kt, String what) {
        return yieldStackless(kt, what, true);
    }

    /** As {@link #yieldStackless(KernelThread, String)}; {@code beforeCall}: whether a call's own point follows. */
    KernelThread yieldStackless(KernelThread kt, String what, boolean beforeCall) {
        KernelThread next;
        synchronized (this) {
            kt.yieldDecided = beforeCall;
            if (!policy.mayHandOn(this, kt)) {
                return kt;
            }
            next = requeueLocked(kt);
            if (next == kt) {
                return kt;
            }
            policy.handedOn(kt, what, next);
        }
        return next;                        // not run yet: kt's step has not kept its frame (Strand runs it after)
    }

    /**
     * The launching thread's look at the turn, at each tick of an unchecked launch: a holder that has kept the turn
     * for FORWARD_PROGRESS_NANOS while the block's progress stood still, with other threads ready or unstarted, is
     * taken to wait for one of them outside jpipeline (a spin on a flag, a busy loop): the turn is released
     * (releaseTurn). A holder that computes long with nothing else to run is left alone.
     */
    void watchTurn(long now) {
        if (done || policy.ordersEveryThread()) {
            return;
        }
        KernelThread h = released ? null : holder;
        long p = progress();
        if (!released && h == null || h != watchedHolder || p != watchedProgress) {
            watchedHolder = h;
            watchedProgress = p;
            watchedSince = now;
        } else if (now - watchedSince >= FORWARD_PROGRESS_NANOS) {
            if (!released) {
                releaseTurn();
            } else {
                startMore();
            }
            watchedSince = now;
        }
    }

    /**
     * The block is released and nothing in it has moved for FORWARD_PROGRESS_NANOS while threads are still
     * unstarted: its running threads may all spin, waiting for one of those. Starts more of them, each on a platform
     * strand, twice as many as the last time (1, 2, 4, ...), so that a block of 1024 threads that all spin but one
     * reaches that one in about ten looks, without starting a thread per CUDA thread when one more would do.
     */
    private void startMore() {
        java.util.List<KernelThread> toStart = new java.util.ArrayList<>();
        synchronized (this) {
            startBatch = Math.min(block.size, Math.max(1, startBatch * 2));
            for (int i = 0; i < startBatch; i++) {
                KernelThread kt = startUnstartedLocked();
                if (kt == null) {
                    break;
                }
                toStart.add(kt);
            }
        }
        for (KernelThread kt : toStart) {
            launch.runOnPlatformStrand(kt);
        }
    }

    /**
     * Forward progress as on sm_70 and later (independent thread scheduling): every ready thread runs at once and
     * the next unstarted one starts (and the others after it, one at a time: startUnstartedLocked) on a strand of
     * its own, a platform thread (the holder that spins keeps its virtual thread's carrier, and every block's holder
     * may spin), beside the holder; from now on no thread of the block waits for a turn. A ready thread goes on on
     * its own virtual strand, which needs a free carrier. Cost: each thread that parks after the release keeps a
     * platform thread until it ends.
     */
    private void releaseTurn() {
        java.util.List<Thread> toUnpark = new java.util.ArrayList<>();
        java.util.List<KernelThread> toStart = new java.util.ArrayList<>();
        synchronized (this) {
            if (released || done || readyCount == 0 && nextRank >= block.size) {
                return;
            }
            released = true;
            holder = null;                      // nobody holds a turn now: a wait parks until its wake (mayRun)
            while (readyCount > 0) {
                KernelThread kt = takeReady(0);
                kt.state = KernelThread.RUNNING;
                if (kt.strand == null) {
                    toStart.add(kt);            // a compiled thread woken at a sync: it has no stack to go on on
                } else {
                    toUnpark.add(kt.strand.thread());
                }
            }
            KernelThread first = startUnstartedLocked();
            if (first != null) {
                toStart.add(first);
            }
        }
        for (Thread t : toUnpark) {
            LockSupport.unpark(t);
        }
        for (KernelThread kt : toStart) {
            launch.runOnPlatformStrand(kt);     // the spinning holders may keep every carrier
        }
    }

    /**
     * Under the lock, the turn released: the next unstarted thread, running, or null. Unstarted threads start one
     * at a time, as a thread of the block parks or finishes (a strand stays with a thread that parks), so that a
     * block of 1024 threads does not start 1023 threads at once.
     */
    private KernelThread startUnstartedLocked() {
        if (nextRank >= block.size || launch.aborted()) {
            return null;
        }
        KernelThread kt = new KernelThread(this, nextRank);
        threads[nextRank++] = kt;
        kt.state = KernelThread.RUNNING;
        return kt;
    }

    /** Whether the block's turn has been released (its threads run concurrently): for tests and reports. */
    boolean released() {
        return released;
    }

    /** The launch is aborted: every blocked thread is woken to unwind; unstarted threads are never started. */
    void abort() {
        Thread toUnpark = null;
        java.util.List<Thread> released = new java.util.ArrayList<>();
        java.util.List<KernelThread> stackless = new java.util.ArrayList<>();
        synchronized (this) {
            for (int r = 0; r < Math.min(nextRank, threads.length); r++) {     // a plain block keeps one
                KernelThread kt = threads[r];   // null: dropped unstarted by an earlier abort
                if (kt != null && kt.state == KernelThread.BLOCKED && kt.strand == null) {
                    KernelThread run = readyStackless(kt);      // it unwinds from its sync (runCompiledThread)
                    if (run != null) {
                        stackless.add(run);
                    }
                } else if (kt != null && kt.state == KernelThread.BLOCKED) {
                    Thread t = makeReady(kt);
                    if (this.released && t != null) {
                        released.add(t);        // each runs at once: every one must be unparked
                    } else {
                        toUnpark = t != null ? t : toUnpark;
                    }
                }
                if (kt != null && policy.ordersEveryThread() && kt.state != KernelThread.FINISHED
                    && kt.strand != null) {
                    LockSupport.unpark(kt.strand.thread());     // checked: it unwinds at once (unwindAtOnce)
                }
            }
        }
        if (toUnpark != null) {
            LockSupport.unpark(toUnpark);
        }
        for (Thread t : released) {
            LockSupport.unpark(t);
        }
        for (KernelThread kt : stackless) {
            runStackless(kt);
        }
    }

    /**
     * Under checked execution, once the launch is aborted, every waiting thread unwinds without waiting for the
     * turn: the holder may be stuck outside jpipeline (a Java lock that a waiting thread holds), so the one-at-a-time
     * rule gives way to letting every thread leave.
     */
    private boolean unwindAtOnce() {
        return policy.ordersEveryThread() && launch.aborted();
    }

    /** The thread holding the turn now, or null: read by the launching thread's watch. */
    KernelThread holderNow() {
        return holder;
    }

    /**
     * Under checked execution: which of the threads of ranks [first, first + span) (those named by {@code mask},
     * when not 0) have finished, described; null when none has.
     */
    synchronized String finishedAmong(int first, int span, int mask) {
        if (finishedCount == 0) {
            return null;
        }
        StringBuilder b = null;
        int n = 0;
        for (int r = first; r < first + span && r < nextRank; r++) {
            KernelThread kt = threads[r];
            if ((mask == 0 || (mask >>> (r - first) & 1) != 0) && kt != null && kt.state == KernelThread.FINISHED) {
                if (n++ < 4) {
                    b = (b == null ? new StringBuilder("thread ") : b.append(", thread ")).append(launch.threadIndex(r));
                }
            }
        }
        return b == null ? null : b + (n > 4 ? " and " + (n - 4) + " more, which exited," : " (exited)");
    }

    /** Under checked execution: whether the thread of block rank {@code rank} has finished. */
    synchronized boolean hasFinished(int rank) {
        return rank < nextRank && threads[rank] != null && threads[rank].state == KernelThread.FINISHED;
    }

    /** The holder's wait has ended: progress (called by the holder only). */
    void waitEnded() {
        waitsEnded++;
    }

    /** Changes whenever a wait of the block ends or a thread starts. */
    long progress() {
        return waitsEnded + nextRank;
    }

    /** Whether {@code kt}, which waited, may run: it holds the turn, or the turn is released and it was woken. */
    private boolean mayRun(KernelThread kt) {
        if (holder == kt) {
            return true;
        }
        if (!released) {
            return false;
        }
        synchronized (this) {
            return kt.state == KernelThread.RUNNING;
        }
    }

    /**
     * Under the lock: a blocked thread becomes ready, or the holder of an idle block, or (the turn released) runs
     * at once; returns its strand's thread to unpark, or null when it waits for the turn.
     */
    private Thread makeReady(KernelThread kt) {
        if (released) {
            kt.state = KernelThread.RUNNING;
            return kt.strand.thread();
        }
        if (holder == null) {
            kt.state = KernelThread.RUNNING;
            holder = kt;
            return kt.strand.thread();
        }
        enqueueReady(kt);
        return null;
    }

    /**
     * Under the lock, as the block would go idle: a compiled thread suspended without a stack at a pipeline wait, or
     * null. It calls its wait again with its stack (a strand of its own), where the wait watches the pipeline's
     * other participants as on strands: one whose thread ended without quit is abandoned, so the wait ends (with
     * its exception) instead of the block hanging. One such thread per idle moment, until every wait has its stack,
     * when the block is as it would be on strands.
     */
    private KernelThread stacklessWaiterLocked() {
        for (int r = 0; r < nextRank && r < threads.length; r++) {
            KernelThread kt = threads[r];
            if (kt != null && kt.state == KernelThread.BLOCKED && kt.strand == null && kt.pendingSync == null
                && kt.pendingNode != null) {
                return kt;
            }
        }
        return null;
    }

    /** Under the lock: {@code kt} waits for the turn, behind the threads already ready. */
    void enqueueReady(KernelThread kt) {
        kt.state = KernelThread.READY;
        int at = readyHead + readyCount++;
        ready[at >= ready.length ? at - ready.length : at] = kt;
    }

    /**
     * Under the lock: the turn leaves its holder. Picks the next holder (a new thread has no strand yet), or
     * leaves the block idle.
     */
    private KernelThread passTurn() {
        if (nextRank < block.size && launch.aborted()) {
            unfinished -= block.size - nextRank;        // never started: the abort stops the block here
            nextRank = block.size;
        }
        return policy.next(this);
    }

    /** Under the lock: FairTurns' pick (see the class comment), or null when the block goes idle. */
    KernelThread roundRobin() {
        boolean canStart = nextRank < block.size;
        if (readyCount == 0 && !canStart) {
            KernelThread waiter = released ? null : stacklessWaiterLocked();
            if (waiter != null) {
                waiter.waitWithStack = true;        // its wait again, as on strands (see stacklessWaiterLocked)
                waiter.state = KernelThread.RUNNING;
                holder = waiter;
                return waiter;
            }
            holder = null;
            return null;
        }
        return giveTurn(canStart ? readyCount : 0);     // round-robin: unstarted threads first, then in wake order
    }

    /** Under the lock: the turn goes to ready thread {@code choice}, or to a new thread when it is readyCount. */
    KernelThread giveTurn(int choice) {
        KernelThread next;
        if (choice == readyCount) {
            next = new KernelThread(this, nextRank);
            threads[nextRank++] = next;
        } else {
            next = takeReady(choice);
        }
        next.state = KernelThread.RUNNING;
        holder = next;
        return next;
    }

    /** Under the lock: the block goes idle (nobody holds the turn). */
    void goIdle() {
        holder = null;
    }

    /** Under the lock: threads ready for the turn. */
    int readyCount() {
        return readyCount;
    }

    /** Under the lock: whether a thread of the block has not started yet. */
    boolean canStart() {
        return nextRank < block.size;
    }

    /** Under the lock: threads started, by rank below this. */
    int started() {
        return nextRank;
    }

    /** Under the lock: the started thread of rank {@code r}, or null (dropped unstarted by an abort). */
    KernelThread thread(int r) {
        return threads[r];
    }

    /** Under the lock: threads not finished, started or not. */
    int unfinished() {
        return unfinished;
    }

    private KernelThread takeReady(int index) {
        KernelThread[] q = ready;
        int n = q.length;
        int at = readyHead + index;
        at = at >= n ? at - n : at;
        KernelThread kt = q[at];
        // close the gap from the front, O(1) for the oldest: entries [head, at) move one place back, in at most
        // two block copies (a checked schedule takes at random indices: element by element, each store's card
        // mark made the shift the costliest step of a schedule)
        int head = readyHead;
        if (at >= head) {
            System.arraycopy(q, head, q, head + 1, at - head);
        } else {
            System.arraycopy(q, 0, q, 1, at);
            q[0] = q[n - 1];
            System.arraycopy(q, head, q, head + 1, n - 1 - head);
        }
        q[readyHead] = null;
        readyHead = readyHead + 1 == n ? 0 : readyHead + 1;
        readyCount--;
        return kt;
    }

    // ---------------------------------------------------------------------------------------------------------
    // The hang detector's view (the launching thread)

    /** The block has no thread of its own: its threads' strands come and go. */
    @Override
    public Thread thread() {
        return null;
    }

    @Override
    public boolean isGone() {
        return done;
    }

    /** While the block is idle: what each of its blocked threads waits in; null while a thread runs. */
    @Override
    public String stalledIn() {
        if (released && !done) {
            synchronized (this) {
                for (int r = 0; r < nextRank; r++) {
                    KernelThread kt = threads[r];
                    if (kt != null && (kt.state == KernelThread.RUNNING || kt.state == KernelThread.READY)) {
                        return null;
                    }
                }
                return nextRank < block.size ? null : stalledInLocked();
            }
        }
        if (holder != null || done) {
            return null;
        }
        String report;
        synchronized (this) {
            report = stalledInLocked();
        }
        return holder != null ? null : report;
    }

    /** Under the lock: what each blocked thread waits in. */
    String stalledInLocked() {
        StringBuilder b = new StringBuilder("every started thread is blocked");
        int started = 0;
        int left = 0;
        ThreadLines lines = new ThreadLines(b, launch);
        for (int r = 0; r < nextRank && threads[r] != null; r++, started++) {   // null: dropped by an abort
            KernelThread kt = threads[r];
            String in = kt.stalledIn();
            if (kt.isGone()) {
                left++;
            } else {
                lines.add(r, in != null ? in : "blocked");
            }
        }
        lines.flush();
        if (started < block.size) {
            b.append("\n    (").append(block.size - started).append(" not started)");
        }
        if (left > 0) {
            b.append("\n    (").append(left).append(left == 1 ? " has left)" : " have left)");
        }
        return b.toString();
    }

    @Override
    public Throwable fault() {
        return null;
    }

    /** The block's threads always finish through their strands: nothing to do on its behalf. */
    @Override
    public void abandon() {
    }

    @Override
    public String name() {
        return "block " + block.blockIdx;
    }
}
