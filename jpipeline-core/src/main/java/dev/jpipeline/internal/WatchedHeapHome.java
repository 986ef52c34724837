package dev.jpipeline.internal;

import dev.jpipeline.internal.wait.StallWatch;

/**
 * A heap ring watched by a {@link HangDetector}: it reports a hang when every thread of the pipeline is stuck, and
 * abandons handles whose threads ended without quit. A handle's stalled wait asks it (the handle is its own
 * StallWatch), and so does a run of timed waits that give up, every quarter of the patience of polling: a peer that
 * polls with short timeouts never stalls inside one wait.
 */
final class WatchedHeapHome extends HeapHome {

    private final long patienceNanos;
    /** Set by attach, once, before any handle exists (the ring's constructor publishes it with the ring). */
    private HangDetector detector;

    WatchedHeapHome(int stages, int producers, int consumers, int groupSize, long patienceNanos) {
        super(stages, producers, consumers, groupSize);
        this.patienceNanos = patienceNanos;
    }

    @Override
    void attach(StageRing ring) {
        detector = new HangDetector(patienceNanos, "pipeline deadlock: every thread of the " + ring.describe()
            + " is stuck", ring::signature, ring::stageStates);
    }

    @Override
    void joined(StageHandle handle) {
        detector.register(handle);
    }

    @Override
    StallWatch stallWatch(StageHandle handle) {
        return handle;
    }

    @Override
    long patienceNanos() {
        return patienceNanos;
    }

    @Override
    String check() {
        return detector.check();
    }
}
