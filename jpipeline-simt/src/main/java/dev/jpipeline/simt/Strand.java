package dev.jpipeline.simt;

import dev.jpipeline.internal.BatchSequence;
import dev.jpipeline.internal.checked.Interleaver;
import dev.jpipeline.internal.wait.LogicalThread;
import dev.jpipeline.internal.wait.ParkListener;
import java.time.Instant;
import java.util.concurrent.locks.LockSupport;

/**
 * A stack that CUDA threads run on: a virtual thread that runs a launch's threads as plain calls, one after another,
 * and stays with a thread that blocks until it finishes (see {@link BlockScheduler}). Its context, its lane sequence
 * and its scoped-value bindings are made once and re-pointed at each thread it runs, so that a thread that never
 * blocks costs a call, not a thread.
 *
 * <p>As the park listener of its virtual thread it turns every jpipeline wait of its thread into a hand-over of the
 * block's turn ({@link BlockScheduler#park}) and every signal of such a wait into a {@link BlockScheduler#wake}. When
 * it has nothing to run it waits in the launch's pool of idle strands.
 *
 * <p>Interrupt status: the Java interrupt status of the strand's virtual thread is that of the CUDA thread it runs.
 * It starts clear, the runtime's waits keep it (they neither end early nor spin on it: see
 * {@link BlockScheduler#park}), and it ends with the CUDA thread ({@code runThread}, {@code Launch.idle}).
 */
final class Strand implements ParkListener, Runnable {

    /** Strands this JVM has made, for tests and diagnostics: a thread that waits with its stack needs one more. */
    static final java.util.concurrent.atomic.LongAdder MADE = new java.util.concurrent.atomic.LongAdder();

    private final Launch launch;
    /**
     * Made by the strand itself when it starts, in its carrier's allocation buffer: contexts made one after another
     * by one thread lie side by side, and the strands of two cores writing each its own context at every CUDA
     * thread (its rank and index) would then share a cache line. Confined to this strand.
     */
    private KernelContext context;
    private final Thread thread;
    /** The thread it runs now: written by this strand, read by wakers (a stale read gives a spurious wake). */
    private volatile KernelThread current;
    /** The thread it was handed while idle or before it started: written by the assigner before it unparks. */
    private volatile KernelThread assigned;
    /** The per-thread frames of the compiled blocks it runs, kept for its next block. Confined to this strand. */
    private RegionFrames frames;

    Strand(Launch launch, KernelThread first) {
        this(launch, first, false);
    }

    /**
     * @param platform whether it runs on a platform thread instead of a virtual one: for the threads a released
     *                 block starts (BlockScheduler.releaseTurn), whose spinning holder keeps its carrier (a virtual
     *                 thread gives its carrier back only when it parks), so that they run even when every carrier
     *                 is held by a spinning thread
     */
    Strand(Launch launch, KernelThread first, boolean platform) {
        MADE.increment();
        this.launch = launch;
        this.assigned = first;
        this.thread = platform ? Thread.ofPlatform().daemon().name("jpipeline kernel strand (released block)")
            .unstarted(this) : Thread.ofVirtual().name("jpipeline kernel strand").unstarted(this);
    }

    Thread thread() {
        return thread;
    }

    void start() {
        thread.start();
    }

    /** Hands an idle strand a thread to run. */
    void assign(KernelThread kt) {
        assigned = kt;
        LockSupport.unpark(thread);
    }

    /** Takes the assigned thread, if any (called by this strand). */
    KernelThread takeAssigned() {
        KernelThread kt = assigned;
        if (kt != null) {
            assigned = null;
        }
        return kt;
    }

    @Override
    public void run() {
        context = new KernelContext(launch);
        frames = new RegionFrames();
        ScopedValue.where(KernelContext.CURRENT, context)
            .where(ParkListener.CURRENT, this)
            .where(BatchSequence.CURRENT, context.lane())
            .run(this::serve);
    }

    private void serve() {
        KernelThread kt = takeAssigned();
        while (kt != null) {
            kt = runThread(kt);
            if (kt == null) {
                kt = launch.idle(this);
            }
        }
    }

    /**
     * Runs one CUDA thread to its end; returns what this strand runs next, or null. The thread starts with its
     * interrupt status clear: a status that an earlier thread of this strand left set (the usual idiom after catching
     * an {@code InterruptedException}), or that reached the strand while idle, is not this thread's.
     */
    private KernelThread runThread(KernelThread kt) {
        if (launch.plain) {
            return launch.compiled != null ? runCompiledBlock(kt) : runPlainBlock(kt);
        }
        if (launch.compiled != null) {
            return runCompiledThread(kt);
        }
        kt.strand = this;
        current = kt;
        context.bind(kt);
        Thread.interrupted();
        try {
            launch.body.run(context);
        } catch (KernelAbortedException aborted) {
            // the launch has already failed or hung; its report says why
        } catch (Throwable t) {
            launch.failed(kt, t);
        } finally {
            kt.finish();
            current = null;
        }
        return kt.scheduler.finished(kt);       // a status it left set: dropped by the next start, or Launch.idle
    }

    /**
     * Runs the block whose first thread is {@code first}, of a kernel that reaches no resumption point
     * ({@link ResumptionScan}), as a loop of calls, rank after rank: none of its threads can block, so none needs a
     * thread object, the turn's lock or a volatile write of its own. A thread that throws fails the launch as in
     * {@link #runThread}, and no further thread of the block starts; an abort from elsewhere stops the block at its
     * next warp. Returns what this strand runs next (the slot's next block's first thread), or null.
     */
    private KernelThread runPlainBlock(KernelThread first) {
        BlockScheduler scheduler = first.scheduler;
        first.strand = this;
        current = first;
        int size = scheduler.block.size;
        KernelBody body = launch.body;
        KernelContext ctx = context;
        ctx.bindPlainBlock(first);
        // a plain kernel cannot read or set its interrupt status (the scan admits no Thread call): one that reached
        // the strand before the block is dropped here, as each thread's start would drop it
        Thread.interrupted();
        try {
            // an abort from elsewhere (another block's failure, a hang) is seen at each warp's first thread
            for (int rank = 0; rank < size; rank++) {
                if ((rank & (Kernel.WARP_SIZE - 1)) == 0 && launch.aborted()) {
                    break;
                }
                ctx.bindPlainRank(rank);
                try {
                    body.run(ctx);
                } catch (KernelAbortedException aborted) {
                    break;                      // the launch has already failed or hung; its report says why
                } catch (Throwable t) {
                    launch.failed(new KernelThread(scheduler, rank), t);
                    break;                      // no further thread starts once the launch has failed
                }
            }
        } finally {
            first.finish();
            current = null;
        }
        launch.loopBlockRan(scheduler.slot, false, true);
        return scheduler.finishedPlain(first);
    }

    /**
     * Runs the block whose first thread is {@code first} through its kernel's compiled regions ({@link RegionCompiler}):
     * each round runs every thread that has not returned from where it stopped to its next {@code __syncthreads}
     * (or its end), in sweeps over the block while some thread yields in a long loop (so that a thread that spins on
     * a flag another thread of the block sets lets that thread run), and the block goes on once every thread has
     * stopped. A round in which some threads stopped at a
     * sync while others returned is the hang {@link KernelContext#syncThreads()} describes (the threads that returned
     * still count): the launch fails at once with the report a hang of strands gives. A thread that throws fails the
     * launch as in {@link #runThread} and stops the block; an abort from elsewhere stops it at its next warp. Returns
     * what this strand runs next, or null.
     */
    private KernelThread runCompiledBlock(KernelThread first) {
        BlockScheduler scheduler = first.scheduler;
        first.strand = this;
        current = first;
        int size = scheduler.block.size;
        RegionCompiler.Compiled kernel = launch.compiled;
        KernelContext ctx = context;
        ctx.bindPlainBlock(first);
        Thread.interrupted();               // as in runPlainBlock: a compiled kernel cannot read its status
        int width = kernel.syncs() + kernel.yields() == 0 ? 0 : kernel.width();
        int[] states = width == 0 ? frames.unusedStates() : frames.states(size);  // a plain loop reads none
        boolean unwind = false;
        long[] prims = frames.prims(size * width);
        Object[] refs = frames.refs(size * width);
        try {
            for (;;) {
                int yielded = (int) kernel.region().invokeExact(launch.captured, ctx, prims, refs, states, width,
                    size);
                if (yielded == RegionCompiler.ABORTED) {
                    unwind = true;
                    break;
                }
                int warpsPassed = kernel.syncs() > kernel.blockSyncs()
                    ? passWarpSyncs(states, size, kernel.blockSyncs()) : 0;
                if (yielded > 0 || warpsPassed > 0) {
                    continue;               // a sweep again: threads that yielded in a loop or passed a __syncwarp
                }
                if (width == 0) {
                    break;                  // no sync and no loop: every thread has run to its end
                }
                int arrived = 0;
                boolean atWarpSync = false;
                for (int r = 0; r < size; r++) {
                    arrived += states[r] < RegionCompiler.RETURNED ? 1 : 0;
                    atWarpSync |= -states[r] - 1 > kernel.blockSyncs();
                }
                if (arrived == 0) {
                    break;                  // every thread returned
                }
                if (arrived < size || atWarpSync) {
                    launch.strandedAtSync(scheduler, states, kernel.blockSyncs());
                    unwind = true;
                    break;
                }
                for (int r = 0; r < size; r++) {
                    states[r] = -states[r] - 1;     // the sync each arrived at, -(k + 1): resume behind it
                }
            }
        } catch (KernelAbortedException aborted) {
            if (width > 0) {
                states[ctx.threadRank()] = RegionCompiler.RETURNED;    // it has unwound already
            }
            unwind = true;                  // the launch has already failed or hung; its report says why
        } catch (Throwable t) {
            if (width > 0) {
                states[ctx.threadRank()] = RegionCompiler.RETURNED;    // it has unwound (its finally blocks ran)
            }
            launch.failed(new KernelThread(scheduler, ctx.threadRank()), t);
            unwind = true;
        } finally {
            if (unwind && kernel.syncs() > 0) {
                unwindStopped(kernel, ctx, states, prims, refs, width, size);
            }
            frames.clear(size * width);
            first.finish();
            current = null;
        }
        launch.loopBlockRan(scheduler.slot, true, kernel.syncs() == 0);
        return scheduler.finishedPlain(first);
    }

    /**
     * The launch has failed or hung: each thread of the block stopped at a sync resumes by unwinding, its sync
     * throwing KernelAbortedException (RegionCompiler.UNWIND), as a parked thread of a failed launch does on strands,
     * so that its finally blocks run; so does each thread that has passed a sync and not run since (the sweep had not
     * reached it: on strands it has left its wait). What it throws is dropped, as on strands (the launch has failed
     * already). A thread that yielded in a loop, or never started, is not resumed.
     */
    private void unwindStopped(RegionCompiler.Compiled kernel, KernelContext ctx, int[] states, long[] prims,
                                      Object[] refs, int width, int size) {
        for (int r = 0; r < size; r++) {
            int sync;
            if (states[r] < RegionCompiler.RETURNED) {
                sync = -states[r] - 1;      // stopped at sync k: -(k + 1)
            } else if (states[r] > 0 && states[r] <= kernel.syncs()) {
                sync = states[r];           // past sync k, not run yet: on strands it has left the wait and unwinds
            } else {
                continue;                   // returned, yielded in a loop or never started
            }
            states[r] = RegionCompiler.RETURNED;
            ctx.bindPlainRank(r);
            try {
                int ignored = (int) kernel.step().invokeExact(launch.captured, ctx, prims, refs, r * width,
                    sync + RegionCompiler.UNWIND);
            } catch (Throwable unwound) {
                // KernelAbortedException, or what its finally blocks threw: the launch has failed already
            }
        }
    }

    /**
     * Runs {@code kt}, a thread of a kernel compiled at its syncs whose other waits block (a pipeline, a barrier, a
     * group: ResumptionScan's verdict onScheduler), from where it stopped, on its block's scheduler: between syncs
     * as a thread of strands (a wait parks it with this strand, which stays with it), and at a sync without a stack.
     * It arrives at the sync's barrier; unless that completes the sync it is suspended (BlockScheduler.suspend): its
     * locals are in its frame, its node on the barrier's waiters, and this strand goes on with another thread. The
     * barrier's signal wakes it, and whichever strand takes it up resumes it behind the sync. So a block whose
     * threads meet at syncs needs no stack per thread, as a compiled block run as a loop (runCompiledBlock) does not.
     *
     * <p>It runs in its own context, bound in the strand's scoped values while it runs, so that what its frame keeps
     * of the context (ctx.block(), a tile, its lane sequence) stays its own on another strand. An abort resumes a
     * suspended thread by unwinding from its sync (RegionCompiler.UNWIND), so that its finally blocks run. Returns
     * what this strand runs next, or null.
     */
    private KernelThread runCompiledThread(KernelThread kt) {
        kt.strand = this;
        current = kt;
        KernelContext ctx = kt.context;
        if (ctx == null) {
            ctx = new KernelContext(launch);
            ctx.bind(kt);
            kt.context = ctx;
            Thread.interrupted();       // a new thread starts with its status clear (runThread)
        } else {
            Thread.interrupted();       // what the strand's last thread left set is not kt's
            if (kt.interruptedWhileSuspended) {
                kt.interruptedWhileSuspended = false;
                Thread.currentThread().interrupt();
            }
        }
        if (kt.prims == null) {
            int width = launch.compiled.width();
            kt.prims = new long[width];
            kt.refs = new Object[width];
        }
        KernelContext own = ctx;
        boolean finished = ScopedValue.where(KernelContext.CURRENT, own).where(BatchSequence.CURRENT, own.lane())
            .call(() -> stepCompiled(kt, own));
        current = null;
        if (!finished) {
            KernelThread next = handedOn;   // kt is suspended: this strand goes on with another thread, or idles
            handedOn = null;
            if (next != null && next.strand != null) {
                LockSupport.unpark(next.strand.thread());   // a thread with a stack of its own holds the turn now
                return null;
            }
            return next;
        }
        return kt.scheduler.finished(kt);
    }

    /**
     * Runs {@code kt}'s steps until it finishes (true) or is suspended at a sync (false: what this strand runs next
     * is in handedOn).
     */
    private boolean stepCompiled(KernelThread kt, KernelContext ctx) {
        RegionCompiler.Compiled kernel = launch.compiled;
        BlockScheduler scheduler = kt.scheduler;
        try {
            if (kt.pendingSync != null && !passedSync(kt)) {
                return false;
            }
            int state = kt.resumeAt;
            if (kt.pendingNode != null) {       // resumed at a wait: it calls the wait again
                resumedFromWait(kt);
                if (launch.aborted()) {
                    state += RegionCompiler.UNWIND;
                }
            } else if (state > kernel.syncs() + kernel.waits() && state < RegionCompiler.UNWIND && launch.aborted()) {
                state += RegionCompiler.UNWIND; // resumed at a scheduling point of a launch that has failed
            }
            for (;;) {
                int result = (int) kernel.step().invokeExact(launch.captured, ctx, kt.prims, kt.refs, 0, state);
                if (result == RegionCompiler.RETURNED) {
                    break;
                }
                if (result > kernel.syncs() + kernel.waits()
                    && result <= kernel.syncs() + kernel.waits() + kernel.schedulingPoints()) {
                    kt.resumeAt = result;   // handed the turn on at a scheduling point (handedOn is set)
                    kt.interruptedWhileSuspended = Thread.interrupted();
                    return false;
                }
                if (result > kernel.syncs() + kernel.waits()) {
                    kt.resumeAt = result;   // a loop head: the block's other threads run first, if any can
                    if (!yielded(kt)) {
                        return false;
                    }
                    state = result;
                    continue;
                }
                if (result > kernel.syncs()) {  // suspended at a wait (its helper pushed its node: park)
                    kt.resumeAt = result;
                    kt.interruptedWhileSuspended = Thread.interrupted();
                    KernelThread next = scheduler.suspend(kt);
                    if (next != kt) {
                        handedOn = next;
                        return false;
                    }
                    kt.strand = this;           // it goes on here (a wake came first, or its wait takes its stack)
                    resumedFromWait(kt);        // a wake came first: it calls the wait again at once
                    if (kt.interruptedWhileSuspended) {
                        kt.interruptedWhileSuspended = false;
                        Thread.currentThread().interrupt();
                    }
                    state = result;
                    continue;
                }
                SyncSite site = result <= kernel.blockSyncs() ? scheduler.block.syncThreads
                    : scheduler.block.warps[kt.rank / Kernel.WARP_SIZE].sync;
                kt.resumeAt = result;
                kt.pendingSync = site;
                kt.syncArrived = false;
                if (!passedSync(kt)) {
                    return false;
                }
                state = kt.resumeAt;
            }
        } catch (KernelAbortedException aborted) {
            // the launch has already failed or hung; its report says why
        } catch (Throwable t) {
            launch.failed(kt, t);
        }
        CompiledMake.abandon(kt);           // (only where it ended inside a make: never on a kernel's usual paths)
        kt.finish();
        kt.prims = null;
        kt.refs = null;
        kt.context = null;
        return true;
    }

    /**
     * {@code kt} has run a loop long enough (RegionCompiler.YIELD_EVERY loop heads): it hands its turn on without a
     * stack, so that a spin on a flag another thread of the block sets lets that thread run, as on strands a release
     * of the turn would (BlockScheduler.watchTurn) but at once. Whether it goes on (no other thread can run).
     */
    private boolean yielded(KernelThread kt) {
        kt.interruptedWhileSuspended = Thread.interrupted();
        KernelThread next = kt.scheduler.yieldTurn(kt);
        if (next == kt) {
            kt.strand = this;
            if (kt.interruptedWhileSuspended) {
                kt.interruptedWhileSuspended = false;
                Thread.currentThread().interrupt();
            }
            return true;
        }
        handedOn = next;
        return false;
    }

    /** {@code kt} resumes at the wait it was suspended at: its node is no longer needed, and its wait has ended. */
    private static void resumedFromWait(KernelThread kt) {
        if (kt.pendingNode != null && !kt.pendingNode.isDetached()) {
            kt.pendingNode.cancel();
        }
        if (kt.checked != null) {
            kt.yieldDecided = true;     // its call again makes no decision: on strands a wait polls on, unscheduled
        }
        kt.pendingNode = null;
        kt.blockedIn(null);
        kt.scheduler.waitEnded();
    }

    // Waits without a stack (RegionCompiler.isWait): the compiled wait calls its helper, which calls the wait with
    // tryingWithoutStack set; where the wait would park, park pushes a node of the thread's own on the waitable and
    // throws SUSPENSION, which the helper turns into false: the step then keeps the thread's locals and returns the
    // wait's state, and the thread is suspended (stepCompiled). It resumes by calling the wait again.

    /** Set by a wait helper around its wait: park suspends instead (confined to this strand). */
    private boolean tryingWithoutStack;
    /** Set by park as it suspends: the wait's end that follows (waitEnded) is not the thread's (confined). */
    private boolean suspending;

    /** What unwinds a wait that suspends its thread: made once, without a stack trace. */
    private static final RuntimeException SUSPENSION = new RuntimeException("suspended without a stack", null,
        false, false) {
    };

    /** {@code pipe.producerAcquire()} at a compiled wait: false when the thread is suspended (class data of step). */
    static boolean producerAcquireWithoutStack(dev.jpipeline.Pipeline pipe) {
        return withoutStack(pipe, PRODUCER_ACQUIRE);
    }

    /** {@code pipe.consumerWait()} at a compiled wait: false when the thread is suspended (class data of step). */
    static boolean consumerWaitWithoutStack(dev.jpipeline.Pipeline pipe) {
        return withoutStack(pipe, CONSUMER_WAIT);
    }

    private static final java.util.function.Consumer<dev.jpipeline.Pipeline> PRODUCER_ACQUIRE =
        dev.jpipeline.Pipeline::producerAcquire;
    private static final java.util.function.Consumer<dev.jpipeline.Pipeline> CONSUMER_WAIT =
        dev.jpipeline.Pipeline::consumerWait;

    /** Calls {@code wait} on {@code pipe}, suspending the thread where it would park (see above). */
    private static boolean withoutStack(dev.jpipeline.Pipeline pipe,
                                        java.util.function.Consumer<dev.jpipeline.Pipeline> wait) {
        Strand s = suspendable();
        if (s == null) {
            wait.accept(pipe);
            return true;
        }
        s.tryingWithoutStack = true;
        try {
            wait.accept(pipe);
            return true;
        } catch (RuntimeException e) {
            if (e == SUSPENSION) {
                return false;
            }
            throw e;
        } finally {
            s.tryingWithoutStack = false;
        }
    }

    /** The strand of the compiled thread calling, when it may suspend at a wait (not once its block is released). */
    private static Strand suspendable() {
        if (!(ParkListener.current() instanceof Strand s) || s.launch.compiled == null || s.launch.plain
            || s.current == null || s.current.scheduler.released()) {
            return null;
        }
        if (s.current.waitWithStack) {
            s.current.waitWithStack = false;    // this once (BlockScheduler.stacklessWaiterLocked)
            return null;
        }
        return s;
    }

    /**
     * A compiled scheduling point under checked execution (class data of step, RegionCompiler.isSchedulingPoint):
     * whether the thread goes on to the call; false when it has handed the turn on (handedOn holds what its strand
     * runs next). A decision made already (the thread resumes at a wait it calls again) is not made twice.
     */
    static boolean schedulingPoint(KernelContext ctx, String what) {
        KernelThread kt = ctx.thread();
        kt.deferring = false;               // a deferring call that threw is over
        kt.deferredYield = null;
        if (kt.yieldDecided || kt.checked == null) {
            return true;
        }
        return decide(kt, what, true);
    }

    /**
     * A scheduling point's decision for {@code kt} ({@code beforeCall}: a call's own point follows): whether it goes
     * on; if not, what its strand runs next is in handedOn.
     */
    private static boolean decide(KernelThread kt, String what, boolean beforeCall) {
        Strand s = (Strand) ParkListener.current();
        KernelThread next = kt.scheduler.yieldStackless(kt, what, beforeCall);
        if (next == kt) {
            kt.strand = s;
            s.launch.monitor.checkAborted();
            return true;
        }
        s.handedOn = next;
        return false;
    }

    /**
     * A compiled deferring call's first scheduling point (RegionCompiler.isDeferringCall): as
     * {@link #schedulingPoint}, and the call's later points wait for {@link #deferredPoint} behind it.
     */
    static boolean deferringPoint(KernelContext ctx, String what) {
        boolean goesOn = schedulingPoint(ctx, what);
        KernelThread kt = ctx.thread();
        kt.deferring = kt.checked != null;  // (kt runs nowhere else yet: its strand hands the turn on after)
        return goesOn;
    }

    /** Behind a compiled deferring call: its deferred scheduling point, if any, decided without a stack. */
    static boolean deferredPoint(KernelContext ctx) {
        KernelThread kt = ctx.thread();
        kt.deferring = false;
        String what = kt.deferredYield;
        if (what == null) {
            return true;
        }
        kt.deferredYield = null;
        return decide(kt, what, false);
    }

    /** Behind a compiled scheduling point's call: its decision is spent, used by the call or not. */
    static void schedulingPointPassed(KernelContext ctx) {
        ctx.thread().yieldDecided = false;
    }

    /** What stepCompiled hands this strand when its thread is suspended: confined to this strand. */
    private KernelThread handedOn;

    /**
     * Whether {@code kt} has passed its pending sync (its resumeAt is then the state behind the sync, plus UNWIND
     * when the launch has been aborted); if not, it has been suspended, and handedOn holds what this strand runs
     * next.
     */
    private boolean passedSync(KernelThread kt) {
        KernelThread next = awaitSync(kt);
        if (next == kt) {
            return true;
        }
        handedOn = next;
        return false;
    }

    /**
     * {@code kt} has arrived at its pending sync: returns {@code kt} once the sync has completed (its state is then
     * the one behind the sync, or that plus UNWIND when the launch has been aborted), else suspends it and returns
     * what this strand runs next (null when nothing).
     */
    private KernelThread awaitSync(KernelThread kt) {
        SyncSite site = kt.pendingSync;
        dev.jpipeline.internal.PhaseBarrier barrier = site.barrier();
        if (!kt.syncArrived) {
            if (site.check != null) {           // checked: a scheduling point, then the sync check, as on strands
                KernelThread next = kt.yieldDecided ? kt : kt.scheduler.yieldStackless(kt, site.name());
                if (next != kt) {
                    return next;                // it arrives when it resumes, its decision made
                }
                kt.yieldDecided = false;
                kt.strand = this;
                if (launch.aborted()) {
                    kt.resumeAt += RegionCompiler.UNWIND;
                    kt.pendingSync = null;
                    CompiledMake.abandon(kt);   // a make whose sync this was ends, as a sync that throws ends it
                    return kt;
                }
                site.check.arrive(kt, launch.compiled.site(kt.resumeAt));
            }
            kt.pendingRound = barrier.arrive(1);
            kt.syncArrived = true;
            if (site.check != null) {
                site.arrived(kt, kt.pendingRound);
            }
        }
        for (;;) {
            boolean aborted = launch.aborted();
            if (aborted || barrier.isComplete(kt.pendingRound)) {
                if (aborted) {
                    kt.resumeAt += RegionCompiler.UNWIND;  // it unwinds from the sync, as a wait of strands would
                    CompiledMake.abandon(kt);
                } else if (site.check != null) {
                    site.passed(kt, kt.pendingRound);
                }
                if (kt.pendingNode != null && !kt.pendingNode.isDetached()) {
                    kt.pendingNode.cancel();
                }
                kt.pendingNode = null;
                kt.pendingSync = null;
                kt.blockedIn(null);
                kt.scheduler.waitEnded();
                return kt;
            }
            if (kt.pendingNode == null || kt.pendingNode.isDetached()) {
                if (kt.stacklessWake == null) {
                    kt.stacklessWake = new StacklessWake(kt);
                }
                kt.pendingNode = dev.jpipeline.internal.wait.Waiter.stackless(kt.stacklessWake);
                barrier.enqueue(kt.pendingNode);
                continue;                       // polls again before it gives its stack up (Waiter: Dekker)
            }
            kt.blockedIn(site);
            kt.interruptedWhileSuspended = Thread.interrupted();
            KernelThread next = kt.scheduler.suspend(kt);
            if (next != kt) {
                return next;
            }
            kt.strand = this;
            if (kt.interruptedWhileSuspended) { // a wake came first: it goes on with its own status
                kt.interruptedWhileSuspended = false;
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Wakes a thread suspended at a sync without a stack: the signal of its node on the sync's barrier. */
    private record StacklessWake(KernelThread kt) implements ParkListener {
        @Override
        public void parking(Object site) {
        }

        @Override
        public void unparked() {
        }

        @Override
        public void wake(Thread thread) {
            kt.scheduler.wake(kt);
        }
    }

    /**
     * Lets through each warp of a compiled block whose lanes have all arrived at a {@code __syncwarp} (state
     * -(k + 1) with k past the block's __syncthreads points): they resume behind it in the next sweep. A lane that
     * has returned still counts, as on strands, so its warp stays (the round's end reports it).
     *
     * @return how many warps it let through
     */
    private static int passWarpSyncs(int[] states, int size, int blockSyncs) {
        int passed = 0;
        for (int first = 0; first < size; first += Kernel.WARP_SIZE) {
            int end = Math.min(size, first + Kernel.WARP_SIZE);
            boolean all = true;
            for (int r = first; r < end && all; r++) {
                all = -states[r] - 1 > blockSyncs;
            }
            if (all) {
                for (int r = first; r < end; r++) {
                    states[r] = -states[r] - 1;
                }
                passed++;
            }
        }
        return passed;
    }

    @Override
    public void parking(Object site) {
        launch.monitor.checkAborted();
        current.blockedIn(site);
    }

    @Override
    public void park(Object blocker, long limit, long deadline) {
        KernelThread kt = current;
        if (kt.deferredYield != null) {
            kt.scheduler.flushDeferred(kt);     // on strands it was decided before this wait
        }
        // not where a signal may miss a node just pushed (a waitable whose waits park bounded): there the thread
        // waits with its stack, as on strands, since a suspended thread has no bounded park to look again
        if (tryingWithoutStack && blocker instanceof dev.jpipeline.internal.wait.Waitable waitable
            && deadline == dev.jpipeline.internal.wait.Deadlines.NO_DEADLINE && !waitable.signalsMayMissAPush()) {
            tryingWithoutStack = false;
            if (kt.stacklessWake == null) {
                kt.stacklessWake = new StacklessWake(kt);
            }
            kt.pendingNode = dev.jpipeline.internal.wait.Waiter.stackless(kt.stacklessWake);
            waitable.enqueue(kt.pendingNode);   // a signal since the wait's own poll woke its node: kt's permit
            suspending = true;
            throw SUSPENSION;
        }
        kt.scheduler.park(kt, blocker, kt.checked == null ? limit : deadline);   // checked: it orders every wake
    }

    /** Checked execution's virtual clock, else the system's. */
    @Override
    public long nanoTime() {
        CheckedLaunch checked = launch.checked;
        return checked == null ? System.nanoTime() : checked.session.nanoTime();
    }

    /** Checked execution's: the wall clock at the run's start plus virtual time. */
    @Override
    public Instant instantNow() {
        CheckedLaunch checked = launch.checked;
        return checked == null ? Instant.now() : checked.session.instantNow();
    }

    @Override
    public Interleaver interleaver() {
        return launch.checked;
    }

    /** Woken: it may park again in the same wait (a timed look at its clock), so it still counts as blocked. */
    @Override
    public void unparked() {
        launch.monitor.checkAborted();
    }

    /** Its wait has ended: it runs again, which is progress for the launch. */
    @Override
    public void waitEnded() {
        if (suspending) {
            suspending = false;         // kt waits on, suspended: what it waits in stays for its hang report
            return;
        }
        KernelThread kt = current;
        kt.blockedIn(null);
        kt.scheduler.waitEnded();
    }

    @Override
    public void wake(Thread t) {
        KernelThread kt = current;
        if (kt != null) {
            kt.scheduler.wake(kt);
        }
    }

    @Override
    public LogicalThread logicalThread() {
        return current;
    }
}
