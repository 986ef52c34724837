package dev.jpipeline.internal;

import dev.jpipeline.Group;
import dev.jpipeline.PipelineRole;
import dev.jpipeline.internal.wait.Deadlines;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The collective {@code make_pipeline} of a shared state in a shared region: the ranks may be in several processes,
 * so their proposals meet in the region (RegionStages' rank slots) and the make's rank 0 decides for all.
 *
 * <pre>
 * make (each rank):   no live state may overlap the area (else the rank fails early: its proposal would break it)
 *                     leave for this process's handles on the state whose threads ended (RegionLocals)
 *                     tag = makes + 1                   (every rank reads the same count: see below)
 *                     slot[rank] = its proposal, tagged
 *                     group.sync()   #1                 every proposal is written
 *   rank 0:           verdict over the slots tagged tag (MakeRendezvous.verdict, plus the stage counts, plus: no
 *                     live handle of the previous pipeline, and none of its copies in flight after waiting up to
 *                     1 s for them); ok: format the pipeline (places, barriers, owners)
 *                     publish the verdict, then makes = tag
 *                     group.sync()   #2                 the verdict and the pipeline are written
 *                     makes != tag: rank 0 failed before publishing; a refusal: throw it; else check the header
 *                     and attach: take the place (RegionStages.take), this process's ring for the make (one per
 *                     process), and a handle
 * </pre>
 * A place is live while it is ACTIVE, its maker lives, and it is held: taken by its rank, or formatted and not
 * yet taken. A make that failed between its syncs (a rank died or left: the group's sync #2 throws) leaves places
 * formatted that nobody will take; the next make's rank 0 gives them up (a CAS on the place's attach word, which
 * the late taker's CAS races), so that the state is never locked by a make that failed.
 * makes changes only between a make's #1 and #2, and each rank reads it before its #1 and after its previous #2,
 * so every rank of a make reads the same count. A rank with an argument that does not fit the region still takes
 * part in both syncs without writing, so that the others fail (its slot is not tagged) instead of waiting for it.
 * The syncs are the group's: a {@code RegionGroup}'s sync crosses processes, and fails if a member died. A rank
 * whose sync #2 fails gives its place up if the pipeline was made (giveUp): peers whose sync completed run
 * without it.
 */
public final class RegionRendezvous implements PipelineMaker {

    private final RegionStages region;
    /** The region's data and the state's offset in it: other states' areas must not overlap this one. */
    private final java.lang.foreign.MemorySegment data;
    private final long offset;
    private final RegionLocals locals;
    private final PipelineSettings settings;
    /** The ring of this process for the latest make it attached to, and that make's tag. Guarded by this. */
    private StageRing ring;
    private RegionHome ringHome;
    private long ringTag;

    private RegionRendezvous(java.lang.foreign.MemorySegment data, long offset, String what, RegionLocals locals,
                             PipelineSettings settings) {
        this.region = new RegionStages(data.asSlice(offset), what);
        this.data = data;
        this.offset = offset;
        this.locals = locals;
        this.settings = settings;
    }

    /**
     * A rendezvous over the state area at {@code offset} of a region's {@code data}, named {@code what} in
     * messages; {@code locals} is this process's handles on the area (one per region file and offset, shared by
     * every state built there).
     */
    public static RegionRendezvous in(java.lang.foreign.MemorySegment data, long offset, String what,
                                      RegionLocals locals, PipelineSettings settings) {
        return new RegionRendezvous(data, offset, what, locals, settings);
    }

    /** Bytes a state needs for pipelines of {@code stages} stages made by a group of {@code groupSize}. */
    public static long bytesFor(int stages, int groupSize) {
        return RegionStages.bytesFor(stages, groupSize);
    }

    @Override
    public PipelineHandle makeUnified(Group group) {
        return make(group, new MakeRendezvous.Proposal(StageRing.Kind.UNIFIED, group.size(), 0, null));
    }

    @Override
    public PipelineHandle makeByCount(Group group, int producerCount) {
        return make(group, new MakeRendezvous.Proposal(StageRing.Kind.BY_COUNT, group.size(), producerCount, null));
    }

    @Override
    public PipelineHandle makeByRole(Group group, PipelineRole role) {
        return make(group, new MakeRendezvous.Proposal(StageRing.Kind.BY_ROLE, group.size(), 0, role));
    }

    private PipelineHandle make(Group group, MakeRendezvous.Proposal mine) {
        int rank = group.threadRank();
        int n = mine.groupSize();
        int stages = settings.stageCount();
        IllegalArgumentException early = MakeRendezvous.sizeVerdict(mine, rank);
        if (early == null && RegionStages.bytesFor(stages, n) > region.area.byteSize()) {
            early = new IllegalArgumentException(region.what + " has " + region.area.byteSize() + " bytes from its "
                + "offset to the region's end; a pipeline of " + stages + " stages for a group of " + n + " needs "
                + RegionStages.bytesFor(stages, n) + " (PipelineSharedState.regionBytes)");
        }
        if (early == null) {
            String overlap = overlappingLiveState(RegionStages.bytesFor(stages, n));   // before writing anything
            if (overlap != null) {
                early = new IllegalArgumentException(region.what + ": " + overlap);
            }
        }
        locals.abandonEnded();                                      // ended threads hold no place
        long tag = region.makes() + 1;
        if (early == null) {
            region.propose(rank, tag, mine.kind().ordinal(), mine.producers(), roleCode(mine.role()), n, stages);
        }
        group.sync();                                               // #1
        if (rank == 0 && early == null) {
            String refusal;
            try {
                refusal = decide(mine, tag, n, stages);
            } catch (RuntimeException e) {
                refusal = region.what + ": rank 0 could not make the pipeline: " + e;
            }
            region.publishVerdict(tag, refusal);
        }
        try {
            group.sync();                                           // #2
        } catch (RuntimeException e) {
            if (early == null) {
                giveUp(rank, mine, tag, n, stages);
            }
            throw e;
        }
        if (early != null) {
            throw early;
        }
        if (region.makes() != tag) {
            throw new IllegalArgumentException(region.what + ": rank 0 published no verdict for this make (it failed "
                + "before deciding: see its exception)");
        }
        String refusal = region.refusal();
        if (refusal != null) {
            throw new IllegalArgumentException(refusal);
        }
        return attach(rank, mine, tag, n, stages);
    }

    /** This rank's handle on the pipeline rank 0 formatted, after checking what the region says about it. */
    private PipelineHandle attach(int rank, MakeRendezvous.Proposal mine, long tag, int n, int stages) {
        String bad = region.check(stages, n, mine.kind().ordinal());
        int side = region.side(rank);
        int member = region.member(rank);
        int expectedSide = switch (mine.kind()) {
            case UNIFIED -> RegionStages.BOTH;
            case BY_COUNT -> RegionStages.UNDECIDED;
            case BY_ROLE -> mine.role() == PipelineRole.PRODUCER ? RegionStages.PRODUCER : RegionStages.CONSUMER;
        };
        int sideSize = side == RegionStages.CONSUMER ? region.consumers() : region.producers();
        if (bad == null && (side != expectedSide || member < 0 || member >= Math.max(1, sideSize))) {
            bad = region.what + ": rank " + rank + "'s place does not match its make (side " + side + ", member "
                + member + "; a corrupted region?)";
        }
        if (bad == null && !region.take(rank, tag)) {
            bad = region.what + ": rank " + rank + "'s place in make " + tag + " was given up by a later make (this "
                + "make failed between its syncs on another rank, and the state was made on again)";
        }
        if (bad != null) {
            throw new IllegalStateException(bad);
        }
        StageRing shared = ringOf(tag, mine.kind(), n);
        return new StageHandle(shared, rank, mine.role() == null ? null : mine.role() == PipelineRole.PRODUCER,
            mine.kind() == StageRing.Kind.UNIFIED ? rank : member);
    }

    /**
     * This rank's sync #2 failed (a member died or left), but rank 0 may have made the pipeline, and ranks whose
     * sync completed may run it: if this rank's place in it was formatted and not taken, it gives the place up and
     * leaves it as quit would (from round 0 everywhere), so that those peers go on or are told instead of waiting
     * for it.
     */
    private void giveUp(int rank, MakeRendezvous.Proposal mine, long tag, int n, int stages) {
        if (region.makes() == tag && region.refusal() == null && region.check(stages, n, mine.kind().ordinal()) == null
            && region.giveUp(rank, tag) && region.casState(rank, RegionStages.ACTIVE, RegionStages.QUIT)) {
            homeOf(tag, mine.kind(), n).leaveFor(rank);
        }
    }

    /** This process's ring for make {@code tag}: the first rank to attach creates it. */
    private synchronized StageRing ringOf(long tag, StageRing.Kind kind, int n) {
        if (ring == null || ringTag != tag) {
            ringHome = new RegionHome(region, locals, settings.stageCount());
            ring = new StageRing(kind, n, region.producers(), region.consumers(), settings, ringHome);
            ringTag = tag;
        }
        return ring;
    }

    /** The region home of this process's ring for make {@code tag} (ringOf). */
    private synchronized RegionHome homeOf(long tag, StageRing.Kind kind, int n) {
        ringOf(tag, kind, n);
        return ringHome;
    }

    /**
     * Rank 0's decision: null, having formatted the pipeline, when every rank made the same valid pipeline with this
     * state's stage count and the previous pipeline has no live handle left; else the refusal.
     */
    private String decide(MakeRendezvous.Proposal mine, long tag, int n, int stages) {
        Map<Integer, MakeRendezvous.Proposal> all = new TreeMap<>();
        List<String> problems = new ArrayList<>();
        StageRing.Kind[] kinds = StageRing.Kind.values();
        for (int r = 0; r < n; r++) {
            if (region.proposalTag(r) != tag) {
                continue;               // MakeRendezvous.verdict reports it missing
            }
            int kind = region.proposedKind(r);
            int role = region.proposedRole(r);
            if (kind < 0 || kind >= kinds.length || role < 0 || role > 2) {
                problems.add("rank " + r + "'s proposal is corrupted (kind " + kind + ", role " + role + ")");
                continue;
            }
            if (region.proposedStages(r) != stages) {
                problems.add("rank " + r + " made it on a state of " + region.proposedStages(r) + " stages, rank 0 on "
                    + stages);
            }
            all.put(r, new MakeRendezvous.Proposal(kinds[kind], region.proposedGroupSize(r),
                region.proposedProducers(r), role == 0 ? null : role == 1 ? PipelineRole.PRODUCER : PipelineRole.CONSUMER));
        }
        IllegalArgumentException verdict = MakeRendezvous.verdict(mine, 0, all);
        if (verdict != null) {
            problems.add(0, verdict.getMessage());
        }
        String live = liveHandleOfPrevious();
        if (live != null) {
            problems.add(live);
        } else {
            String copies = copiesOfPrevious();
            if (copies != null) {
                problems.add(copies);
            }
        }
        if (!problems.isEmpty()) {
            return region.what + ": " + String.join("; ", problems);
        }
        int[] sides = new int[n];
        int[] members = new int[n];
        int producers = 0;
        for (int r = 0; r < n; r++) {
            MakeRendezvous.Proposal p = all.get(r);
            switch (p.kind()) {
                case UNIFIED -> {
                    sides[r] = RegionStages.BOTH;
                    members[r] = r;
                }
                case BY_COUNT -> sides[r] = RegionStages.UNDECIDED;
                case BY_ROLE -> {
                    boolean produces = p.role() == PipelineRole.PRODUCER;
                    sides[r] = produces ? RegionStages.PRODUCER : RegionStages.CONSUMER;
                    members[r] = produces ? producers : r - producers;
                    producers += produces ? 1 : 0;
                }
            }
        }
        int p = switch (mine.kind()) {
            case UNIFIED -> n;
            case BY_COUNT -> mine.producers();
            case BY_ROLE -> producers;
        };
        int c = mine.kind() == StageRing.Kind.UNIFIED ? n : n - p;
        region.format(tag, stages, n, mine.kind().ordinal(), p, c, sides, members);
        return null;
    }

    /** A refusal naming a live handle of the pipeline made before on this state, or null when there is none. */
    private String liveHandleOfPrevious() {
        int previous = region.groupSize();
        if (region.formatted() && (previous < 0 || previous > region.slotCapacity())) {
            return "the previous pipeline's header is corrupted (a group of " + previous + ")";
        }
        String live = region.liveHandle();
        return live == null ? null : "the pipeline made before on this state still has a live handle: " + live
            + " has not quit (every handle of a pipeline must quit before the state is made on again)";
    }

    /**
     * A refusal naming a state at another offset of the region whose pipeline has a live handle and whose area
     * overlaps the area this make would take, or null. Such a state's header starts at a multiple of 128 from
     * {@link #MAX_AREA} bytes before this state's offset to the end of its area: each of those places is looked at
     * (a magic check, then the header).
     */
    private String overlappingLiveState(long bytes) {
        long from = Math.max(0, offset - MAX_AREA);
        for (long at = from - from % RegionStages.ALIGNMENT; at < offset + bytes; at += RegionStages.ALIGNMENT) {
            if (at == offset || !RegionStages.formattedAt(data, at)) {
                continue;
            }
            RegionStages other = new RegionStages(data.asSlice(at), "the state at offset " + at);
            long extent = other.extent();
            String live = extent > 0 && (at > offset || at + extent > offset) ? other.liveHandle() : null;
            if (live != null) {
                return "its area (" + bytes + " bytes from offset " + offset + ") overlaps the pipeline shared state "
                    + "at offset " + at + " (" + extent + " bytes), whose pipeline has a live handle: " + live
                    + " (states in one region must not overlap)";
            }
        }
        return null;
    }

    /** The most bytes a state's area takes. */
    private static final long MAX_AREA = RegionStages.bytesFor(dev.jpipeline.PipelineSharedState.MAX_STAGES,
        RegionLayout.SLOTS);

    /**
     * Waits up to {@link #COPY_WAIT_NANOS} for the copies that handles of the previous pipeline handed off to land
     * (a producer may quit before its copies land: they would land in the new pipeline's stages); a refusal naming
     * the ranks still waiting for some then, or null. A dead maker's copies died with it.
     */
    private String copiesOfPrevious() {
        if (!region.formatted()) {
            return null;
        }
        String inFlight = Deadlines.pollUntilNone(COPY_WAIT_NANOS, () -> {
            List<String> ranks = new ArrayList<>();
            for (int r = 0; r < region.groupSize(); r++) {
                long copies = region.copies(r);
                if (copies != 0 && region.maker(r).isAlive()) {
                    ranks.add("rank " + r + " (" + region.maker(r) + ") has " + copies);
                }
            }
            return ranks.isEmpty() ? null : String.join(", ", ranks);
        });
        return inFlight == null ? null : "memcpyAsync copies of the pipeline made before on this state are still in "
            + "flight after " + COPY_WAIT_NANOS / 1_000_000 + " ms: " + inFlight + " (they would land in the new "
            + "pipeline's stages: make it again once they have landed)";
    }

    /** How long a make waits for the previous pipeline's copies to land before it refuses. */
    private static final long COPY_WAIT_NANOS = 1_000_000_000L;

    private static int roleCode(PipelineRole role) {
        return role == null ? 0 : role == PipelineRole.PRODUCER ? 1 : 2;
    }
}
