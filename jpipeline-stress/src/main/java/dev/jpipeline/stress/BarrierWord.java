package dev.jpipeline.stress;

import dev.jpipeline.internal.PhaseBarrier;

/**
 * A barrier's state as one number for a jcstress result: {@code phase * 100 + expected * 10 + arrived}, readable
 * in the results table while every count in the tests stays below 10.
 */
final class BarrierWord {

    private BarrierWord() {
    }

    /** The state of {@code barrier} now, as {@code phase * 100 + expected * 10 + arrived}. */
    static int of(PhaseBarrier barrier) {
        return barrier.phase() * 100 + barrier.expected() * 10 + barrier.arrived();
    }
}
