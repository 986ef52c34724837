package dev.jpipeline.simt.suite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.simt.Dim3;
import dev.jpipeline.simt.FindingKind;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The labelled GPUVerify suite under checked execution: every racy kernel is reported as a data race (every
 * divergent one as a barrier finding) within {@link GpuVerifySuite#SCHEDULES} schedules, and no race-free kernel
 * gives a finding other than its declared uninitialized read.
 */
@Timeout(120)
class GpuVerifySuiteTest {

    static List<SuiteKernel> kernels() {
        return GpuVerifySuite.kernels();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("kernels")
    void checkedExecutionAgreesWithTheLabel(SuiteKernel kernel) {
        Verdict v = GpuVerifySuite.check(kernel);
        assertTrue(v.agrees(), kernel.path() + " (" + kernel.label() + "): " + v.describe());
    }

    @Test
    void theSuiteHasBothLabelsInNumberAndNoKernelTwice() {
        List<SuiteKernel> all = kernels();
        Set<String> names = new HashSet<>();
        for (SuiteKernel k : all) {
            assertTrue(names.add(k.path()), "twice: " + k.path());
        }
        long racy = all.stream().filter(k -> k.label() == Label.RACY).count();
        long free = all.stream().filter(k -> k.label() == Label.RACE_FREE).count();
        assertTrue(all.size() >= 60, "kernels: " + all.size());
        assertTrue(racy >= 20 && free >= 20, "racy " + racy + ", race-free " + free + " of " + all.size());
    }

    /** The race-free verdicts rest on the barriers: the same kernels without them are reported as racy. */
    @Test
    void withoutTheirBarriersTwoRaceFreeKernelsRace() {
        SuiteKernel noBarrier = SuiteKernel.racy("cooperative_groups/pass/block_barrier without its barrier",
            Dim3.of(1), Dim3.of(32), () -> CooperativeGroupKernels.blockBarrier(false));
        SuiteKernel noBarriers = SuiteKernel.racy("transitiveclosure without its barriers", Dim3.of(1),
            Dim3.of(8, 8), () -> SharedMemoryKernels.transitiveClosure(false));
        for (SuiteKernel k : List.of(noBarrier, noBarriers)) {
            Verdict v = GpuVerifySuite.check(k);
            assertTrue(v.agrees(), k.path() + ": " + v.describe());
        }
    }

    /** oracle/gpuverify/labels.tsv lists the CUDA twin of every kernel here, with the same label and launch. */
    @Test
    void everyKernelHasItsCudaTwinWithTheSameLabelAndLaunch() throws IOException {
        Path oracle = Path.of("..", "oracle", "gpuverify");
        Map<String, String[]> rows = new HashMap<>();
        List<String> lines = Files.readAllLines(oracle.resolve("labels.tsv"));
        for (String line : lines.subList(1, lines.size())) {
            String[] cells = line.split("\t");
            rows.put(cells[0], cells);
        }
        for (SuiteKernel k : kernels()) {
            String[] row = rows.get(k.twinName());
            assertTrue(row != null && Files.exists(oracle.resolve(k.twinName() + ".cu")), "no twin: " + k.path());
            assertEquals(k.label().name(), row[1], k.path());
            assertEquals(cells(k.grid()), row[2], k.path() + " grid");
            assertEquals(cells(k.block()), row[3], k.path() + " block");
            assertEquals("testsuite/CUDA/" + k.path(), row[4], k.path());
        }
        assertEquals(kernels().size(), rows.size());
    }

    private static String cells(Dim3 d) {
        return d.y() == 1 && d.z() == 1 ? Integer.toString(d.x()) : d.x() + "," + d.y();
    }

    @Test
    void aVerdictJudgesTheFindingByTheLabel() {
        SuiteKernel racy = SuiteKernel.racy("r", Dim3.of(1), Dim3.of(1),
            () -> null);
        SuiteKernel free = SuiteKernel.raceFree("f", Dim3.of(1), Dim3.of(1),
            () -> null);
        SuiteKernel uninit = SuiteKernel.raceFreeReadingUninitialized("u", Dim3.of(1),
            Dim3.of(1), () -> null);
        assertTrue(Verdict.of(racy, FindingKind.DATA_RACE, 1).agrees());
        assertEquals(false, Verdict.of(racy, null, 100).agrees());
        assertEquals(false, Verdict.of(racy, FindingKind.RESULT_DIFFERS, 2).agrees());
        assertTrue(Verdict.of(free, null, 100).agrees());
        assertTrue(Verdict.of(free, FindingKind.DATA_RACE, 3).falsePositive());
        assertTrue(Verdict.of(uninit, FindingKind.POISON_READ, 1).agrees());
        assertEquals(false, Verdict.of(uninit, FindingKind.DATA_RACE, 1).agrees());
    }
}
