package dev.jpipeline.simt;

import dev.jpipeline.internal.HangDetector;
import dev.jpipeline.internal.wait.LogicalThread;
import dev.jpipeline.internal.wait.ParkListener;
import java.util.ArrayList;
import java.util.List;
import dev.jpipeline.internal.wait.WaitSite;

/**
 * One CUDA thread of a launch: its place in its block's scheduler, what it waits in (for its block's hang report),
 * and the logical owner of the pipeline handles it makes (its strand outlives it: see {@link Strand}).
 *
 * <pre>
 * Scheduling state (BlockScheduler): RUNNING while it holds its block's turn, READY while it waits for the turn
 * after a wake, BLOCKED while parked with nothing to wake it yet, FINISHED once its body has returned. state and
 * permit are guarded by the scheduler's lock; permit is a wake that came while it was RUNNING (before it parked), so
 * that its next park returns at once, as LockSupport's permit does.
 * Departures: the pipeline handles it makes register their departure (LogicalThread.onEnd), and its end runs them
 * while it still holds the turn, so a peer waiting for its arrivals is released at that point in every run, as
 * libcu++'s destructor quits an un-quit pipeline; written and run by its own strand only.
 * </pre>
 */
final class KernelThread implements LogicalThread {

    static final int RUNNING = 0;
    static final int READY = 1;
    static final int BLOCKED = 2;
    static final int FINISHED = 3;

    final BlockScheduler scheduler;
    final int rank;
    /** The launch's checked execution, or null: read on every accessor and sync. */
    final CheckedLaunch checked;
    /** The strand that runs it: set when it first takes the turn, before its body runs. */
    volatile Strand strand;
    /** Guarded by the scheduler's lock. */
    int state = READY;
    /** Guarded by the scheduler's lock. */
    boolean permit;
    /** What it is parked in, or null while it runs: written by its strand, read by the hang detector. */
    private volatile Object blockedIn;
    /** Set once its body has returned (or thrown): read by the hang detector and by its pipeline handles. */
    private volatile boolean finished;

    // A compiled thread on the block's scheduler (Strand.runCompiledThread): what it keeps while it is suspended
    // without a stack. Written by the strand that runs it, read by the next strand that runs it: the scheduler's
    // lock, which hands it from one to the other, orders them.
    /** Its own context, made when it first runs: the objects its frame keeps (ctx.block(), ...) name it. */
    KernelContext context;
    /** The step state it resumes from: 0 before it starts, k behind sync k. */
    int resumeAt;
    /** Its frame: the locals that live across its syncs (RegionCompiler), made at its first run. */
    long[] prims;
    Object[] refs;
    /** The sync it is suspended at (its barrier and round), or null; its node on the barrier's waiters, or null. */
    SyncSite pendingSync;
    int pendingRound;
    /** Whether it has arrived at pendingSync's barrier (under checked execution it decides first). */
    boolean syncArrived;
    dev.jpipeline.internal.wait.Waiter pendingNode;
    /**
     * Under checked execution: the decision of its next scheduling point has been made already (a compiled
     * scheduling point decided before its call, or it resumed behind one): BlockScheduler.yieldPoint passes once.
     */
    boolean yieldDecided;
    /**
     * Under checked execution, inside a compiled deferring call (RegionCompiler.isDeferringCall): its scheduling
     * points after the first are decided behind the call; deferredYield names the one pending, or is null.
     */
    boolean deferring;
    String deferredYield;
    /** Set by its scheduler as the block would go idle: its next wait keeps its stack (stacklessWaiterLocked). */
    boolean waitWithStack;
    /** The pipeline it is making in steps (CompiledMake), from its first call until the make ends, or null. */
    dev.jpipeline.internal.MakeRendezvous.Making making;
    /** Its interrupt status when it gave its stack up: set again when it resumes. */
    boolean interruptedWhileSuspended;
    /** Wakes it through its scheduler, from a barrier it waits at without a stack (made at its first suspension). */
    ParkListener stacklessWake;
    /**
     * The pipeline handles it made, left for at its end unless gone by then; null until it makes one. Pruned of
     * handles that have left whenever it reaches a power of two from 16 on, so a thread that makes and quits
     * pipelines in a loop keeps O(live handles), amortized O(1) per make.
     */
    private List<HangDetector.Participant> departures;

    KernelThread(BlockScheduler scheduler, int rank) {
        this.scheduler = scheduler;
        this.rank = rank;
        this.checked = scheduler.launch.checked;
    }

    void blockedIn(Object site) {
        blockedIn = site;
    }

    /**
     * Its body has returned or thrown: it leaves for the pipeline handles it did not quit (unless the launch has
     * failed, and every thread unwinds), then is marked finished.
     */
    void finish() {
        blockedIn = null;
        List<HangDetector.Participant> leaving = departures;
        departures = null;
        if (leaving != null && !scheduler.launch.aborted()) {
            for (HangDetector.Participant handle : leaving) {
                if (!handle.isGone()) {
                    handle.abandon();
                }
            }
        }
        finished = true;
    }

    @Override
    public void onEnd(HangDetector.Participant handle) {
        if (departures == null) {
            departures = new ArrayList<>(2);
        }
        int n = departures.size();
        if (n >= 16 && (n & (n - 1)) == 0) {
            departures.removeIf(HangDetector.Participant::isGone);
        }
        departures.add(handle);
    }

    /** How many made handles it still holds for its end (for tests). */
    int heldForEnd() {
        return departures == null ? 0 : departures.size();
    }

    boolean isGone() {
        return finished;
    }

    @Override
    public boolean hasEnded() {
        return finished;
    }

    /** What it is parked in, described; null while it runs. */
    String stalledIn() {
        Object site = blockedIn;
        return site == null ? null : WaitSite.describe(site);
    }

    /** As findings name it: {@code thread (x, y, z) of block (x, y, z)}. */
    @Override
    public String toString() {
        return "thread " + scheduler.launch.threadIndex(rank) + " of block " + scheduler.block.blockIdx;
    }

    @Override
    public String name() {
        return "block " + scheduler.block.blockIdx + " thread " + scheduler.launch.threadIndex(rank);
    }
}
