package dev.jpipeline.simt;

import static dev.jpipeline.MemcpyAsync.memcpyAsync;
import static dev.jpipeline.simt.CompiledOrStrands.onStrands;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
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

    /** A two-stage block pipeline: each thread copies its float of 4 batches and reads its mirror's. */
    private static Supplier<String> mirror(boolean waits) {
        MemorySegment in = Arena.ofAuto().allocate(4L * N * 4, 16);
        for (int i = 0; i < N * 4; i++) {
            in.setAtIndex(ValueLayout.JAVA_FLOAT, i, i);
        }
        return () -> {
            float[] out = new float[N * 4];
            Kernel.launch(Dim3.of(1), Dim3.of(N), 4L * N * 2, ctx -> {
                PipelineSharedState st = ctx.shared("s", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
                Pipeline p = Pipeline.make(ctx.block(), st);
                MemorySegment sm = ctx.dynamicShared();
                int t = ctx.threadRank();
                for (int b = 0; b < 4; b++) {
                    MemorySegment stage = sm.asSlice(4L * N * (b % 2), 4L * N);
                    p.producerAcquire();
                    memcpyAsync(ctx.block(), stage, in.asSlice(4L * N * b, 4L * N), 4L * N, p);
                    p.producerCommit();
                    if (waits) {
                        p.consumerWait();
                    }
                    out[b * N + t] = ctx.loadFloat(stage, N - 1 - t);
                    if (!waits) {
                        p.consumerWait();
                    }
                    p.consumerRelease();
                }
                p.quit();
            });
            return Arrays.toString(out);
        };
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

    private static void sameAsStrands(String what, Supplier<Supplier<String>> kernel, int schedules) {
        long seed = Long.getLong("jpipeline.simt.seed", System.nanoTime());
        System.out.println("CheckedCompiledTest " + what + " seed " + seed + " (-Djpipeline.simt.seed=" + seed + ")");
        for (int i = 0; i < schedules; i++) {
            long s = seed + i;
            String compiled = outcome(s, kernel.get());
            String strands = onStrands(() -> outcome(s, kernel.get()));
            assertEquals(strands, compiled, what + ", schedule " + s + " (seed " + seed + "): compiled against strands");
        }
    }

    @Test
    void aPipelineKernelDecidesAsOnStrands() {
        long compiled = Kernel.runs().compiledBlocks();
        sameAsStrands("a correct pipeline", () -> mirror(true), 40);
        assertEquals(40, Kernel.runs().compiledBlocks() - compiled, "each compiled schedule's block ran compiled");
    }

    @Test
    void aReadBeforeTheWaitIsFoundAtTheSameScheduleAsOnStrands() {
        sameAsStrands("a read before consumer_wait", () -> mirror(false), 40);
    }

    @Test
    void aScanDecidesAsOnStrandsAndItsMissingSyncIsFoundAlike() {
        sameAsStrands("a scan", () -> scan(true), 40);
        sameAsStrands("a scan without its second sync", () -> scan(false), 40);
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
