package dev.jpipeline.internal;

import dev.jpipeline.internal.process.ProcessWaiting;
import java.lang.foreign.MemorySegment;

/** Test support: where things are in a region state's area (RegionStages), for tests that corrupt them. */
public final class RegionProbe {

    private RegionProbe() {
    }

    /** Rank {@code rank}'s slot state, from the area's start. */
    public static long slotStateAt(int rank) {
        return RegionStages.stateAt(rank);
    }

    /** The barrier word of producer {@code member}'s stage {@code stage} in the pipeline {@code area} holds. */
    public static long producedWordAt(MemorySegment area, int member, int stage) {
        return new RegionStages(area, "probe").producedCell(member, stage);
    }

    /** The barrier word of consumer {@code member}'s stage {@code stage} in the pipeline {@code area} holds. */
    public static long consumedWordAt(MemorySegment area, int member, int stage) {
        return new RegionStages(area, "probe").consumedCell(member, stage);
    }

    /** A barrier word at phase {@code phase} expecting {@code expected} arrivals, {@code arrived} of them in. */
    public static long word(int phase, int expected, int arrived) {
        return (long) phase << 41 | (long) expected << 20 | arrived;
    }

    /**
     * Rewinds rank {@code rank}'s cursors to what they held between its last commit's arrival and the cursors'
     * update: the batch it committed last counted as acquired, not committed (a process that dies there).
     */
    public static void rewindLastCommit(MemorySegment area, int rank) {
        RegionStages stages = new RegionStages(area, "probe");
        long committed = stages.committed(rank);
        stages.committed(rank, committed - 1);
        stages.acquired(rank, committed - 1);
    }

    /** Rewinds rank {@code rank}'s release count to what it held between its last release's arrival and update. */
    public static void rewindLastRelease(MemorySegment area, int rank) {
        RegionStages stages = new RegionStages(area, "probe");
        stages.released(rank, stages.released(rank) - 1);
    }

    /** Threads (of all processes) counted asleep in futex on the stage barrier whose cell is at {@code cellAt}. */
    public static int sleepersOn(MemorySegment area, long cellAt) {
        return ProcessWaiting.waiters(area, cellAt + 8);
    }

    /** Rank {@code rank}'s count of copies handed to workers that have not landed (its slot's copies). */
    public static long copiesOf(MemorySegment area, int rank) {
        return new RegionStages(area, "probe").copies(rank);
    }
}
