package dev.jpipeline.simt;

/**
 * Checked execution's view of one execution barrier ({@code __syncthreads}, a warp's {@code __syncwarp} with one
 * mask, a tile's sync): who has arrived in the current phase and from where, so that a barrier reached from
 * different call sites, by only part of its threads, or with masks that the lanes disagree on is reported where
 * the GPU would hang or misbehave.
 *
 * <pre>
 * Members are block ranks [first, first + parties). Confined to the turn (checked execution runs one thread at a
 * time): plain fields. A phase ends when the last member arrives (arrived returns to 0).
 * Warp masks: the warp's lanes share laneMasks (the mask each lane waits with, 0 when it does not wait); a lane that
 * arrives with mask m while lane j waits with m' != m, and either names the other, disagrees.
 * </pre>
 */
final class SyncCheck {

    private final String what;
    private final int first;
    private final int span;
    private final int parties;
    /** The mask of a warp sync (bit i: lane i), else 0. */
    private final int mask;
    /** The warp's lanes' waiting masks, shared by its syncs; null for block and tile syncs. */
    private final int[] laneMasks;
    private final boolean sitesMatter;
    private int arrived;
    private String firstSite;
    private int firstArriver;

    /**
     * @param first       the block rank of the first thread of the range the members are in
     * @param span        the range's length
     * @param mask        a warp sync's mask (members: the lanes named), else 0 (members: the whole range)
     * @param laneMasks   the warp's waiting masks for a warp sync, else null
     * @param sitesMatter whether arriving from another call site is a finding ({@code __syncthreads})
     */
    SyncCheck(String what, int first, int span, int mask, int[] laneMasks, boolean sitesMatter) {
        this.what = what;
        this.first = first;
        this.span = span;
        this.parties = mask == 0 ? span : Integer.bitCount(mask);
        this.mask = mask;
        this.laneMasks = laneMasks;
        this.sitesMatter = sitesMatter;
    }

    /** {@code kt} arrives: throws a violation (recorded) when the arrival breaks a rule. */
    void arrive(KernelThread kt) {
        CheckedLaunch checked = kt.checked;
        String site = CheckedLaunch.callSite();
        String who = checked.name(kt);
        String exited = kt.scheduler.finishedAmong(first, span, mask);
        if (exited != null) {
            throw checked.violation(FindingKind.PARTIAL_BARRIER, who + " reached " + what + " at " + site
                + ", which " + exited + " will never reach: a barrier that only part of its threads reach (a GPU "
                + "hangs or misbehaves)");
        }
        if (sitesMatter && arrived > 0 && !site.equals(firstSite)) {
            throw checked.violation(FindingKind.DIVERGENT_BARRIER, who + " reached " + what + " at " + site
                + ", but " + others(kt) + " in " + what + " at " + firstSite + ": a barrier in divergent "
                + "code (a GPU hangs or misbehaves)");
        }
        if (laneMasks != null) {
            int lane = kt.rank - first;
            for (int j = 0; j < laneMasks.length; j++) {
                int theirs = laneMasks[j];
                if (theirs != 0 && theirs != mask && ((mask >>> j & 1) != 0 || (theirs >>> lane & 1) != 0)) {
                    throw checked.violation(FindingKind.WARP_MASK, String.format("%s called __syncwarp(0x%08x) at %s,"
                        + " but lane %d waits in __syncwarp(0x%08x): the lanes disagree on the mask (a GPU hangs or "
                        + "misbehaves)", who, mask, site, j, theirs));
                }
            }
            laneMasks[lane] = mask;
        }
        if (arrived++ == 0) {
            firstSite = site;
            firstArriver = kt.rank;
        }
        if (arrived == parties) {
            arrived = 0;
            if (laneMasks != null) {
                for (int j = 0; j < laneMasks.length; j++) {
                    if ((mask >>> j & 1) != 0) {
                        laneMasks[j] = 0;
                    }
                }
            }
        }
        checked.session.trace(kt, " arrives at ", what, " (", arrived, " of ", parties, " waiting)");
    }

    /** {@code kt} has exited: a finding when it is a member and others wait in the current phase. */
    void exited(KernelThread kt) {
        int at = kt.rank - first;
        boolean member = at >= 0 && at < span && (mask == 0 || (mask >>> at & 1) != 0);
        if (member && arrived > 0) {
            kt.checked.fail(FindingKind.PARTIAL_BARRIER, kt.checked.name(kt) + " exited while " + others(kt)
                + " in " + what + " at " + firstSite + ": a barrier that only part of its threads reach (a GPU "
                + "hangs or misbehaves)");
        }
    }

    /** Who waits in the current phase, with the verb: "thread (0, 0, 0) waits", "thread (0, 0, 0) and 3 others wait". */
    private String others(KernelThread kt) {
        String first = "thread " + kt.scheduler.launch.threadIndex(firstArriver);
        return arrived == 1 ? first + " waits" : first + " and " + (arrived - 1) + (arrived == 2 ? " other" : " others")
            + " wait";
    }
}
