package dev.jpipeline.simt;

import java.util.HashMap;
import java.util.Map;

/**
 * Checked execution's account of the arrivals that libcu++ would still wait for: per pipeline, the earliest batch
 * whose commits (and whose releases) a departed owner will never make.
 *
 * <pre>
 * libcu++'s quit() (and the destructor of an un-quit pipeline, at the end of its thread) only lowers the owner
 * count: every stage barrier goes on expecting the quitter's arrivals. jpipeline drops them instead, as the
 * Programming Guide's early exit needs. So a wait that completes a batch at or after a departed owner's next commit
 * (a consumer_wait) or next release (a producer_acquire of the stage's next round) completes here only because of
 * the drop: on a GPU it never ends. needs() is asked by every completed wait of a checked pipeline, after the wait,
 * so a departure that released a wait already parked is seen too.
 * Keys are the pipelines' rings, by identity. Confinement: checked execution runs one thread at a time; every call
 * comes from the thread holding the turn.
 * </pre>
 */
final class DroppedArrivals {

    /** The earliest batch a departed owner of one pipeline's side will not arrive for, and who. */
    private record Gap(long batch, String who) {
    }

    private final Map<Object, Gap> commits = new HashMap<>();
    private final Map<Object, Gap> releases = new HashMap<>();

    /** An owner of {@code ring} departs, never to commit {@code nextCommit} on, nor release {@code nextRelease} on. */
    void departs(Object ring, String who, long nextCommit, long nextRelease) {
        record(commits, ring, who, nextCommit);
        record(releases, ring, who, nextRelease);
    }

    private static void record(Map<Object, Gap> gaps, Object ring, String who, long batch) {
        if (batch >= 0) {
            gaps.merge(ring, new Gap(batch, who), (was, now) -> now.batch < was.batch ? now : was);
        }
    }

    /**
     * What a GPU would do with a wait that found batch {@code batch} complete: null when libcu++ completes it too,
     * else why it hangs there.
     *
     * @param waiter    the waiting thread, as findings name it
     * @param commits   whether the wait needed the batch's commits (else its releases)
     * @param abandoned whether no owner is left to arrive, so that jpipeline fails the wait instead of ending it
     */
    String hangOnGpu(Object ring, boolean commits, int stage, long batch, String op, Object waiter,
                     boolean abandoned) {
        Gap gap = (commits ? this.commits : releases).get(ring);
        if (gap == null || batch < gap.batch) {
            return null;
        }
        String arrival = commits ? "commit" : "release";
        return op + " of " + waiter + " needed every owner's " + arrival + " of batch " + batch + " (stage " + stage
            + "), but " + gap.who + " before its " + arrival + " of batch " + gap.batch + ". jpipeline drops a "
            + "departed owner's arrivals, so the wait " + (abandoned ? "fails here at once (no "
                + (commits ? "producer" : "consumer") + " is left to arrive)" : "ended here")
            + "; libcu++'s quit() (and the destructor of an un-quit pipeline) only lowers the owner count, and the stage's barrier goes on waiting for that "
            + arrival + (op.endsWith("_for") || op.endsWith("_until")
                ? ": on a GPU this timed wait does not complete, it times out (returns false)"
                : ": on a GPU this wait never ends");
    }
}
