package dev.jpipeline;

/**
 * How a thread waits for a stage: a producer for a free stage, a consumer for a committed one. No CUDA
 * counterpart (the GPU's barrier hardware decides); chosen per shared state with
 * {@link PipelineSharedState.Builder#waitStrategy(WaitStrategy)} and applied on both sides.
 *
 * <p>On a virtual thread every strategy parks at once, so that no carrier thread is held by a wait.
 *
 * <pre>
 *   strategy     latency of a hand-off          CPU while waiting            choose when
 *   BUSY_SPIN    lowest (~0.1-0.5 us)           a whole core per waiter      cores to spare, latency first
 *   YIELDING     low                            a core, given up to others   more threads than cores, still hot
 *   ADAPTIVE     low when the peer is quick,    spins a few us, then parks   the default: good for both
 *                parks when it is slow
 *   BLOCKING     a park/unpark (~5-60 us)       none                         long waits, many pipelines
 * </pre>
 */
public enum WaitStrategy {
    /** Spins with {@link Thread#onSpinWait()} until the stage is ready (or the time limit passes). */
    BUSY_SPIN(Long.MAX_VALUE, 0),
    /** Spins briefly, then calls {@link Thread#yield()} until the stage is ready. */
    YIELDING(1 << 7, Long.MAX_VALUE),
    /**
     * Spins for a few microseconds, yields a few times, then parks until the arrival that completes the stage
     * wakes it. The spin phase keeps small rings from collapsing to timer-slack parking (50-60 us per park on
     * a 2-core machine).
     */
    ADAPTIVE(1 << 9, 1 << 6),
    /** Parks at once until the arrival that completes the stage wakes it. */
    BLOCKING(0, 0);

    private final long spins;
    private final long yields;

    /** A strategy parks once it has spun {@code spins} times and yielded {@code yields} times. */
    WaitStrategy(long spins, long yields) {
        this.spins = spins;
        this.yields = yields;
    }

    /** Spin iterations before yielding. */
    long spins() {
        return spins;
    }

    /** Yields before parking. */
    long yields() {
        return yields;
    }
}
