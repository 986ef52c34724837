package dev.jpipeline.simt;

/**
 * What checked execution found. No CUDA counterpart; the compute-sanitizer tool that finds the same class of bug
 * on a GPU is named with each constant (see docs/checking.md).
 */
public enum FindingKind {
    /**
     * A thread read shared memory that holds no data: never written, a copy that has not landed, or a stage
     * destination released by its consumers (compute-sanitizer initcheck, racecheck).
     */
    POISON_READ,
    /** Threads of one block reached {@code __syncthreads} at different call sites (synccheck). */
    DIVERGENT_BARRIER,
    /**
     * A block or warp barrier that only part of its threads reach: some exited or will never arrive (synccheck;
     * on a GPU a hang or undefined behaviour).
     */
    PARTIAL_BARRIER,
    /** A {@code __syncwarp(mask)} whose mask disagrees with the lanes that arrive (synccheck). */
    WARP_MASK,
    /**
     * A thread of a partitioned pipeline ran the other role's operations (the binary-partitions article's bug;
     * on a GPU a hang).
     */
    ROLE_MIXUP,
    /**
     * Two threads accessed one 4-byte word through the accessors, at least one of them writing, with nothing
     * ordering the two: no {@code __syncthreads}, {@code __syncwarp} or tile sync of both, no pipeline wait or
     * release, barrier phase or landed copy between them, or threads of different blocks. Reported at the first
     * schedule in which both accesses happen, whether or not the result differs (compute-sanitizer racecheck, which
     * watches shared memory only; this finding covers global memory too).
     */
    DATA_RACE,
    /** Every thread is blocked with nothing left to wake it (on a GPU a hang). */
    HANG,
    /** The run threw something else: a thread failed, or the code that checks the result did. */
    FAILURE,
    /** The schedule gave another result than the first schedule of the exploration. */
    RESULT_DIFFERS
}
