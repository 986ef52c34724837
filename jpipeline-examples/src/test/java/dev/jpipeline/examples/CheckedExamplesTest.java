package dev.jpipeline.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.simt.CheckedExecution;
import dev.jpipeline.simt.Exploration;
import dev.jpipeline.simt.Finding;
import dev.jpipeline.simt.FindingKind;
import java.util.EnumSet;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The examples under checked execution: every documentation example's small instance is clean, and every faulty
 * variant is found, with the kind of finding it should show, on a schedule that replays to the same report.
 */
class CheckedExamplesTest {

    /** A frame of the runtime that runs kernels: a finding's site should name the kernel's own code instead. */
    private static final Pattern RUNTIME_FRAME =
        Pattern.compile("\\b(Strand|Launch|KernelThread|BlockScheduler|CompiledMake)\\.[\\w$]+\\(");

    static Stream<Example> examples() {
        return Examples.all().stream();
    }

    static Stream<FaultyExample> faulty() {
        return Examples.faulty().stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("examples")
    @Timeout(60)
    void smallInstanceIsCleanUnderCheckedSchedules(Example example) {
        Example small = example.forChecking();
        if (example.checkedFinding() != null) {
            Finding finding = CheckedExecution.explore(30, 1, small::run).finding();
            assertNotNull(finding, example.name() + " relies on jpipeline's semantics: it should be reported");
            assertEquals(example.checkedFinding(), finding.kind(), finding::report);
            assertTrue(small.run(), example.name() + " should run correctly outside checked execution");
            return;
        }
        Exploration<Boolean> exploration = CheckedExecution.explore(30, 1, small::run);
        assertNull(exploration.finding(), () -> exploration.finding().report());
        assertEquals(30, exploration.schedulesRun());
        assertEquals(Boolean.TRUE, exploration.firstResult(), example.name() + " did not match its reference");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("faulty")
    @Timeout(60)
    void faultyVariantIsFoundAndReplays(FaultyExample variant) {
        Exploration<Boolean> exploration = CheckedExecution.explore(100, 1, variant::run);
        Finding finding = exploration.finding();
        assertNotNull(finding, variant.name() + " was not found in 100 schedules");
        assertEquals(variant.expected(), finding.kind(), finding::report);
        String said = finding.report().lines().findFirst().orElseThrow();
        assertFalse(RUNTIME_FRAME.matcher(said).find(), "the finding names the runtime, not the kernel's line: " + said);
        Finding again = CheckedExecution.replay(finding.schedule(), variant::run).finding();
        Finding third = CheckedExecution.replay(finding.schedule(), variant::run).finding();
        assertNotNull(again, "replaying " + finding.schedule() + " found nothing");
        assertEquals(finding.report(), again.report());
        assertEquals(again.report(), third.report());
    }

    @Test
    void onlyTheEarlyExitReliesOnSemanticsThatAGpuLacks() {
        assertEquals(Set.of(new EarlyExit().name()), Examples.all().stream().filter(e -> e.checkedFinding() != null)
            .map(Example::name).collect(Collectors.toSet()));
    }

    @Test
    void faultyVariantsCoverEveryClassOfBugThatTheCheckerReports() {
        Set<FindingKind> kinds = Examples.faulty().stream().map(FaultyExample::expected)
            .collect(Collectors.toCollection(() -> EnumSet.noneOf(FindingKind.class)));
        assertEquals(EnumSet.of(FindingKind.POISON_READ, FindingKind.DIVERGENT_BARRIER, FindingKind.PARTIAL_BARRIER,
            FindingKind.WARP_MASK, FindingKind.ROLE_MIXUP, FindingKind.HANGS_ON_GPU,
            FindingKind.DATA_RACE), kinds);
        Set<String> names = Examples.faulty().stream().map(Example::name).collect(Collectors.toSet());
        assertEquals(Examples.faulty().size(), names.size(), "faulty variants need distinct names: " + names);
        assertTrue(Examples.all().stream().noneMatch(e -> names.contains(e.name())));
    }
}
