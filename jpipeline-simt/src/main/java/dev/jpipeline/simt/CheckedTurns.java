package dev.jpipeline.simt;

import dev.jpipeline.internal.wait.Deadlines;

/**
 * The turn policy of a checked launch: the session's seed decides who runs, and this class keeps checked execution's
 * scheduling state (the virtual deadlines of timed waits, landings of held-back copies, the hang finding), so that
 * BlockScheduler never writes it.
 *
 * <pre>
 * next:       while there is a candidate (ready threads, the next unstarted one, copies in flight): a copy lands when
 *             no thread can run or the session says so (which copy: the session's choice; a landing may wake
 *             threads), else the session chooses the thread. With none: the earliest timed wait times out (the
 *             virtual clock moves to its deadline), else the block has hung: HANG is reported and every blocked
 *             thread made ready to unwind; with no thread left unfinished, the block ends.
 * mayHandOn:  a scheduling point decides when there is another candidate and the session switches there.
 * blocking:   a timed wait's deadline is kept here, on the virtual clock; the thread parks untimed.
 * </pre>
 *
 * One per block scheduler of a checked launch; a checked launch runs its blocks one after another, so the launch's
 * per-block arrays (CheckedLaunch.deadlines) are the current block's.
 */
final class CheckedTurns implements TurnPolicy {

    private final CheckedLaunch checked;

    CheckedTurns(CheckedLaunch checked) {
        this.checked = checked;
    }

    @Override
    public KernelThread next(BlockScheduler s) {
        for (;;) {
            int threadCandidates = s.readyCount() + (s.canStart() ? 1 : 0);
            int candidates = threadCandidates + checked.pendingCopies();
            if (candidates == 0) {
                if (s.unfinished() == 0 || !unblockOne(s)) {
                    s.goIdle();
                    return null;
                }
                continue;
            }
            int copies = candidates - threadCandidates;
            if (copies > 0 && (threadCandidates == 0 || checked.session.landsNow())) {
                checked.land(copies == 1 ? 0 : checked.session.choose(copies));   // may wake threads: they get ready
                continue;
            }
            return s.giveTurn(threadCandidates == 1 ? 0 : checked.session.choose(threadCandidates));
        }
    }

    /**
     * Nothing can run but threads are blocked: the earliest timed wait times out, or, with none, the block has hung:
     * reported, and every blocked thread made ready to unwind. Returns whether a thread became ready.
     */
    private boolean unblockOne(BlockScheduler s) {
        KernelThread earliest = null;
        for (int r = 0; r < s.started(); r++) {
            KernelThread kt = s.thread(r);
            long deadline = checked.deadlines[r];
            if (kt != null && kt.state == KernelThread.BLOCKED && deadline != Deadlines.NO_DEADLINE
                && (earliest == null || deadline - checked.deadlines[earliest.rank] < 0)) {
                earliest = kt;
            }
        }
        if (earliest != null && !s.launch.aborted()) {
            checked.session.advanceTo(checked.deadlines[earliest.rank]);
            checked.session.trace(earliest, " times out");
            checked.deadlines[earliest.rank] = Deadlines.NO_DEADLINE;
            s.enqueueReady(earliest);
            return true;
        }
        if (!s.launch.aborted()) {
            checked.fail(FindingKind.HANG, "block " + s.block.blockIdx + " hung: " + s.stalledInLocked());
        }
        boolean any = false;
        for (int r = 0; r < s.started(); r++) {
            KernelThread kt = s.thread(r);
            if (kt != null && kt.state == KernelThread.BLOCKED) {
                checked.deadlines[kt.rank] = Deadlines.NO_DEADLINE;
                s.enqueueReady(kt);
                any = true;
            }
        }
        return any;
    }

    @Override
    public boolean ordersEveryThread() {
        return true;
    }

    @Override
    public long blocking(KernelThread kt, long deadline) {
        checked.deadlines[kt.rank] = deadline;     // virtual: next() wakes it when time passes
        return Deadlines.NO_DEADLINE;
    }

    @Override
    public boolean mayHandOn(BlockScheduler s, KernelThread kt) {
        return (s.readyCount() > 0 || s.canStart() || checked.pendingCopies() > 0) && checked.switches(kt);
    }

    @Override
    public void handedOn(KernelThread kt, String what, KernelThread next) {
        checked.session.trace(kt, " at ", what, " -> ", next);
    }

    @Override
    public void exiting(KernelThread kt) {
        if (kt.scheduler.launch.aborted()) {
            return;
        }
        BlockState block = kt.scheduler.block;
        block.syncThreads.check.exited(kt);
        block.warps[kt.rank / Kernel.WARP_SIZE].exited(kt);
    }
}
