package dev.jpipeline;

/**
 * The built-in strategies: spin a number of times, then yield a number of times, then park. One class for all of
 * them, so that the wait routine's call to {@link #idle(int)} stays monomorphic unless a user plugs in their own.
 */
final class BuiltInWaitStrategy implements WaitStrategy {

    /** Idles never end in a park: the strategy checks until the condition holds or the deadline passes. */
    static final int FOREVER = Integer.MAX_VALUE;

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
        if (attempt < parkFrom || parkFrom == FOREVER) {
            Thread.yield();
            return true;
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
