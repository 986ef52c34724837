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
 * Warp masks: the warp's syncs share LaneMasks (the mask each lane waits with, 0 when it does not wait, and the
 * mask of each lane's latest __syncwarp). A lane may pass a __syncwarp(m') and then reach the __syncwarp(m) that
 * another lane waits in, so masks disagree only where that can no longer happen: a lane that arrives with m while
 * a lane it names waits with m' != m naming it (each waits for the other), or a lane named by waiting lanes that
 * exits, or has exited, after a __syncwarp with another mask.
 * </pre>
 */
final class SyncCheck {

    private final String what;
    private final int first;
    private final int span;
    private final int parties;
    /** The mask of a warp sync (bit i: lane i), else 0. */
    private final int mask;
    /** The warp's lanes' masks, shared by its syncs; null for block and tile syncs. */
    private final LaneMasks laneMasks;
    private final boolean sitesMatter;
    private int arrived;
    private CheckedLaunch.Site firstSite;
    private int firstArriver;

    /**
     * @param first       the block rank of the first thread of the range the members are in
     * @param span        the range's length
     * @param mask        a warp sync's mask (members: the lanes named), else 0 (members: the whole range)
     * @param laneMasks   the warp's lanes' masks for a warp sync, else null
     * @param sitesMatter whether arriving from another call site is a finding ({@code __syncthreads})
     */
    SyncCheck(String what, int first, int span, int mask, LaneMasks laneMasks, boolean sitesMatter) {
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
        arrive(kt, kt.checked.callSite());
    }

    /** {@code kt} arrives from {@code site} (a compiled sync's, RegionCompiler.Compiled.site): as {@link #arrive}. */
    void arrive(KernelThread kt, CheckedLaunch.Site site) {
        CheckedLaunch checked = kt.checked;
        String exited = kt.scheduler.finishedAmong(first, span, mask);
        if (exited != null && laneMasks != null) {
            for (int j = 0; j < span; j++) {
                if ((mask >>> j & 1) != 0 && kt.scheduler.hasFinished(first + j) && disagrees(j)) {
                    throw checked.violation(FindingKind.WARP_MASK, String.format("%s called __syncwarp(0x%08x) at "
                        + "%s, but lane %d, which it names, left after __syncwarp(0x%08x): the lanes disagree on the "
                        + "mask (a GPU hangs or misbehaves)", kt, mask, site, j, laneMasks.last[j]));
                }
            }
        }
        if (exited != null) {
            throw checked.violation(FindingKind.PARTIAL_BARRIER, kt + " reached " + what + " at " + site
                + ", which " + exited + " will never reach: a barrier that only part of its threads reach (a GPU "
                + "hangs or misbehaves)");
        }
        if (sitesMatter && arrived > 0 && !site.equals(firstSite)) {
            String here = site.toString();
            if (here.equals(firstSite.toString())) {
                here += " (another barrier call on that line)";    // two calls on one line: told apart by bytecode
            }
            throw checked.violation(FindingKind.DIVERGENT_BARRIER, kt + " reached " + what + " at " + here
                + ", but " + others(kt) + " in " + what + " at " + firstSite + ": a barrier in divergent "
                + "code (a GPU hangs or misbehaves)");
        }
        if (laneMasks != null) {
            int lane = kt.rank - first;
            for (int j = 0; j < span; j++) {
                int theirs = laneMasks.waiting[j];
                if (theirs != 0 && theirs != mask && (mask >>> j & 1) != 0 && (theirs >>> lane & 1) != 0) {
                    throw checked.violation(FindingKind.WARP_MASK, String.format("%s called __syncwarp(0x%08x) at %s,"
                        + " but lane %d waits in __syncwarp(0x%08x): each waits for the other, the lanes disagree on "
                        + "the mask (a GPU hangs or misbehaves)", kt, mask, site, j, theirs));
                }
            }
            laneMasks.waiting[lane] = mask;
            laneMasks.last[lane] = mask;
        }
        if (arrived++ == 0) {
            firstSite = site;
            firstArriver = kt.rank;
        }
        if (arrived == parties) {
            arrived = 0;
            if (laneMasks != null) {
                for (int j = 0; j < span; j++) {
                    if ((mask >>> j & 1) != 0) {
                        laneMasks.waiting[j] = 0;
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
        if (member && arrived > 0 && laneMasks != null && disagrees(at)) {
            kt.checked.fail(FindingKind.WARP_MASK, String.format("%s left after __syncwarp(0x%08x) while %s in "
                + "%s at %s, which names it: the lanes disagree on the mask (a GPU hangs or misbehaves)",
                kt.toString(), laneMasks.last[at], others(kt), what, firstSite));
        } else if (member && arrived > 0) {
            kt.checked.fail(FindingKind.PARTIAL_BARRIER, kt.toString() + " exited while " + others(kt)
                + " in " + what + " at " + firstSite + ": a barrier that only part of its threads reach (a GPU "
                + "hangs or misbehaves)");
        }
    }

    /** Whether lane {@code j}'s latest __syncwarp had another mask than this one's. */
    private boolean disagrees(int j) {
        int last = laneMasks.last[j];
        return last != 0 && last != mask;
    }

    /** The masks of a warp's lanes: each lane's waiting mask (0: not waiting) and its latest __syncwarp's mask. */
    static final class LaneMasks {
        final int[] waiting;
        final int[] last;

        LaneMasks(int lanes) {
            this.waiting = new int[lanes];
            this.last = new int[lanes];
        }
    }

    /** Who waits in the current phase, with the verb: "thread (0, 0, 0) waits", "thread (0, 0, 0) and 3 others wait". */
    private String others(KernelThread kt) {
        String first = "thread " + kt.scheduler.launch.threadIndex(firstArriver);
        return arrived == 1 ? first + " waits" : first + " and " + (arrived - 1) + (arrived == 2 ? " other" : " others")
            + " wait";
    }
}
