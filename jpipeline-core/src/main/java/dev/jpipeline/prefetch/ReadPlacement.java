package dev.jpipeline.prefetch;

/**
 * Where a feed's file reads run, chosen by timing both places as the loop runs (issue 25):
 * <ul>
 *   <li>{@link Place#AHEAD}: issued up to {@code stages} chunks ahead on the copy engine, whose workers read while
 *       the loop computes. It wins where a core is free for them.</li>
 *   <li>{@link Place#HERE}: each chunk read by the iterating thread when the loop reaches it, as the plain read loop
 *       does. It wins where no core is free: beside a CPU hog, a worker waits for time slices while the loop waits
 *       for the worker.</li>
 * </ul>
 *
 * <pre>
 *   window   : chunks advanced in one place, at least WINDOW_BYTES and MIN_WINDOW_CHUNKS of them, timed from the
 *              advance that opens it to the one that closes it (the loop's own work included: the same in both
 *              places within one feed). It opens SETTLE (the feed's stages) chunks after a change of place or the
 *              feed's start, once the chunks issued the old way have drained
 *   ratio    : JVM-wide, HERE's cost per byte over AHEAD's, a moving mean (each new pair weighs 1/4) of pairs of
 *              windows that one feed timed back to back, one in each place: a ratio, not a cost, because what a
 *              byte costs depends on each loop's work, while which place wins depends on the machine. 0 until the
 *              first pair
 *   choice   : HERE while the ratio is below 1, else AHEAD; every EXPLORE_EVERY-th window of the JVM (a racy
 *              count) is timed in the other place, and the window after it in the chosen place again, which makes
 *              a pair. So a change of load is noticed within a few explorations, at a cost of one window in eight
 *              spent in the slower place
 * </pre>
 *
 * One instance per feed, confined to its iterating thread. The ratio and the count are JVM-wide hints written
 * without ordering: a lost or stale update costs a window in the slower place, never correctness.
 */
final class ReadPlacement {

    /** Where reads run. */
    enum Place {
        /** On the copy engine, issued ahead of the loop. */
        AHEAD,
        /** On the iterating thread, when the loop reaches the chunk. */
        HERE
    }

    /** A window spans at least this many bytes (so that a window lasts milliseconds, not microseconds). */
    static final long WINDOW_BYTES = 16L << 20;
    /** ... and at least this many chunks. */
    static final int MIN_WINDOW_CHUNKS = 4;
    /** One window in this many (JVM-wide) is timed in the place not chosen. */
    static final int EXPLORE_EVERY = 8;

    /** HERE's cost over AHEAD's, as double bits; 0 = no pair timed yet. */
    private static volatile long ratioBits;
    /** Windows closed in this JVM since the last exploration (racy). */
    private static volatile int sinceExplore;

    private final int settleChunks;
    private final long windowChunks;
    private Place place;
    /** Chunks still to pass before the current window opens. */
    private int settling;
    /** Chunks and bytes in the open window, and when it opened. */
    private long chunks;
    private long bytes;
    private long openedAt;
    /** The cost per byte of this feed's last window in each place (0: none), and in which place the last was. */
    private double lastAhead;
    private double lastHere;
    private Place lastTimed;

    /**
     * @param stages the feed's stages: chunks issued the old way drain within this many advances
     * @param chunk  the feed's chunk size in bytes
     */
    ReadPlacement(int stages, long chunk) {
        this.settleChunks = stages;
        this.windowChunks = Math.max(MIN_WINDOW_CHUNKS, (WINDOW_BYTES + chunk - 1) / Math.max(1, chunk));
        this.settling = stages;
        this.place = chosen();
    }

    /** Where the next chunks' reads run. */
    Place place() {
        return place;
    }

    /**
     * The loop advanced to a chunk of {@code length} bytes at {@code now} (the chunk is in hand): closes a window
     * when it is full, and may change {@link #place()}.
     */
    void advanced(long length, long now) {
        if (settling > 0) {
            if (--settling == 0) {
                open(now);
            }
            return;
        }
        chunks++;
        bytes += length;
        if (chunks < windowChunks || bytes == 0) {
            return;
        }
        timed(place, (double) (now - openedAt) / bytes);
        Place next = chosen();
        int windows = sinceExplore + 1;
        if (windows >= EXPLORE_EVERY || ratio() == 0) {
            windows = 0;
            next = place == Place.AHEAD ? Place.HERE : Place.AHEAD;     // explore (or find the first pair)
        }
        sinceExplore = windows;
        if (next != place) {
            place = next;
            settling = settleChunks;
        } else {
            open(now);
        }
    }

    private void open(long now) {
        openedAt = now;
        chunks = 0;
        bytes = 0;
    }

    /** A window in {@code where} cost {@code nanosPerByte}: with the window before it in the other place, a pair. */
    private void timed(Place where, double nanosPerByte) {
        double cost = Math.max(nanosPerByte, Double.MIN_NORMAL);
        if (where == Place.AHEAD) {
            lastAhead = cost;
        } else {
            lastHere = cost;
        }
        if (lastTimed != null && lastTimed != where) {
            double pair = lastHere / lastAhead;
            double old = ratio();
            ratioBits = Double.doubleToRawLongBits(old == 0 ? pair : old + (pair - old) / 4);
        }
        lastTimed = where;
    }

    /** HERE's cost over AHEAD's, JVM-wide; 0 before the first pair. */
    static double ratio() {
        return Double.longBitsToDouble(ratioBits);
    }

    /** The place the ratio chooses. */
    static Place chosen() {
        double r = ratio();
        return r != 0 && r < 1 ? Place.HERE : Place.AHEAD;
    }

    /** Sets the ratio (tests): below 1 chooses HERE, 0 forgets every pair. */
    static void setRatio(double ratio) {
        ratioBits = Double.doubleToRawLongBits(ratio);
        sinceExplore = 0;
    }
}
