package dev.jpipeline.internal;

import dev.jpipeline.Group;
import dev.jpipeline.PipelineRole;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The collective {@code make_pipeline} of one shared state: every rank states how it makes the pipeline, every
 * rank checks that all agree, and all get handles on one new {@link StageRing}, or all get the same
 * {@link IllegalArgumentException}.
 *
 * <pre>
 * make (each rank):   proposals[rank] = what it asks for
 *                     group.sync()   #1   every proposal is written
 *                     verdict(all proposals)           the same data, so the same verdict on every rank
 *                     rank 0 (the lead), ok: creates the make's ring, publishes the proposals it judged
 *                     group.sync()   #2   every rank has decided; the lead's ring and view are published
 *                     remove proposals[rank]
 *                     ok: the lead's view has this rank, the lead is sealed, not failed: a handle on its ring
 *                     else throw the verdict's (or the clash's) exception
 * </pre>
 *
 * Both syncs happen on every path, so a rank with a bad argument (a null role, another shared state, another
 * count) never strands the others: every rank gets an exception naming the difference. Proposals are removed
 * only after #2, and a rank writes its next proposal only after removing its own, so consecutive makes on one
 * state by one group never mix: each completes for all ranks before the next begins. A rank that made on another
 * shared state is simply missing from this state's proposals. Two groups making on one state at once: a thread
 * that finds its rank taken counts a clash before its #1, and every rank that sees a clash after its #1 fails,
 * so a ring is never shared between groups. Ranks of one group read the clash count at different times, and
 * another group's clash may be counted between two reads; so that every rank of the group still gets the same
 * answer, rank 0's make (the lead, which a group without a clash of its own holds in slot 0 from before its #1 to
 * after its #2) is sealed: a rank whose verdict fails marks the lead failed before its #2, and after #2 every
 * rank seals the lead (the first one wins) and fails when it was marked.
 *
 * <p>The ring belongs to the lead: rank 0 creates it in its decide when its verdict is good, from the proposals it
 * judged, and publishes those proposals with it (before its #2). A rank's lead is whatever make holds slot 0 after
 * its #1, which for a group whose rank 0 made on another state (or on none) is another group's rank 0: from this
 * state's view the two look like one group. So a rank takes a handle only after #2, only when the lead's published
 * view holds this very rank (a lead counts only the ranks it judged, and its own group's ranks are in its slots
 * from before its #1 to after its #2), and only on the lead's ring. So a ring is never shared between groups,
 * failed makes touch no ring, and no make's ring outlives its lead (no shared field can hand a stale ring, of
 * another shape, to a next make). The one case this cannot tell apart: two groups that each miss the ranks the
 * other has on this state (each made its other ranks on other states) are one group to it; the Group interface
 * carries no identity.
 */
public final class MakeRendezvous implements PipelineMaker {

    private final PipelineSettings settings;
    /** Each rank's make in progress, by rank: its proposal, and (rank 0's) the make's seal. */
    private final Map<Integer, Making> proposals = new ConcurrentHashMap<>();
    /**
     * Threads that found their rank taken, from before their #1 until after their #2: another group is making on
     * this state at the same time. Any make that sees it after its #1 fails, so two groups never share a ring.
     */
    private volatile int clashes;

    public MakeRendezvous(PipelineSettings settings) {
        this.settings = settings;
    }

    /** What one rank asks for. {@code producers}: the count (BY_COUNT); {@code role}: its role (BY_ROLE). */
    record Proposal(StageRing.Kind kind, int groupSize, int producers, PipelineRole role) {

        String describe() {
            return switch (kind) {
                case UNIFIED -> "a unified pipeline";
                case BY_COUNT -> "a pipeline partitioned by count (producer count " + producers + ")";
                case BY_ROLE -> "a pipeline partitioned by role (role " + role + ")";
            } + " in a group of " + groupSize;
        }
    }

    @Override
    public PipelineHandle makeUnified(Group group) {
        return make(group, new Proposal(StageRing.Kind.UNIFIED, group.size(), 0, null));
    }

    @Override
    public PipelineHandle makeByCount(Group group, int producerCount) {
        return make(group, new Proposal(StageRing.Kind.BY_COUNT, group.size(), producerCount, null));
    }

    @Override
    public PipelineHandle makeByRole(Group group, PipelineRole role) {
        return make(group, new Proposal(StageRing.Kind.BY_ROLE, group.size(), 0, role));
    }

    /**
     * A rank that passed no shared state: it takes part in both syncs, so that its peers fail with a clear
     * message instead of waiting for it, then fails itself.
     */
    public static IllegalArgumentException withoutState(Group group) {
        group.sync();
        group.sync();
        return new IllegalArgumentException("make_pipeline needs a shared state: rank " + group.threadRank()
            + " passed null (every rank of the group must pass the same PipelineSharedState)");
    }

    private PipelineHandle make(Group group, Proposal mine) {
        Making making = new Making(group.threadRank(), mine);
        try {
            group.sync();                                           // #1
        } catch (RuntimeException | Error e) {
            making.end();                       // the group is broken: no #2 to take part in
            throw e;
        }
        making.decide();
        try {
            group.sync();                                           // #2
        } finally {
            making.end();
        }
        return making.handle();
    }

    /** {@code make_pipeline(group, &state)} of one rank in steps: see {@link Making}. */
    public Making beginUnified(Group group) {
        return new Making(group.threadRank(), new Proposal(StageRing.Kind.UNIFIED, group.size(), 0, null));
    }

    /** {@code make_pipeline(group, &state, producerCount)} of one rank in steps: see {@link Making}. */
    public Making beginByCount(Group group, int producerCount) {
        return new Making(group.threadRank(), new Proposal(StageRing.Kind.BY_COUNT, group.size(), producerCount,
            null));
    }

    /** {@code make_pipeline(group, &state, role)} of one rank in steps: see {@link Making}. */
    public Making beginByRole(Group group, PipelineRole role) {
        return new Making(group.threadRank(), new Proposal(StageRing.Kind.BY_ROLE, group.size(), 0, role));
    }

    /**
     * One rank's make, in the steps between which its group syncs, for a caller that syncs the group itself (the
     * SIMT runtime's compiled threads, which give their stacks up at a sync): made (its proposal written), then
     * #1, {@link #decide}, #2, {@link #end} and {@link #handle}. A caller whose sync #1 fails calls {@link #end}
     * only. {@link #make} is these steps with {@code group.sync()} between. Confined to the rank's thread.
     */
    public final class Making {
        private final int rank;
        private final Proposal mine;
        private final boolean mineIn;
        /**
         * Rank 0's make is its group's lead: every rank of the group fails it (OPEN to FAILED) before its #2 when its
         * own verdict fails, and after #2 seals it (OPEN to SEALED) and reads it, so that all get the same answer
         * even when another group's clash was counted between two of their reads.
         */
        private final java.util.concurrent.atomic.AtomicInteger seal = new java.util.concurrent.atomic.AtomicInteger();
        /** The lead this rank saw after #1 (rank 0's make in the map then), or null. */
        private Making lead;
        /**
         * The lead's: the proposals its good verdict judged, by rank (published before its #2 with {@link #ring});
         * null until then, or when its verdict failed. A rank takes a handle only when it is in here.
         */
        private volatile Map<Integer, Making> seen;
        /** The lead's: the ring of its make, created in its decide when its verdict is good (read after #2). */
        private StageRing ring;
        private boolean decided;
        private boolean ended;
        private StageHandle handle;
        private Throwable failure;

        private Making(int rank, Proposal mine) {
            this.rank = rank;
            this.mine = mine;
            this.mineIn = proposals.putIfAbsent(rank, this) == null;
            if (!mineIn) {
                CLASHES.getAndAdd(MakeRendezvous.this, 1);  // counted before #1: the makes it overlaps see it after #1
            }
        }

        /** After #1 (every proposal is written): the verdict; the lead, when it is good, creates the ring. */
        public void decide() {
            decided = true;
            lead = proposals.get(0);    // a group without a clash holds its own slots until its #2: its rank 0's
            try {
                if (!mineIn) {
                    failure = clash(rank);
                } else {
                    Map<Integer, Making> view = new TreeMap<>(proposals);
                    failure = viewVerdict(mine, rank, view);
                    if (failure == null && view.get(0) != lead) {
                        failure = clash(rank);  // slot 0 changed hands since: not this rank's group's rank 0
                    }
                    if (failure == null && lead == this) {
                        ring = ringOf(mine, view);
                        seen = view;            // publishes the ring too: read after #2, or by another group's rank
                    }
                }
            } catch (RuntimeException | Error e) {
                failure = e;                    // still take part in #2: the peers must not wait for this rank
            }
            if (failure != null && lead != null) {
                lead.seal.compareAndSet(OPEN, FAILED);  // before this rank's #2: every peer reads it after #2
            }
        }

        /** Whether {@link #decide} has run. */
        public boolean decided() {
            return decided;
        }

        /**
         * After #2 (every rank has decided), or where the group broke: this rank's proposal goes, or its clash is
         * over. Idempotent.
         */
        public void end() {
            if (ended) {
                return;
            }
            ended = true;
            forget(rank, mineIn);
        }

        /**
         * After {@link #end}: this rank's handle, or the verdict's exception (the same on every rank).
         *
         * @throws IllegalArgumentException when the ranks disagreed or asked for an invalid pipeline
         */
        public PipelineHandle handle() {
            if (failure == null && handle == null) {
                Map<Integer, Making> view = lead == null ? null : lead.seen;
                if (view == null || view.get(rank) != this) {
                    failure = clash(rank);              // the lead judged other ranks: another group's rank 0
                } else {
                    lead.seal.compareAndSet(OPEN, SEALED);  // the first rank past #2 seals: a later clash can't fail it
                    if (lead.seal.get() == FAILED) {
                        failure = clash(rank);          // a peer's verdict (or an overlapping group) failed the make
                    } else {
                        handle = new StageHandle(lead.ring, rank, mine.role() == null ? null
                            : mine.role() == PipelineRole.PRODUCER, memberNumber(mine, rank, view));
                    }
                }
            }
            if (failure instanceof RuntimeException r) {
                throw r;
            }
            if (failure instanceof Error e) {
                throw e;
            }
            return handle;
        }
    }

    private static final int OPEN = 0;
    private static final int FAILED = 1;
    private static final int SEALED = 2;

    /** After #2 (or a broken #1): this rank's proposal goes, or its clash is over. */
    private void forget(int rank, boolean mineIn) {
        if (mineIn) {
            proposals.remove(rank);
        } else {
            CLASHES.getAndAdd(this, -1);
        }
    }

    private static IllegalArgumentException clash(int rank) {
        return new IllegalArgumentException("two threads make a pipeline on one shared state as rank " + rank
            + " at the same time: a shared state belongs to one group at a time (make one per group)");
    }

    /** The ring of a make whose lead's verdict on {@code view} is good. */
    private StageRing ringOf(Proposal p, Map<Integer, Making> view) {
        int producers = switch (p.kind()) {
            case UNIFIED -> p.groupSize();
            case BY_COUNT -> p.producers();
            case BY_ROLE -> (int) view.values().stream().filter(q -> q.mine.role() == PipelineRole.PRODUCER).count();
        };
        int consumers = p.kind() == StageRing.Kind.UNIFIED ? p.groupSize() : p.groupSize() - producers;
        return StageRing.inHeap(p.kind(), p.groupSize(), producers, consumers, settings);
    }

    /**
     * The rank's number on its side: in a role partition, how many lower ranks took the same role in the lead's
     * view; else the rank (a count partition's handle claims its number with its side).
     */
    private static int memberNumber(Proposal mine, int rank, Map<Integer, Making> view) {
        if (mine.kind() != StageRing.Kind.BY_ROLE) {
            return rank;
        }
        int below = 0;
        for (Map.Entry<Integer, Making> e : view.entrySet()) {
            below += e.getKey() < rank && e.getValue().mine.role() == mine.role() ? 1 : 0;
        }
        return below;
    }

    /** Null when every rank asked for the same pipeline and it is a valid one; else the exception for all. */
    private IllegalArgumentException viewVerdict(Proposal mine, int myRank, Map<Integer, Making> view) {
        IllegalArgumentException size = sizeVerdict(mine, myRank);
        if (size != null) {
            return size;
        }
        if (clashes > 0) {
            return clash(myRank);
        }
        Map<Integer, Proposal> all = new TreeMap<>();
        view.forEach((r, m) -> all.put(r, m.mine));
        return verdict(mine, myRank, all);
    }

    /** The group size and rank's checks: null when they are in range. */
    static IllegalArgumentException sizeVerdict(Proposal mine, int myRank) {
        int n = mine.groupSize();
        if (n < 1 || n > PhaseBarrier.MAX_PARTIES) {
            return new IllegalArgumentException("group size must be in 1.." + PhaseBarrier.MAX_PARTIES + ", got " + n);
        }
        if (myRank < 0 || myRank >= n) {
            return new IllegalArgumentException("thread rank must be in 0.." + (n - 1) + ", got " + myRank);
        }
        return null;
    }

    /**
     * Null when every rank of {@code all} (by rank) asked for the same, valid pipeline as {@code mine} and no rank
     * is missing; else the exception for all. The sizes are checked ({@link #sizeVerdict}).
     */
    static IllegalArgumentException verdict(Proposal mine, int myRank, Map<Integer, Proposal> all) {
        IllegalArgumentException size = sizeVerdict(mine, myRank);
        if (size != null) {
            return size;
        }
        int n = mine.groupSize();
        List<String> problems = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            if (!all.containsKey(r)) {
                problems.add("rank " + r + " did not make a pipeline on this shared state (it passed another shared "
                    + "state, or none)");
            }
        }
        if (all.isEmpty()) {
            return new IllegalArgumentException("every thread of the group must make the pipeline the same way, with "
                + "valid arguments: " + String.join("; ", problems));
        }
        Proposal first = all.values().iterator().next();
        for (Map.Entry<Integer, Proposal> e : all.entrySet()) {
            Proposal p = e.getValue();
            boolean sameKind = p.kind() == first.kind() && p.groupSize() == first.groupSize()
                && (p.kind() != StageRing.Kind.BY_COUNT || p.producers() == first.producers());
            if (!sameKind) {
                problems.add("rank " + all.keySet().iterator().next() + " asked for " + first.describe()
                    + " but rank " + e.getKey() + " asked for " + p.describe());
            }
            if (e.getKey() < 0 || e.getKey() >= p.groupSize()) {
                problems.add("rank " + e.getKey() + " is outside 0.." + (p.groupSize() - 1));
            }
            if (p.kind() == StageRing.Kind.BY_ROLE && p.role() == null) {
                problems.add("rank " + e.getKey() + " passed a null role");
            }
        }
        if (problems.isEmpty()) {
            int producers = switch (first.kind()) {
                case UNIFIED -> -1;
                case BY_COUNT -> first.producers();
                case BY_ROLE -> (int) all.values().stream().filter(q -> q.role() == PipelineRole.PRODUCER).count();
            };
            if (producers != -1 && (producers < 1 || producers > n - 1)) {
                String what = first.kind() == StageRing.Kind.BY_COUNT ? "the producer count"
                    : "the number of threads with role PRODUCER";
                problems.add("a partitioned pipeline needs 1.." + (n - 1) + " producers in a group of " + n
                    + " (at least one producer and one consumer); " + what + " is " + producers);
            }
        }
        if (problems.isEmpty()) {
            return null;
        }
        return new IllegalArgumentException("every thread of the group must make the pipeline the same way, with "
            + "valid arguments: " + String.join("; ", problems));
    }

    private static final VarHandle CLASHES;

    static {
        try {
            CLASHES = MethodHandles.lookup().findVarHandle(MakeRendezvous.class, "clashes", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
