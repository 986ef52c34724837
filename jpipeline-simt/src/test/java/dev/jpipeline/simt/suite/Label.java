package dev.jpipeline.simt.suite;

import dev.jpipeline.simt.FindingKind;
import java.util.Set;

/**
 * A suite kernel's label, as GPUVerify's test suite gives it, and the findings of checked execution that agree
 * with it.
 */
enum Label {
    /** GPUVerify: {@code //xfail} with a data race (write-write or read-write). */
    RACY(Set.of(FindingKind.DATA_RACE)),
    /** GPUVerify: {@code //pass}, verified free of races and of barrier divergence. */
    RACE_FREE(Set.of()),
    /**
     * GPUVerify: {@code //pass}, but only under an assumption that CUDA does not give: lanes of a warp in lockstep
     * ({@code --warp-sync}; since Volta, sm_70, they are not, and {@code __syncwarp} is needed), or writes of one
     * value by several threads being benign (the CUDA memory model makes them a data race). Checked execution
     * follows CUDA and reports the race; these kernels are counted apart from the racy and race-free ones.
     */
    ASSUMED_RACE_FREE(Set.of(FindingKind.DATA_RACE)),
    /** GPUVerify: {@code //xfail}, a barrier reached by part of the threads only. */
    BARRIER_DIVERGENCE(Set.of(FindingKind.DIVERGENT_BARRIER, FindingKind.PARTIAL_BARRIER));

    /** The findings that name the bug this label reports; empty for a race-free kernel. */
    final Set<FindingKind> detectedAs;

    Label(Set<FindingKind> detectedAs) {
        this.detectedAs = detectedAs;
    }
}
