package dev.jpipeline.simt.suite;

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
        long racy = verdicts.stream().filter(v -> v.kernel().label() == Label.RACY).count();
        long racyFound = verdicts.stream().filter(v -> v.kernel().label() == Label.RACY && v.agrees()).count();
        long divergent = verdicts.stream().filter(v -> v.kernel().label() == Label.BARRIER_DIVERGENCE).count();
        long divergentFound = verdicts.stream()
            .filter(v -> v.kernel().label() == Label.BARRIER_DIVERGENCE && v.agrees()).count();
        long free = verdicts.stream().filter(v -> v.kernel().label() == Label.RACE_FREE).count();
        long falsePositives = verdicts.stream().filter(Verdict::falsePositive).count();
        long uninitialized = verdicts.stream().filter(v -> v.kernel().readsUninitialized()).count();
        System.out.println();
        System.out.printf("racy: %d of %d found (%.1f %%); barrier divergence: %d of %d found; race-free: %d, "
                + "false positives %d (%d of them report their uninitialized read); %d kernels in %d s%n",
            racyFound, racy, 100.0 * racyFound / racy, divergentFound, divergent, free, falsePositives,
            uninitialized, verdicts.size(), seconds);
        if (args.length > 0 && args[0].equals("--messages")) {
            for (Verdict v : verdicts) {
                if (v.found() != null) {
                    System.out.println();
                    System.out.println(v.kernel().path() + ": " + v.found() + ": " + v.message());
                }
            }
        }
    }

    private static String dims(dev.jpipeline.simt.Dim3 d) {
        return d.y() == 1 && d.z() == 1 ? Integer.toString(d.x()) : "(" + d.x() + ", " + d.y() + ")";
    }
}
