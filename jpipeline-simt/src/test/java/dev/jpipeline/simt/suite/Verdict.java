package dev.jpipeline.simt.suite;

import dev.jpipeline.simt.FindingKind;

/**
 * Checked execution's result on one suite kernel, judged against the kernel's label.
 *
 * @param kernel    the kernel
 * @param found     the kind of the first finding, or null when every schedule ran clean
 * @param schedules the schedules run: up to and including the finding's, or all of them
 * @param message   the finding's message, empty when there is none
 */
record Verdict(SuiteKernel kernel, FindingKind found, int schedules, String message) {

    static Verdict of(SuiteKernel kernel, FindingKind found, int schedules) {
        return new Verdict(kernel, found, schedules, "");
    }

    /** Whether the result agrees with the label. */
    boolean agrees() {
        return switch (kernel.label()) {
            case RACY, BARRIER_DIVERGENCE, ASSUMED_RACE_FREE -> found != null && kernel.label().detectedAs.contains(found);
            case RACE_FREE -> kernel.readsUninitialized() ? found == FindingKind.POISON_READ : found == null;
        };
    }

    /** A race or barrier finding on a kernel GPUVerify verified. */
    boolean falsePositive() {
        return kernel.label() == Label.RACE_FREE && found != null && found != FindingKind.POISON_READ;
    }

    /** The table's cell: what checked execution reported, and how it compares. */
    String describe() {
        String what = found == null ? "clean in " + schedules + " schedules" : found + " at schedule " + schedules;
        if (agrees()) {
            return what;
        }
        return what + (falsePositive() ? " (FALSE POSITIVE)" : " (MISSED)");
    }
}
