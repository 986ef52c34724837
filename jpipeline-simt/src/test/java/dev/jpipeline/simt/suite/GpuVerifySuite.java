package dev.jpipeline.simt.suite;

import dev.jpipeline.simt.CheckedExecution;
import dev.jpipeline.simt.Exploration;
import java.util.ArrayList;
import java.util.List;

/**
 * The ported GPUVerify CUDA kernels, and what checked execution says about each against its label.
 *
 * <p>Checked execution runs each kernel under seeded schedules and stops at the first finding. A racy kernel is
 * found when the finding is of its label's kind; a race-free kernel passes when no schedule gives a finding (a
 * kernel that reads shared memory nothing wrote passes with that read reported as {@code POISON_READ}, and with
 * no race before it).
 */
final class GpuVerifySuite {

    /** Schedules per kernel: the budget ("found within 100 schedules"). */
    static final int SCHEDULES = 100;

    private GpuVerifySuite() {
    }

    static List<SuiteKernel> kernels() {
        List<SuiteKernel> all = new ArrayList<>();
        all.addAll(SharedMemoryKernels.all());
        all.addAll(GlobalMemoryKernels.all());
        all.addAll(CooperativeGroupKernels.all());
        all.addAll(MemcpyKernels.all());
        all.addAll(AtomicKernels.all());
        all.addAll(AssumptionKernels.all());
        return all;
    }

    /** Explores {@code kernel} under {@link #SCHEDULES} schedules, from seed 1, and judges the outcome. */
    static Verdict check(SuiteKernel kernel) {
        Exploration<Object> e = CheckedExecution.explore(SCHEDULES, 1, kernel.run());
        return e.finding() == null ? new Verdict(kernel, null, e.schedulesRun(), "")
            : new Verdict(kernel, e.finding().kind(), e.schedulesRun(), e.finding().message());
    }
}
