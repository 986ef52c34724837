package dev.jpipeline;

/**
 * How a thread idles while it waits: a producer for a free stage, a consumer for a committed one, a thread for a
 * barrier phase or for its own copies. No CUDA counterpart (the GPU's barrier hardware decides); chosen per
 * shared state with {@link PipelineSharedState.Builder#waitStrategy(WaitStrategy)} and applied on both sides.
 *
 * <p>A waiting platform thread first checks its condition; while it is not met, it calls {@link #idle(int)} with
 * the number of checks that failed so far, and checks again when {@code idle} returns {@code true}. When
 * {@code idle} returns {@code false} the thread parks until the arrival that meets its condition wakes it (or its
 * deadline passes, or it is interrupted). A virtual thread parks at once, whatever the strategy, so that no
 * carrier thread is ever held by a wait. Deadlines and interrupts are honoured under every strategy.
 *
 * <pre>
 *   strategy     latency of a hand-off          CPU while waiting            choose when
 *   BUSY_SPIN    lowest (~0.1-0.5 us)           a whole core per waiter      cores to spare, latency first
 *   YIELDING     low                            a core, given up to others   more threads than cores, still hot
 *   ADAPTIVE     low when the peer is quick,    spins a few us, then parks   the default: good for both
 *                parks when it is slow
 *   BLOCKING     a park/unpark (~5-60 us)       none                         long waits, many pipelines
 * </pre>
 *
 * <p>A strategy of one's own, for example spinning ten times longer than {@link #ADAPTIVE} before parking:
 * <pre>{@code
 * WaitStrategy patient = attempt -> { Thread.onSpinWait(); return attempt < 5_000; };
 * }</pre>
 */
@FunctionalInterface
public interface WaitStrategy {

    /** Spins with {@link Thread#onSpinWait()} until the condition is met (or the time limit passes). */
    WaitStrategy BUSY_SPIN = new BuiltInWaitStrategy("BUSY_SPIN", BuiltInWaitStrategy.FOREVER, 0);
    /** Spins briefly (128 times), then calls {@link Thread#yield()} until the condition is met. */
    WaitStrategy YIELDING = new BuiltInWaitStrategy("YIELDING", 1 << 7, BuiltInWaitStrategy.FOREVER);
    /**
     * Spins for a few microseconds (512 times), then parks until the arrival that meets the condition wakes it. The
     * spin phase keeps small rings from collapsing to timer-slack parking (50-60 us per park on a 2-core machine).
     * It does not yield: on a machine busy with other work, every yield hands the core to that work, and a 1P/1C
     * pipeline that also yielded 64 times before parking ran at 0.18-0.21 of a plain loop's speed beside two busy
     * loops, against 0.95-0.96 without the yields (docs/performance.md, section 26).
     */
    WaitStrategy ADAPTIVE = new BuiltInWaitStrategy("ADAPTIVE", 1 << 9, 0);
    /** Parks at once until the arrival that meets the condition wakes it. */
    WaitStrategy BLOCKING = new BuiltInWaitStrategy("BLOCKING", 0, 0);

    /**
     * A strategy that spins {@code spins} times ({@link Thread#onSpinWait()}), then yields {@code yields} times,
     * then parks; {@link Integer#MAX_VALUE} yields never park. A strategy that parks stops yielding at the first
     * yield that ran another thread for more than 50 us, and parks.
     *
     * @param spins  spins before the first yield, 0 or more
     * @param yields yields before parking, 0 or more ({@link Integer#MAX_VALUE}: never park)
     * @return the strategy
     * @throws IllegalArgumentException when a count is negative
     */
    static WaitStrategy spinYieldPark(int spins, int yields) {
        return new BuiltInWaitStrategy("spinYieldPark(" + spins + ", " + yields + ")", spins, yields);
    }

    /**
     * Idles once after the condition was found unmet for the {@code attempt}-th time (counted from 0; it saturates
     * at {@link Integer#MAX_VALUE}). Called on platform threads only.
     *
     * @param attempt how many times the condition was found unmet before, from 0
     * @return {@code true} to check the condition again, {@code false} to park until woken
     */
    boolean idle(int attempt);

    /**
     * Whether a wait under this strategy parks at once, without spinning, while the machine is seen oversubscribed
     * (a waiter lately found its spins or yields descheduled for a time slice): a spinning waiter then only takes a
     * core from the thread it waits for. {@code true} for the built-in strategies that spin and then park
     * ({@link #ADAPTIVE}, {@link #spinYieldPark}); {@code false} for {@link #BUSY_SPIN} (the user's explicit
     * choice), {@link #YIELDING} (it gives its core away already), {@link #BLOCKING} (it never spins) and, by
     * default, a user's own strategy. No CUDA counterpart.
     *
     * @return whether waits back off on a busy machine
     */
    default boolean backsOffWhenBusy() {
        return false;
    }
}
