package dev.jpipeline.internal;

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
}
