package dev.jpipeline.simt;

import static dev.jpipeline.simt.CompiledOrStrands.onStrands;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.function.Supplier;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Checked execution of compiled kernels (issue 27, slice 5): each scheduling point of a kernel's method (an
 * accessor, a pipeline operation, a memcpyAsync, a sync) is where a compiled thread hands the turn on without a
 * stack. A schedule must decide exactly as on strands: the same seed gives the same decisions, result and finding,
 * so replay lines printed by either stay valid for both.
 */
class CheckedCompiledTest {

    private static final int N = 8;

    @BeforeEach
    void compilationOn() {
        assumeTrue(ResumptionScan.switchedOn(), "compilation switched off for this run");
    }

    /** CheckedExecutionTest's two-stage block pipeline: each thread copies its float of 4 batches, reads its mirror's. */
    private static Supplier<String> mirror(boolean waits) {
        return () -> Arrays.toString(CheckedExecutionTest.mirror(waits, false));
    }

    /** A Hillis-Steele scan through shared memory: accessors and __syncthreads only. */
    private static Supplier<String> scan(boolean secondSync) {
        return () -> {
            float[] out = new float[N];
            Kernel.launch(Dim3.of(1), Dim3.of(N), 4L * N, ctx -> {
                MemorySegment data = ctx.dynamicShared();
                int t = ctx.threadRank();
                ctx.storeFloat(data, t, t + 1);
                ctx.syncThreads();
                for (int offset = 1; offset < N; offset *= 2) {
                    float add = t >= offset ? ctx.loadFloat(data, t - offset) : 0f;
                    ctx.syncThreads();
                    ctx.storeFloat(data, t, ctx.loadFloat(data, t) + add);
                    if (secondSync) {
                        ctx.syncThreads();
                    }
                }
                out[t] = ctx.loadFloat(data, t);
            });
            return Arrays.toString(out);
        };
    }

    /** The outcome of one schedule: result, finding and how many decisions it made. */
    private static String outcome(long seed, Supplier<String> run) {
        Outcome<String> o = CheckedExecution.replay(Schedule.of(seed), run::get);
        return "decisions " + o.decisions() + ", result " + o.result() + ", finding "
            + (o.finding() == null ? "none" : o.finding().kind() + ": " + o.finding().message());
    }

    /** Runs {@code schedules} seeds compiled and on strands, asks for equal outcomes; returns the distinct ones. */
    private static java.util.Set<String> sameAsStrands(String what, Supplier<Supplier<String>> kernel,
                                                       int schedules) {
        long seed = Long.getLong("jpipeline.simt.seed", System.nanoTime());
        System.out.println("CheckedCompiledTest " + what + " seed " + seed + " (-Djpipeline.simt.seed=" + seed + ")");
        java.util.Set<String> outcomes = new java.util.HashSet<>();
        for (int i = 0; i < schedules; i++) {
            long s = seed + i;
            String compiled = outcome(s, kernel.get());
            String strands = onStrands(() -> outcome(s, kernel.get()));
            assertEquals(strands, compiled, what + ", schedule " + s + " (seed " + seed + "): compiled against strands");
            outcomes.add(compiled.replaceFirst("^decisions \\d+, ", ""));
        }
        return outcomes;
    }

    @Test
    void aPipelineKernelDecidesAsOnStrands() {
        long compiled = Kernel.runs().compiledBlocks();
        sameAsStrands("a correct pipeline", () -> mirror(true), 40);
        assertEquals(40, Kernel.runs().compiledBlocks() - compiled, "each compiled schedule's block ran compiled");
    }

    @Test
    void aReadBeforeTheWaitIsFoundAtTheSameScheduleAsOnStrands() {
        java.util.Set<String> outcomes = sameAsStrands("a read before consumer_wait", () -> mirror(false), 40);
        assertTrue(outcomes.stream().anyMatch(o -> o.contains("finding POISON_READ")),
            "the early read is found in some schedule: " + outcomes);
    }

    @Test
    void aScanDecidesAsOnStrandsAndItsMissingSyncIsFoundAlike() {
        assertEquals(1, sameAsStrands("a scan", () -> scan(true), 40).size(), "a correct scan has one outcome");
        java.util.Set<String> racy = sameAsStrands("a scan without its second sync", () -> scan(false), 40);
        assertTrue(racy.size() > 1 || racy.stream().anyMatch(o -> !o.contains("finding none")),
            "the missing sync shows, as a finding or as results that differ between schedules: " + racy);
    }

    @Test
    void checkedLaunchesOfACompiledKernelRunCompiledAndHandTheTurnOnWithoutAStack() {
        long compiled = Kernel.runs().compiledBlocks();
        long suspended = BlockScheduler.SUSPENSIONS.sum();
        Exploration<String> e = CheckedExecution.explore(20, 1, scan(true)::get);
        assertEquals(null, e.finding(), () -> e.finding().report());
        assertEquals(20, Kernel.runs().compiledBlocks() - compiled, "each schedule's block ran compiled");
        assertTrue(BlockScheduler.SUSPENSIONS.sum() > suspended, "threads waited at syncs without a stack");
    }
}
