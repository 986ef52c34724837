package dev.jpipeline.internal;

import dev.jpipeline.internal.wait.Waiter;

/**
 * Typed access to the engine's state for tests in other packages: reading it, and fast-forwarding a pipeline
 * (round counters, barrier words) to where a long run would have taken it. It uses the engine's package-private
 * members, so a rename fails to compile here instead of failing a test at run time.
 */
public final class EngineProbe {

    private EngineProbe() {
    }

    /** A block-scope handle's side ({@code produced} or the consumed side), its barriers by [group][stage]. */
    public static PhaseBarrier[][] groups(PipelineHandle handle, boolean produced) {
        StageHandle h = (StageHandle) handle;
        return (produced ? h.produced : h.consumed).groups;
    }

    /** The ring behind a block-scope handle. */
    public static Object ring(PipelineHandle handle) {
        return ((StageHandle) handle).ring;
    }

    /** A barrier's word (phase, expected and arrived packed). */
    public static long word(PhaseBarrier barrier) {
        return barrier.snapshot();
    }

    /** Overwrites a barrier's word (one of this process): only while no thread uses it. */
    public static void setWord(PhaseBarrier barrier, long value) {
        barrier.word().publish(value);
    }

    /** Sets a block-scope handle's producer round (fast-forward): only while its owner does not use it. */
    public static void setHeadRound(PipelineHandle handle, long round) {
        ((StageHandle) handle).headRound = round;
    }

    /** Sets a block-scope handle's consumer round (fast-forward): only while its owner does not use it. */
    public static void setTailRound(PipelineHandle handle, long round) {
        ((StageHandle) handle).tailRound = round;
    }

    /** Nodes on a barrier's waiter stack (of this process), live or given up. */
    public static int stackDepth(PhaseBarrier barrier) {
        int n = 0;
        for (Waiter w = ((HeapBarrierWord) barrier.word()).waiters; w != null; w = w.below()) {
            n++;
        }
        return n;
    }
}
