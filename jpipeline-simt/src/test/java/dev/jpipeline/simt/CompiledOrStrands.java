package dev.jpipeline.simt;

import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.util.function.Supplier;

/** Runs a kernel compiled or on strands, for tests that compare the two (RegionCompilerFidelityTest, SyncInlinerTest). */
final class CompiledOrStrands {

    private CompiledOrStrands() {
    }

    static void assertCompiled(KernelBody body) {
        ResumptionScan.Verdict verdict = ResumptionScan.scan(body);
        assertNotNull(verdict.compiled(), () -> "not compiled: " + verdict.reason() + " / " + verdict.refusal());
    }

    /** Runs {@code run} with compilation switched off (read at each launch), then restores the switch. */
    static <T> T onStrands(Supplier<T> run) {
        String old = System.getProperty(ResumptionScan.SWITCH);
        System.setProperty(ResumptionScan.SWITCH, "false");
        try {
            return run.get();
        } finally {
            if (old == null) {
                System.clearProperty(ResumptionScan.SWITCH);
            } else {
                System.setProperty(ResumptionScan.SWITCH, old);
            }
        }
    }

    /** Asserts that {@code body} runs compiled on its blocks' schedulers (ResumptionScan's verdict onScheduler). */
    static ResumptionScan.Verdict assertOnScheduler(KernelBody body) {
        ResumptionScan.Verdict verdict = ResumptionScan.scan(body);
        org.junit.jupiter.api.Assertions.assertTrue(verdict.onScheduler(),
            () -> "not compiled on the scheduler: " + verdict.reason() + " / " + verdict.refusal());
        return verdict;
    }

    /** Launches one block of {@code size} threads within {@code bound}: "ok", or the failure's whole report. */
    static String report(KernelBody body, int size, java.time.Duration bound) {
        try {
            org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(bound,
                () -> Kernel.launch(Dim3.of(1), Dim3.of(size), 0, body));
            return "ok";
        } catch (KernelFailure f) {
            return f.getMessage();
        }
    }

    /** A report without its first line and with its times as "N ms": what compiled and strands both say. */
    static String reportBody(String report) {
        int nl = report.indexOf('\n');
        return nl < 0 ? report : report.substring(nl + 1).replaceAll("\\d+ ms", "N ms");
    }

    /** A kernel and what it leaves behind, made afresh for each run. */
    record Case(KernelBody body, Supplier<String> out) {
    }

    /**
     * The outcome of a fresh case compiled (after {@code check} of its body), then of another on strands, both within
     * {@code bound}: {compiled, strands}.
     */
    static String[] both(Dim3 grid, Dim3 block, Supplier<Case> make, java.util.function.Consumer<KernelBody> check,
                         java.time.Duration bound) {
        Case compiled = make.get();
        check.accept(compiled.body());
        String c = org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(bound,
            () -> outcome(grid, block, compiled.body(), compiled.out()), "compiled");
        Case strands = make.get();
        String s = org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(bound,
            () -> onStrands(() -> outcome(grid, block, strands.body(), strands.out())), "strands");
        return new String[] {c, s};
    }

    /**
     * Launches {@code body} and returns its outcome: "ok", or the failure's first line and cause, then {@code out}.
     * A hang's first line says how long strands watched it (compiled: found at once): compared without that.
     */
    static String outcome(Dim3 grid, Dim3 block, KernelBody body, Supplier<String> out) {
        String failure;
        try {
            Kernel.launch(grid, block, 0, body);
            failure = "ok";
        } catch (KernelFailure f) {
            failure = f.getMessage().lines().findFirst().orElse("").replaceAll(" and nothing has changed for \\d+ ms:"
                + "| \\(a compiled block knows at once\\):", "") + " / cause " + f.getCause();
        }
        return failure + " " + out.get();
    }
}
