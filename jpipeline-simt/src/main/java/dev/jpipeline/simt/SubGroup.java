package dev.jpipeline.simt;

import dev.jpipeline.Group;

/**
 * One thread's view of a group of consecutive threads with a barrier of their own: a warp
 * ({@code tiled_partition<32>} / {@code coalesced_threads()} of a converged warp), a tiled partition, or the
 * whole grid of a cooperative launch ({@code this_grid()}).
 */
final class SubGroup implements Group {

    private final String name;
    private final int size;
    private final int rank;
    private final SyncSite barrier;

    SubGroup(String name, int size, int rank, SyncSite barrier) {
        this.name = name;
        this.size = size;
        this.rank = rank;
        this.barrier = barrier;
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    public int threadRank() {
        return rank;
    }

    @Override
    public void sync() {
        barrier.arriveAndWait();
    }

    @Override
    public String toString() {
        return name + " (rank " + rank + " of " + size + ")";
    }
}
