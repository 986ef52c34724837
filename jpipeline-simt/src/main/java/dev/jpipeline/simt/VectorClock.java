package dev.jpipeline.simt;

/**
 * A vector clock over the threads of one block, for checked execution's race detection (RaceDetector): entry r is
 * how many synchronization epochs of block rank r are known to happen-before the owner's present.
 *
 * <pre>
 * A thread's own entry starts at 1 and is ticked after each release, so that its accesses before a release carry an
 * epoch at most the released value and its accesses after it a larger one. Joins take the larger entry. Threads of
 * other blocks have no entry: nothing orders threads of different blocks (RaceDetector). Confined to the turn of a
 * checked launch (one CUDA thread runs at a time): plain fields.
 * </pre>
 */
final class VectorClock {

    private final int[] entries;

    VectorClock(int size) {
        this.entries = new int[size];
    }

    /** A thread's clock: its own entry starts at 1, so that an epoch of 0 is ordered before everything. */
    static VectorClock ofThread(int size, int rank) {
        VectorClock c = new VectorClock(size);
        c.entries[rank] = 1;
        return c;
    }

    int size() {
        return entries.length;
    }

    int get(int rank) {
        return entries[rank];
    }

    /** Starts the owner's next epoch (after a release). */
    void tick(int rank) {
        entries[rank]++;
    }

    /** Takes the larger entry of this and {@code other} in each place. */
    void join(VectorClock other) {
        int[] o = other.entries;
        for (int i = 0; i < entries.length; i++) {
            if (o[i] > entries[i]) {
                entries[i] = o[i];
            }
        }
    }

    VectorClock copy() {
        VectorClock c = new VectorClock(entries.length);
        System.arraycopy(entries, 0, c.entries, 0, entries.length);
        return c;
    }
}
