package dev.jpipeline.simt;

import java.util.Arrays;

/**
 * The frames of a compiled block's threads (RegionCompiler): each thread's resumption state, and the locals that
 * live across its {@code __syncthreads}, thread r's at [r * width, (r + 1) * width) of a primitive array (int,
 * float and double as long bits) and a reference array. Kept by a strand and reused for its next block, grown
 * when a block needs more; confined to that strand.
 */
final class RegionFrames {

    private int[] states = new int[0];
    private long[] prims = new long[0];
    private Object[] refs = new Object[0];

    /** The states a block with no sync and no loop passes: its loop (RegionCompiler.plainRegion) reads none. */
    int[] unusedStates() {
        return states;
    }

    /** The states of a block of {@code size} threads, each 0 (not started). */
    int[] states(int size) {
        if (states.length < size) {
            states = new int[size];
        } else {
            Arrays.fill(states, 0, size, 0);
        }
        return states;
    }

    long[] prims(int cells) {
        if (prims.length < cells) {
            prims = new long[cells];
        }
        return prims;
    }

    Object[] refs(int cells) {
        if (refs.length < cells) {
            refs = new Object[cells];
        }
        return refs;
    }

    /** Drops the references a block left, so that a kept frame holds no kernel's objects alive. */
    void clear(int cells) {
        Arrays.fill(refs, 0, Math.min(cells, refs.length), null);
    }
}
