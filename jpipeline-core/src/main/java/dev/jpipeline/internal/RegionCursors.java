package dev.jpipeline.internal;

import dev.jpipeline.internal.copy.CopyLanding;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A system-scope handle's {@link HandleEvents}: writes its cursors to its rank's slot of the shared region after
 * each operation ({@link RegionStages}), so that a survivor can leave for it if its process dies
 * ({@link RegionReaper}); counts its copies handed to workers there until they land ({@link CountedLanding}),
 * which the next make waits for; and moves its slot's state when it leaves, which decides a race with a survivor
 * that leaves for it.
 *
 * <p>Slot writes are release stores of the owner (RegionStages); a reader in another process reads them after
 * finding the rank's process dead, when the owner writes no more.
 */
final class RegionCursors extends HandleEvents {

    private final RegionStages region;
    private final int rank;
    /** The landings in flight of this mapping's handles on the state, which closing the mapping waits for. */
    private final AtomicLong landings;
    /** Per stage, the landing that counts a copy in the rank's slot; created at the stage's first copy. */
    private final CountedLanding[] counted;

    RegionCursors(RegionStages region, int rank, AtomicLong landings, int stages) {
        this.region = region;
        this.rank = rank;
        this.landings = landings;
        this.counted = new CountedLanding[stages];
    }

    @Override
    void acquired(int stage, long round, long batch, long start) {
        region.acquired(rank, batch);
    }

    @Override
    void committed(int stage, long batch, long start) {
        region.committed(rank, batch + 1);
    }

    @Override
    CopyLanding copying(int stage, long round, long batch, long start, MemorySegment dst, CopyLanding landing) {
        CountedLanding l = counted[stage];
        if (l == null) {
            l = counted[stage] = new CountedLanding(landing);     // the stage's: the same object every batch
        }
        return l;
    }

    @Override
    void released(int stage, long round, long batch, long start) {
        region.released(rank, batch + 1);
    }

    @Override
    void sideTaken(boolean producer, int member) {
        region.side(rank, producer ? RegionStages.PRODUCER : RegionStages.CONSUMER, member);
    }

    /**
     * Moves the slot from ACTIVE to the departure's state: false when it is not ACTIVE (a survivor left for the
     * rank already, its process taken for dead).
     *
     * @throws IllegalStateException on quit, when the slot is corrupted: its place is then nobody's to settle
     */
    @Override
    boolean leaving(Departure how) {
        int state = switch (how) {
            case QUIT -> RegionStages.QUIT;
            case ENDED -> RegionStages.ENDED;
            case CLOSED -> RegionStages.CLOSED;
        };
        if (region.casState(rank, RegionStages.ACTIVE, state)) {
            return true;
        }
        if (how == Departure.QUIT) {
            region.state(rank);     // throws when the slot holds none of the states
        }
        return false;
    }

    /**
     * A copy into one stage, counted in the rank's slot from its hand-off until after its landing
     * (RegionStages.copies): a make waits for the count, because a copy may outlive its producer's quit and would
     * land in the next pipeline's stage. Counted in this process too, until the landing is done with the mapped
     * memory ({@link #landings}): closing the mapping waits for that.
     */
    private final class CountedLanding implements CopyLanding {
        private final CopyLanding target;

        CountedLanding(CopyLanding target) {
            this.target = target;
        }

        @Override
        public void copyHandedOff() {
            landings.incrementAndGet();
            region.copies(rank, 1);
            target.copyHandedOff();
        }

        @Override
        public void copyLanded(Throwable failure) {
            try {
                target.copyLanded(failure);
            } finally {
                try {
                    region.copies(rank, -1);
                } finally {
                    landings.decrementAndGet();     // last: closing the mapping waits for this (RegionLocals)
                }
            }
        }
    }
}
