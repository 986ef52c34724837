package dev.jpipeline;

/**
 * The built-in strategies: spin a number of times, then yield a number of times, then park. One class for all of
 * them, so that the wait routine's call to {@link #idle(int)} stays monomorphic unless a user plugs in their own.
 * A strategy that parks in the end stops yielding at the first yield that ran another thread for a while (longer
 * than {@link #SLOW_YIELD_NANOS}): the core is shared, and each further yield hands it to that thread (beside busy
 * loops, the old ADAPTIVE's 64 yields cost a 1P/1C pipeline five times its time; this rule alone halved that, and
 * ADAPTIVE now has no yields: docs/performance.md, section 26). It parks instead, which frees the core until its
 * condition is met.
 */
final class BuiltInWaitStrategy implements WaitStrategy {

    /** Idles never end in a park: the strategy checks until the condition holds or the deadline passes. */
    static final int FOREVER = Integer.MAX_VALUE;
    /**
     * A yield that takes longer ran another thread: on a core with nothing else to run, {@link Thread#yield()}
     * returns in about a microsecond.
     */
    static final long SLOW_YIELD_NANOS = 50_000;

    private final String name;
    private final int spins;
    /** The attempt from which the strategy parks: spins + yields, saturated. */
    private final int parkFrom;

    BuiltInWaitStrategy(String name, int spins, int yields) {
        if (spins < 0 || yields < 0) {
            throw new IllegalArgumentException("a wait strategy needs spins >= 0 and yields >= 0, got " + spins
                + " spins and " + yields + " yields");
        }
        this.name = name;
        this.spins = spins;
        this.parkFrom = (int) Math.min(FOREVER, (long) spins + yields);
    }

    @Override
    public boolean idle(int attempt) {
        if (attempt < spins) {
            Thread.onSpinWait();
            return true;
        }
        if (parkFrom == FOREVER) {
            Thread.yield();
            return true;
        }
        if (attempt < parkFrom) {
            long start = System.nanoTime();
            Thread.yield();
            return System.nanoTime() - start < SLOW_YIELD_NANOS;   // a slow yield: park rather than yield again
        }
        return false;
    }

    /** A strategy that spins and then parks backs off on a busy machine (see {@link WaitStrategy#backsOffWhenBusy}). */
    @Override
    public boolean backsOffWhenBusy() {
        return spins > 0 && parkFrom != FOREVER;
    }

    @Override
    public String toString() {
        return name;
    }
}
