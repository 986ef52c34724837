package dev.jpipeline.simt.suite;

import dev.jpipeline.simt.Dim3;
import dev.jpipeline.simt.Kernel;
import dev.jpipeline.simt.KernelRuns;
import java.util.ArrayList;
import java.util.List;

/**
 * Prints the labelled suite's table (kernel, label, checked execution's result, schedules until found) and the
 * totals, as docs/checking.md shows them; with {@code --messages}, each finding's message after the table. Run
 * from the module's test classpath: {@code java -cp ... dev.jpipeline.simt.suite.SuiteTable [--messages]}.
 */
final class SuiteTable {

    private SuiteTable() {
    }

    public static void main(String[] args) {
        long start = System.nanoTime();
        List<Verdict> verdicts = new ArrayList<>();
        System.out.println("| kernel (GPUVerify testsuite/CUDA) | label | grid x block | jpipeline (checked, "
            + GpuVerifySuite.SCHEDULES + " schedules) |");
        System.out.println("|---|---|---|---|");
        for (SuiteKernel k : GpuVerifySuite.kernels()) {
            Verdict v = GpuVerifySuite.check(k);
            verdicts.add(v);
            System.out.printf("| `%s` | %s | %s x %s | %s |%n", k.path(),
                k.label() + (k.readsUninitialized() ? " (reads uninitialized)" : ""), dims(k.grid()),
                dims(k.block()), v.describe());
        }
        long seconds = (System.nanoTime() - start) / 1_000_000_000L;
        long racy = count(verdicts, Label.RACY, false);
        long racyFound = count(verdicts, Label.RACY, true);
        long free = count(verdicts, Label.RACE_FREE, false);
        long falsePositives = verdicts.stream().filter(Verdict::falsePositive).count();
        long uninitialized = verdicts.stream().filter(v -> v.kernel().readsUninitialized()).count();
        System.out.println();
        System.out.printf("racy: %d of %d found (%.1f %%); barrier divergence: %d of %d found; race-free: %d, "
                + "false positives %d (%d of them report their uninitialized read); race-free only by assumption: "
                + "%d of %d reported as races; %d kernels in %d s%n",
            racyFound, racy, 100.0 * racyFound / racy, count(verdicts, Label.BARRIER_DIVERGENCE, true),
            count(verdicts, Label.BARRIER_DIVERGENCE, false), free, falsePositives, uninitialized,
            count(verdicts, Label.ASSUMED_RACE_FREE, true), count(verdicts, Label.ASSUMED_RACE_FREE, false),
            verdicts.size(), seconds);
        KernelRuns runs = Kernel.runs();
        System.out.printf("blocks run compiled: %d, on strands: %d%s%n", runs.compiledBlocks(), runs.strandBlocks(),
            runs.fallbacks().isEmpty() ? "" : "; fell back: " + runs.fallbacks());
        if (args.length > 0 && args[0].equals("--messages")) {
            for (Verdict v : verdicts) {
                if (v.found() != null) {
                    System.out.println();
                    System.out.println(v.kernel().path() + ": " + v.found() + ": " + v.message());
                }
            }
        }
    }

    private static long count(List<Verdict> verdicts, Label label, boolean agreeing) {
        return verdicts.stream().filter(v -> v.kernel().label() == label && (!agreeing || v.agrees())).count();
    }

    private static String dims(Dim3 d) {
        return d.y() == 1 && d.z() == 1 ? Integer.toString(d.x()) : "(" + d.x() + ", " + d.y() + ")";
    }
}
