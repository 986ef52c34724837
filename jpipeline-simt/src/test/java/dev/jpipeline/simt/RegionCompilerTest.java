package dev.jpipeline.simt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Kernels with __syncthreads compiled into regions (RegionCompiler, issue 27 slice 2). */
class RegionCompilerTest {

    @BeforeEach
    void compilationOn() {
        assumeTrue(ResumptionScan.switchedOn(), "compilation switched off for this run");
    }

    private static ResumptionScan.Verdict compiled(KernelBody body) {
        ResumptionScan.Verdict verdict = ResumptionScan.scan(body);
        assertNotNull(verdict.compiled(), () -> "not compiled: " + verdict.reason() + " / " + verdict.refusal());
        return verdict;
    }

    @Test
    void aBlockReductionGivesTheSameSumAsALoop() {
        int threads = 256;
        int blocks = 64;
        MemorySegment in = Arena.ofAuto().allocate(4L * threads * blocks);
        MemorySegment out = Arena.ofAuto().allocate(4L * blocks);
        for (int i = 0; i < threads * blocks; i++) {
            in.setAtIndex(ValueLayout.JAVA_FLOAT, i, (i % 97) * 0.5f);
        }
        KernelBody body = ctx -> {
            MemorySegment partial = ctx.sharedArray("partial", 4L * ctx.blockDim().x());
            int t = ctx.threadRank();
            partial.setAtIndex(ValueLayout.JAVA_FLOAT, t, in.getAtIndex(ValueLayout.JAVA_FLOAT, ctx.globalRank()));
            ctx.syncThreads();
            for (int stride = ctx.blockDim().x() / 2; stride > 0; stride >>= 1) {
                if (t < stride) {
                    float a = partial.getAtIndex(ValueLayout.JAVA_FLOAT, t);
                    float b = partial.getAtIndex(ValueLayout.JAVA_FLOAT, t + stride);
                    partial.setAtIndex(ValueLayout.JAVA_FLOAT, t, a + b);
                }
                ctx.syncThreads();
            }
            if (t == 0) {
                out.setAtIndex(ValueLayout.JAVA_FLOAT, ctx.blockIdx().x(), partial.getAtIndex(ValueLayout.JAVA_FLOAT, 0));
            }
        };
        ResumptionScan.Verdict verdict = compiled(body);
        assertEquals(2, verdict.compiled().syncs());
        long before = Launch.COMPILED_BLOCKS.sum();
        Kernel.launch(Dim3.of(blocks), Dim3.of(threads), 0, body);
        assertEquals(blocks, Launch.COMPILED_BLOCKS.sum() - before);
        for (int b = 0; b < blocks; b++) {
            float[] partial = new float[threads];
            for (int t = 0; t < threads; t++) {
                partial[t] = in.getAtIndex(ValueLayout.JAVA_FLOAT, (long) b * threads + t);
            }
            for (int stride = threads / 2; stride > 0; stride >>= 1) {
                for (int t = 0; t < stride; t++) {
                    partial[t] += partial[t + stride];
                }
            }
            assertEquals(partial[0], out.getAtIndex(ValueLayout.JAVA_FLOAT, b), "block " + b);
        }
    }
}
