package dev.jpipeline.internal;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;

/**
 * One side of a {@link StageRing}: the barriers that count the producers' commits ({@code produced}) or the
 * consumers' releases ({@code consumed}), one word per stage for each group of the side's members.
 *
 * <pre>
 * Members are numbered 0 .. M-1 within the side; member m belongs to group m mod G, G = min(M, 8) (1 when M is
 * 0). Group g's barrier of stage s expects the commits (releases) of its members only, and stage s of round k is
 * complete when every group's barrier of s has completed phase k: the side's arrivals are split over G words
 * instead of contending for one. With M &lt;= 8 every group has one member, whose arrival is a release store
 * (PhaseBarrier.arriveAlone) on a line nobody else writes, and a waiter reads each member's line: a two-thread
 * unified stage costs two stores and two reads instead of four CASes on shared lines.
 *
 * A group whose members have all quit is deserted: its barrier expects nobody (and reports ABANDONED at its frozen
 * phase), and the side's stages complete without it from the round it was deserted at: the latest round any of
 * its members left from (each member records its round before its drop, so a waiter that sees the barrier expect
 * nobody sees every member's round). Phases are counted modulo 2^23 and a deserted group's phase stays where it
 * was while the others run on, so whether it delivered a round is decided by that round, never by the phase. Only
 * when every group is deserted is the side abandoned, which is when a single barrier for the side would have been.
 *
 * Layout, in the ring's word array: each group's words of all stages side by side when it has one member (one
 * writer; a reader that fetches one word's line gets the next stages' words with it), a padding apart when it has
 * several (they arrive at different stages); a padding between groups, so that members never share a line.
 *
 * In a shared region (system scope, RegionStages) every member is a group of its own, whatever their number: a
 * solo group's word tells whether its member arrived, which is how a survivor settles a crashed process's place
 * (RegionStages.reap). The words and the left-from rounds are then in the region; the algorithm is the same.
 * </pre>
 */
final class StageSide {

    /** The most groups a side is split into: a wait reads one word per group. */
    static final int MAX_GROUPS = 8;

    /** The side's barriers: [group][stage]. */
    final PhaseBarrier[][] groups;
    /** Per group: whether it has exactly one member (its arrivals may be arriveAlone stores). */
    private final boolean[] solo;
    /**
     * Per group and stage (long [group * stages + stage]): the latest round a member of the group has left from,
     * recorded before its drop, so the round the group is deserted from once nobody is left (0 while none has left:
     * a group that never had a member is deserted from round 0). A heap segment, or the region's longs.
     */
    private final MemorySegment leftFrom;

    /**
     * A side over {@code groups} ([group][stage]), formatted already.
     *
     * @param solo     per group, whether it has exactly one member
     * @param leftFrom the longs for the left-from rounds ([group * stages + stage]), formatted to 0
     */
    StageSide(PhaseBarrier[][] groups, boolean[] solo, MemorySegment leftFrom) {
        this.groups = groups;
        this.solo = solo;
        this.leftFrom = leftFrom;
    }

    /**
     * A side in a shared region: one group per member, each barrier of {@code barriers} ([member][stage]) a
     * {@link SharedWord}'s, formatted already.
     *
     * @param leftFrom the region's longs for the left-from rounds ([member * stages + stage]), formatted to 0
     */
    static StageSide ofSolos(PhaseBarrier[][] barriers, MemorySegment leftFrom) {
        boolean[] solo = new boolean[barriers.length];
        java.util.Arrays.fill(solo, true);
        return new StageSide(barriers, solo, leftFrom);
    }

    /**
     * A side whose barrier words are in a heap ring's array.
     *
     * @param words   the ring's word array ({@link #wordsNeeded} long from {@code base} on)
     * @param base    where the side's first word goes (padded before it by the caller)
     * @param stages  stages of the ring
     * @param members threads on this side
     */
    static StageSide inArray(long[] words, int base, int stages, int members) {
        int count = groupCount(members);
        PhaseBarrier[][] groups = new PhaseBarrier[count][stages];
        boolean[] solo = new boolean[count];
        int at = base;
        for (int g = 0; g < count; g++) {
            int expected = sizeOf(g, members, count);
            solo[g] = expected == 1;
            int stride = solo[g] ? 1 : PhaseBarrier.WORD_PAD;
            for (int s = 0; s < stages; s++) {
                groups[g][s] = new PhaseBarrier(words, at + s * stride, expected, null, solo[g]);
            }
            at += (stages - 1) * stride + 1 + PhaseBarrier.WORD_PAD;
        }
        return new StageSide(groups, solo, MemorySegment.ofArray(new long[count * stages]));
    }

    /** Longs a side of {@code members} over {@code stages} stages takes, its trailing padding included. */
    static int wordsNeeded(int stages, int members) {
        int n = 0;
        int count = groupCount(members);
        for (int g = 0; g < count; g++) {
            boolean one = sizeOf(g, members, count) == 1;
            n += (stages - 1) * (one ? 1 : PhaseBarrier.WORD_PAD) + 1 + PhaseBarrier.WORD_PAD;
        }
        return n;
    }

    /** Members of group {@code g}: those numbered g, g + count, g + 2 count, ... below {@code members}. */
    private static int sizeOf(int g, int members, int count) {
        return members / count + (g < members % count ? 1 : 0);
    }

    private static int groupCount(int members) {
        return Math.max(1, Math.min(members, MAX_GROUPS));
    }

    /** The barriers member {@code member} arrives at, one per stage. */
    PhaseBarrier[] of(int member) {
        return groups[member % groups.length];
    }

    /** Whether member {@code member} is its group's only member (its arrivals may be arriveAlone stores). */
    boolean alone(int member) {
        return solo[member % groups.length];
    }

    /** Whether stage {@code stage} has completed phase {@code round} in every group (one read per group). */
    boolean isComplete(int stage, int round) {
        for (PhaseBarrier[] group : groups) {
            if (!group[stage].isComplete(round)) {
                return false;
            }
        }
        return true;
    }

    /**
     * The failure recorded in any group for round {@code round} of stage {@code stage}, or null. A group deserted
     * at the round is not asked: it delivered nothing there, and its records, which nobody replaces any more, may
     * hold a failure of the phase 2^23 rounds before (phases are counted modulo 2^23).
     */
    Throwable failureOf(int stage, long round) {
        for (int g = 0; g < groups.length; g++) {
            Throwable failure = deserted(g, stage, round) ? null : groups[g][stage].failureOf((int) round);
            if (failure != null) {
                return failure;
            }
        }
        return null;
    }

    /**
     * Member {@code member} leaves stage {@code stage} from {@code round} on: its next arrival there would have
     * been for that round. The round is recorded before the drop (see the class comment).
     */
    void drop(int member, int stage, long round) {
        int g = member % groups.length;
        long at = (long) (g * stages() + stage) * Long.BYTES;
        for (long was = (long) LEFT_FROM.getVolatile(leftFrom, at);
             was < round && !LEFT_FROM.compareAndSet(leftFrom, at, was, round);
             was = (long) LEFT_FROM.getVolatile(leftFrom, at)) {
            // raise it to round, unless a later round is there already
        }
        groups[g][stage].dropFromRound((int) round);
    }

    /**
     * Drops member {@code member} from every stage from the round of its next arrival there, as quit does: its
     * next arrival is for stage {@code next} of round {@code nextRound}, so stages before {@code next} are dropped
     * from the round after. Every stage is dropped even when one fails (a corrupted word in a region), so that the
     * member's peers are released wherever they can be.
     *
     * @param failure a failure of the caller's so far, or null
     * @return {@code failure}, or else the first drop's failure, with the later ones suppressed in it; or null
     */
    RuntimeException dropAll(int member, int next, long nextRound, RuntimeException failure) {
        for (int s = 0; s < stages(); s++) {
            try {
                drop(member, s, s < next ? nextRound + 1 : nextRound);
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        return failure;
    }

    /** Member {@code member} never arrives anywhere (an undecided quitter of a count partition). */
    void dropFromStart(int member) {
        for (int s = 0; s < stages(); s++) {
            drop(member, s, 0);
        }
    }

    /**
     * Whether group {@code group} is deserted at round {@code round} of stage {@code stage}: nobody is left in it,
     * and its members left from that round or an earlier one (so it never delivers the round).
     */
    boolean deserted(int group, int stage, long round) {
        return groups[group][stage].expected() == 0
            && round >= (long) LEFT_FROM.getVolatile(leftFrom, (long) (group * stages() + stage) * Long.BYTES);
    }

    int stages() {
        return groups[0].length;
    }

    /** Accesses to the left-from rounds: volatile reads, CAS. */
    private static final VarHandle LEFT_FROM = JAVA_LONG.varHandle();

    /** Whether {@code barrier} is one of this side's. */
    boolean owns(PhaseBarrier barrier) {
        for (PhaseBarrier[] group : groups) {
            for (PhaseBarrier b : group) {
                if (b == barrier) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Folds every word of the side into {@code h} (the hang detector's progress signature). */
    long signature(long h) {
        for (PhaseBarrier[] group : groups) {
            for (PhaseBarrier b : group) {
                h = h * 31 + b.snapshot();
            }
        }
        return h;
    }

    /**
     * "phase 3, arrived 1/2": the side's arrivals for phase {@code round} of stage {@code stage} over all groups (a
     * group that has completed the phase counts all its members), for a report of what a waiter waits for.
     */
    String describeRound(int stage, int round) {
        int arrived = 0;
        int expected = 0;
        for (PhaseBarrier[] group : groups) {
            PhaseBarrier b = group[stage];
            int parties = b.expected();
            expected += parties;
            arrived += b.isComplete(round) ? parties : b.arrived();
        }
        return "phase " + (round & PhaseBarrier.PHASE_MASK) + ", arrived " + arrived + "/" + expected;
    }

    /** "phase 3 has 1/2 {@code what}", with one such entry per group when the side is split. */
    String describe(int stage, String what) {
        StringBuilder b = new StringBuilder();
        for (int g = 0; g < groups.length; g++) {
            PhaseBarrier p = groups[g][stage];
            b.append(g == 0 ? "" : ", ").append(groups.length == 1 ? "" : "group " + g + " ").append("phase ")
                .append(p.phase()).append(" has ").append(p.arrived()).append('/').append(p.expected()).append(' ')
                .append(what);
        }
        return b.toString();
    }
}
