package dev.jpipeline.cli;

import dev.jpipeline.examples.Example;
import dev.jpipeline.examples.Examples;
import dev.jpipeline.examples.FaultyExample;
import dev.jpipeline.simt.CheckedExecution;
import dev.jpipeline.simt.Exploration;
import dev.jpipeline.simt.Finding;
import dev.jpipeline.simt.FindingKind;
import dev.jpipeline.simt.Kernel;
import dev.jpipeline.simt.KernelRuns;
import dev.jpipeline.simt.Outcome;
import dev.jpipeline.simt.Schedule;
import java.io.PrintWriter;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code jpipeline examples}: runs every ported CUDA documentation example and prints a table. With
 * {@code --schedules N} it runs each example's small instance under N schedules of checked execution instead;
 * {@code --faulty} runs the deliberately broken variants, which checked execution should catch; {@code --replay}
 * reruns one schedule of one example and prints its finding in full.
 */
@Command(name = "examples", mixinStandardHelpOptions = true, versionProvider = BuildVersion.class,
    description = {"Run every CUDA documentation example on the SIMT runtime and verify it. The last column says "
        + "whether its kernels ran compiled (as loops over each block's threads) or on strands, and a line below "
        + "says why a kernel was not compiled (docs/simt.md, \"Compiled kernels\").",
        "With --schedules, run each one's small instance under seeded schedules of checked execution (one CUDA "
            + "thread at a time, late copies, poisoned shared memory, races, sync checks); exit 0 only when every "
            + "example is as expected: clean with identical results, or (the early exit) reporting what a GPU does "
            + "differently.",
        "With --faulty --schedules, exit 0 only when every broken variant is found with the kind of finding it "
            + "should show, else 1: the command can gate a build. With --replay, exit 1 when the schedule shows a "
            + "finding, 0 when it does not.",
        "A finding's replay line starts with the command as you started it (the launcher's path as you typed "
            + "it, or java -jar with the jar's path), so it works from where you stand."})
final class ExamplesCommand implements Callable<Integer> {

    @Spec
    private CommandSpec spec;

    @Option(names = "--schedules", paramLabel = "N",
        description = "Run each example's small instance under N checked schedules (seeds S, S+1, ...).")
    private Integer schedules;

    @Option(names = "--seed", paramLabel = "S", description = "The first schedule's seed, with --schedules "
        + "(default 1).")
    private Long seed;

    @Option(names = "--faulty", description = "Run the deliberately broken variants (with --schedules or "
        + "--replay): each should show a finding.")
    private boolean faulty;

    @Option(names = "--only", paramLabel = "NAME", description = "Run only the example of this name.")
    private String only;

    @Option(names = "--replay", paramLabel = "SCHEDULE", converter = ScheduleConverter.class,
        description = "Rerun schedule SEED or SEED/DECISIONS of the --only example, checked, and print its finding "
            + "in full (what a finding's replay line does).")
    private Schedule replay;

    @Override
    public Integer call() {
        validate();
        PrintWriter out = spec.commandLine().getOut();
        int status;
        if (faulty) {
            List<FaultyExample> variants = named(Examples.faulty(), Examples.all());
            status = replay != null ? replay(out, variants.getFirst()) : exploreFaulty(out, variants);
        } else {
            List<Example> examples = named(Examples.all(), Examples.faulty());
            status = replay != null ? replay(out, examples.getFirst())
                : schedules != null ? explore(out, examples) : verify(out, examples);
        }
        out.flush();
        return status;
    }

    private void validate() {
        if (schedules != null && schedules < 1) {
            throw usage("--schedules must be at least 1, got " + schedules);
        }
        if (seed != null && schedules == null) {
            throw usage("--seed needs --schedules: it is the seed of the first of the schedules");
        }
        if (replay != null && only == null) {
            throw usage("--replay needs --only NAME: a schedule is replayed on one example");
        }
        if (replay != null && schedules != null) {
            throw usage("--replay reruns one schedule: give it without --schedules");
        }
        if (faulty && schedules == null && replay == null) {
            throw usage("--faulty runs the broken variants checked: give --schedules N (or --only NAME --replay "
                + "SCHEDULE)");
        }
    }

    /** {@code all}, or the one that --only names; {@code other} is the list --faulty does not select. */
    private <E extends Example> List<E> named(List<E> all, List<? extends Example> other) {
        if (only == null) {
            return all;
        }
        List<E> named = all.stream().filter(e -> e.name().equals(only)).toList();
        if (named.isEmpty()) {
            String hint = other.stream().noneMatch(e -> e.name().equals(only)) ? ""
                : faulty ? " (it is a documentation example: drop --faulty)" : " (it is a faulty variant: add --faulty)";
            throw usage("--only: no " + (faulty ? "faulty variant" : "documentation example") + " is named "
                + LaunchCommand.quote(only) + hint + "; the names are "
                + all.stream().map(e -> LaunchCommand.quote(e.name())).collect(Collectors.joining(", ")));
        }
        return named;
    }

    /** The plain run: each example at its own size, verified against its reference. */
    private int verify(PrintWriter out, List<Example> examples) {
        TextTable table = TextTable.of(
            TextTable.text("example", examples.stream().map(Example::name).toList()),
            TextTable.text("source", examples.stream().map(Example::source).toList()),
            TextTable.figures("threads", examples.stream().mapToInt(e -> Integer.toString(e.threads()).length()).max()
                .orElse(0)),
            TextTable.text("verified", List.of("yes", "NO")),
            TextTable.figures("time", TIME_WIDTH),
            TextTable.text("compiled", List.of("yes", "no")));
        out.println(table.header());
        int failed = 0;
        int compiled = 0;
        for (Example example : examples) {
            KernelRuns before = Kernel.runs();
            Examples.Result result = Examples.run(example);
            KernelRuns after = Kernel.runs();
            long compiledBlocks = after.compiledBlocks() - before.compiledBlocks();
            long strandBlocks = after.strandBlocks() - before.strandBlocks();
            String how = strandBlocks == 0 && compiledBlocks > 0 ? "yes"
                : compiledBlocks == 0 ? "no" : compiledBlocks + " of " + (compiledBlocks + strandBlocks) + " blocks";
            compiled += how.equals("yes") ? 1 : 0;
            out.println(table.row(example.name(), example.source(), example.threads(),
                result.verified() ? "yes" : "NO", milliseconds(result.time().toNanos() / 1e6), how));
            if (result.failure() != null) {
                out.println("    " + result.failure());
            }
            List<String> said = after.fallbacks().subList(before.fallbacks().size(), after.fallbacks().size());
            for (String fallback : said) {
                out.println("    not compiled: " + fallback);
            }
            if (said.isEmpty() && !how.equals("yes")) {
                out.println("    not compiled: its kernel's reason is given above (once per kernel)");
            }
            if (!result.verified()) {
                failed++;
            }
            out.flush();
        }
        out.printf(Locale.ROOT,
            "%d of %d examples verified; %d of them ran compiled, %d on strands (docs/simt.md, \"Compiled "
            + "kernels\")%n", examples.size() - failed, examples.size(), compiled, examples.size() - compiled);
        return failed == 0 ? 0 : 1;
    }

    /** Each documentation example's small instance under the schedules: clean, with identical results? */
    private int explore(PrintWriter out, List<Example> examples) {
        long first = seed == null ? 1 : seed;
        out.printf(Locale.ROOT,
            "checked execution of each example's small instance under %d schedule%s (seeds from %d)%n",
            schedules, schedules == 1 ? "" : "s", first);
        TextTable table = TextTable.of(
            TextTable.text("example", examples.stream().map(Example::name).toList()),
            TextTable.figures("threads", examples.stream()
                .mapToInt(e -> Integer.toString(e.forChecking().threads()).length()).max().orElse(0)),
            TextTable.figures("schedules", Integer.toString(schedules).length()),
            TextTable.text("identical", List.of("yes", "NO")),
            TextTable.text("findings", findingNames("none")),
            TextTable.figures("time", TIME_WIDTH),
            TextTable.figures("per schedule", TIME_WIDTH + 3));
        out.println(table.header());
        int clean = 0;
        for (Example example : examples) {
            Example small = example.forChecking();
            long start = System.nanoTime();
            Exploration<Boolean> exploration = CheckedExecution.explore(schedules, first, replayLine(example),
                run(small));
            double ms = (System.nanoTime() - start) / 1e6;
            Finding finding = exploration.finding();
            out.println(table.row(example.name(), small.threads(), exploration.schedulesRun(),
                exploration.identical() ? "yes" : "NO", finding == null ? "none" : finding.kind(),
                milliseconds(ms), String.format(Locale.ROOT, "%.2f ms", ms / exploration.schedulesRun())));
            if (finding == null ? small.checkedFinding() == null : finding.kind() == small.checkedFinding()) {
                clean++;
            }
            if (finding != null) {
                printFinding(out, finding);
                if (finding.kind() == small.checkedFinding()) {
                    out.println("    expected: this example relies on jpipeline's semantics where a GPU's differ "
                        + "(docs/checking.md)");
                }
            }
            out.flush();
        }
        out.printf(Locale.ROOT,
            "%d of %d examples as expected under %d schedule%s each (clean, or reporting what a GPU does "
            + "differently)%n", clean, examples.size(), schedules, schedules == 1 ? "" : "s");
        return clean == examples.size() ? 0 : 1;
    }

    /** Each faulty variant under the schedules: found, with the kind of finding it should show? */
    private int exploreFaulty(PrintWriter out, List<FaultyExample> variants) {
        long first = seed == null ? 1 : seed;
        out.printf(Locale.ROOT,
            "checked execution of each faulty variant under up to %d schedule%s (seeds from %d)%n", schedules,
            schedules == 1 ? "" : "s", first);
        TextTable table = TextTable.of(
            TextTable.text("faulty variant", variants.stream().map(FaultyExample::name).toList()),
            TextTable.text("expected", findingNames()),
            TextTable.text("found", findingNames("not found")),
            TextTable.figures("time", TIME_WIDTH),
            TextTable.text("schedule", List.of()));
        out.println(table.header());
        int asExpected = 0;
        for (FaultyExample variant : variants) {
            long start = System.nanoTime();
            Exploration<Boolean> exploration = CheckedExecution.explore(schedules, first, replayLine(variant),
                run(variant));
            double ms = (System.nanoTime() - start) / 1e6;
            Finding finding = exploration.finding();
            out.println(table.row(variant.name(), variant.expected(), finding == null ? "not found" : finding.kind(),
                milliseconds(ms), finding == null ? "-" : finding.schedule()));
            if (finding != null) {
                printFinding(out, finding);
            }
            if (finding != null && finding.kind() == variant.expected()) {
                asExpected++;
            }
            out.flush();
        }
        out.printf(Locale.ROOT, "%d of %d faulty variants found as expected%s%n", asExpected, variants.size(),
            asExpected == variants.size() ? "" : ": the others are a problem of the variant or of the checker");
        return asExpected == variants.size() ? 0 : 1;
    }

    /** One schedule of the --only example: its finding in full, or what it returned. */
    private int replay(PrintWriter out, Example example) {
        Example checked = example.forChecking();
        Outcome<Boolean> outcome = CheckedExecution.replay(replay, replayLine(example), run(checked));
        if (outcome.finding() != null) {
            out.println(outcome.finding().report());
            return 1;
        }
        out.printf(Locale.ROOT,
            "no finding under schedule %s: %s returned %s%n", replay, LaunchCommand.quote(example.name()),
            outcome.result());
        return 0;
    }

    private static Supplier<Boolean> run(Example example) {
        return example::run;
    }

    /** The command that replays a schedule of {@code example}: what a finding prints. */
    private Function<Schedule, String> replayLine(Example example) {
        String command = LaunchCommand.current() + " examples" + (faulty ? " --faulty" : "") + " --only "
            + LaunchCommand.quote(example.name());
        return schedule -> command + " --replay " + schedule;
    }

    private static void printFinding(PrintWriter out, Finding finding) {
        out.println("    " + finding.message().lines().findFirst().orElse(""));
        out.println("    replay: " + finding.replay());
    }

    /** The widest time {@link #milliseconds} gives below a day: {@code 86399.9 s}. */
    private static final int TIME_WIDTH = 9;

    /** Every kind of finding's name, and {@code others}: the values of a findings column. */
    private static List<String> findingNames(String... others) {
        return Stream.concat(Arrays.stream(FindingKind.values()).map(Enum::name), Arrays.stream(others)).toList();
    }

    private static String milliseconds(double ms) {
        return ms < 10_000 ? String.format(Locale.ROOT, "%.0f ms", ms)
            : String.format(Locale.ROOT, "%.1f s", ms / 1000);
    }

    private ParameterException usage(String message) {
        return new ParameterException(spec.commandLine(), message);
    }
}
