package dev.jpipeline.simt;

import dev.jpipeline.internal.PhaseBarrier;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One warp of a block: its {@code __syncwarp} barrier and its shared pipeline batch sequence.
 *
 * <pre>
 * Convergence model (deterministic, since Java cannot see the warp's control flow):
 *  - A warp starts converged, and __syncwarp() / __syncthreads() reconverge it: each starts a new epoch.
 *  - Within an epoch, the k-th commit of every converged lane joins the same batch of the actual sequence: the
 *    first lane to make its k-th commit takes the next actual index, the others reuse it. Lanes that run the
 *    same code between two syncs therefore see perceived == actual offsets, as fully converged CUDA lanes do.
 *  - A lane that calls KernelContext.diverge() is diverged until the next sync: each of its commits takes a
 *    fresh actual index, like a commit by a lone active lane. 32 diverged lanes committing once each give the
 *    documentation's actual sequence {0..31}, every lane perceiving {0}.
 * </pre>
 */
final class WarpState {

    final int lanes;
    final SyncSite sync;
    private final String name;
    /** Block rank of lane 0. */
    private final int first;
    /** Under checked execution, the masks of the lanes' warp syncs, else null. */
    private final SyncCheck.LaneMasks laneMasks;
    /** Barriers of partial-mask __syncwarp, by mask. */
    private final ConcurrentHashMap<Integer, SyncSite> partials = new ConcurrentHashMap<>();
    /** Next index of the actual sequence. */
    private final AtomicLong actual = new AtomicLong();
    /**
     * Current epoch's converged commits: commit number within the epoch -> actual index. Cleared, not replaced,
     * at reconvergence: that runs while every lane is held at the sync, so no commit can race with it.
     */
    private final ConcurrentHashMap<Integer, Long> epochCommits = new ConcurrentHashMap<>();
    /** Bumped at every reconvergence, so that lanes notice a new epoch. */
    private volatile int epoch;

    WarpState(int warpId, Dim3 blockIdx, int lanes, CheckedLaunch checked) {
        this.lanes = lanes;
        this.name = "warp " + warpId + " of block " + blockIdx;
        this.first = warpId * Kernel.WARP_SIZE;
        this.laneMasks = checked == null ? null : new SyncCheck.LaneMasks(lanes);
        this.sync = new SyncSite("__syncwarp of " + name, new PhaseBarrier(lanes, this::reconverge),
            checked == null ? null : new SyncCheck("__syncwarp", first, lanes, fullMask(), laneMasks, false));
    }

    /** The mask naming every lane of the warp. */
    int fullMask() {
        return lanes == Kernel.WARP_SIZE ? -1 : (1 << lanes) - 1;
    }

    /** The barrier of {@code __syncwarp(mask)} for a partial mask: one per mask, made on first use. */
    SyncSite partialSync(int mask) {
        return partials.computeIfAbsent(mask, m -> new SyncSite(String.format("__syncwarp(0x%08x) of %s", m, name),
            new PhaseBarrier(Integer.bitCount(m)), laneMasks == null ? null
                : new SyncCheck(String.format("__syncwarp(0x%08x)", m), first, lanes, m, laneMasks, false)));
    }

    /** Under checked execution, lane {@code kt} has exited: a finding if lanes wait for it in a warp sync. */
    void exited(KernelThread kt) {
        sync.check.exited(kt);
        for (SyncSite partial : partials.values()) {
            partial.check.exited(kt);
        }
    }

    /** A new convergence epoch (run by the last thread to arrive at a warp or block sync). */
    void reconverge() {
        epochCommits.clear();
        epoch++;
    }

    int epoch() {
        return epoch;
    }

    /** The actual index for a lane's {@code k}-th converged commit of the current epoch. */
    long convergedCommit(int k) {
        return epochCommits.computeIfAbsent(k, x -> actual.getAndIncrement());
    }

    /** The actual index for a diverged lane's commit. */
    long divergedCommit() {
        return actual.getAndIncrement();
    }

    /** The latest actual index, or -1. */
    long latest() {
        return actual.get() - 1;
    }
}
