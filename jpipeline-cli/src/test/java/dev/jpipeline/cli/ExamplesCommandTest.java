package dev.jpipeline.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.examples.Example;
import dev.jpipeline.examples.Examples;
import dev.jpipeline.examples.FaultyExample;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class ExamplesCommandTest {

    /** A faulty variant's row after its name: expected kind, found kind, time, schedule. */
    private static final Pattern FAULTY_ROW =
        Pattern.compile(" +([A-Z_]+) +([A-Z_]+|not found) +[\\d.]+ (?:ms|s) +(\\S+)");

    @Test
    void examplesPrintsATableOfVerifiedExamples() {
        String[] result = Cli.run("examples");
        String table = result[1];
        assertEquals("0", result[0], table);
        assertTrue(table.startsWith("example"), table);
        assertTrue(table.contains("4.10.7 producer-consumer"), table);
        assertTrue(table.contains("binary partitions: unguarded roles (clear error)"), table);
        assertTrue(table.contains("10 of 10 examples verified"), table);
        assertTrue(table.lines().findFirst().orElseThrow().endsWith("compiled"), table);
        assertColumnsLineUp(table, Examples.all().stream().map(Example::name).toList(), List.of("source", "verified"),
            List.of("threads", "time"));
        // every documentation example runs compiled (issue 27), unless compilation is switched off, which it says
        boolean compiling = !"false".equalsIgnoreCase(System.getProperty("jpipeline.simt.compile", "true").strip());
        assertTrue(table.contains(compiling ? "10 of them ran compiled, 0 on strands"
            : "0 of them ran compiled, 10 on strands"), table);
        assertTrue(!compiling || !table.contains("    not compiled: "), table);
        for (Example example : Examples.all()) {
            assertTrue(row(table, example.name()).endsWith(compiling ? "yes" : "no"), table);
        }
    }

    @Test
    @Timeout(180)
    void everyExampleIsCleanAndIdenticalUnderCheckedSchedules() {
        String[] result = Cli.run("examples", "--schedules", "200");
        String table = result[1];
        assertEquals("0", result[0], table + result[2]);
        for (Example example : Examples.all()) {
            String row = row(table, example.name());
            if (example.checkedFinding() != null) {     // the early exit: what a GPU does differently, at once
                assertTrue(row.matches(".* 1 +yes +" + example.checkedFinding() + " +.*"), "not found at once: " + row);
            } else {
                assertTrue(row.matches(".* 200 +yes +none +.*"), "not 200 schedules, identical, no finding: " + row);
            }
        }
        assertTrue(table.contains("10 of 10 examples as expected under 200 schedules each"), table);
        assertColumnsLineUp(table.substring(table.indexOf('\n') + 1), Examples.all().stream().map(Example::name)
            .toList(), List.of("identical", "findings"), List.of("threads", "schedules", "time", "per schedule"));
    }

    @Test
    @Timeout(120)
    void everyFaultyVariantIsFoundWithAScheduleThatReplaysToTheSameFinding() {
        String[] result = Cli.run("examples", "--faulty", "--schedules", "100");
        String table = result[1];
        assertEquals("0", result[0], "every variant found as expected: the command passes\n" + table + result[2]);
        for (FaultyExample variant : Examples.faulty()) {
            String row = row(table, variant.name());
            Matcher m = FAULTY_ROW.matcher(row.substring(variant.name().length()));
            assertTrue(m.matches(), row);
            assertEquals(variant.expected().name(), m.group(2), "found: " + row);
            assertTrue(m.group(3).matches("\\d+(/\\d+)?"), "no schedule: " + row);
            List<String> finding = table.lines().dropWhile(line -> !line.equals(row)).skip(1).limit(2).toList();
            String message = finding.get(0).strip();
            String replay = finding.get(1).strip();
            String launch = "replay: " + LaunchCommand.current() + " ";
            assertTrue(replay.startsWith(launch + "examples --faulty --only '"), replay);

            String[] again = Cli.run(words(replay.substring(launch.length())));
            assertEquals("1", again[0], again[1] + again[2]);
            assertTrue(again[1].startsWith(m.group(2) + " under schedule " + m.group(3) + ": " + message),
                "replay of " + m.group(3) + " shows another finding than the exploration:\n" + again[1]);
            assertTrue(again[1].strip().endsWith(replay), again[1]);
        }
        int variants = Examples.faulty().size();
        assertTrue(table.contains(variants + " of " + variants + " faulty variants found as expected"), table);
        assertColumnsLineUp(table.substring(table.indexOf('\n') + 1), Examples.faulty().stream()
            .map(FaultyExample::name).toList(), List.of("expected", "found", "schedule"), List.of("time"));
    }

    @Test
    void aDocumentationExampleReplaysOneSchedule() {
        String[] result = Cli.run("examples", "--only", "4.10.1 creating pipelines", "--replay", "7");
        assertEquals("0", result[0], result[1] + result[2]);
        assertEquals("no finding under schedule 7: '4.10.1 creating pipelines' returned true", result[1].strip());
    }

    @Test
    void badOptionsAreRefusedWithOneLine() {
        assertRefused("--schedules must be at least 1, got 0", "--schedules", "0");
        assertRefused("--seed needs --schedules", "--seed", "5");
        assertRefused("--replay needs --only NAME", "--replay", "3");
        assertRefused("--replay reruns one schedule: give it without --schedules", "--only", "x", "--replay", "3",
            "--schedules", "2");
        assertRefused("--faulty runs the broken variants checked", "--faulty");
        assertRefused("Invalid value for option '--replay': a schedule is SEED or SEED/DECISIONS (decimal numbers), "
            + "got '1/x'", "--only", "x", "--replay", "1/x");
        assertRefused("--only: no documentation example is named 'nope'; the names are '4.10.1 creating pipelines', "
            + "'4.10.6 tracking copies (cuda::pipeline)',", "--only", "nope", "--schedules", "2");
        String variant = Examples.faulty().getFirst().name();
        assertRefused("--only: no documentation example is named '" + variant + "' (it is a faulty variant: add "
            + "--faulty)", "--only", variant, "--schedules", "2");
    }

    private static void assertRefused(String message, String... options) {
        String[] args = new String[options.length + 1];
        args[0] = "examples";
        System.arraycopy(options, 0, args, 1, options.length);
        String[] result = Cli.run(args);
        assertEquals("2", result[0], Arrays.toString(args) + ": " + result[1] + result[2]);
        assertTrue(result[2].startsWith("jpipeline: " + message), result[2]);
        assertEquals(1, result[2].lines().count(), result[2]);
    }

    /** The table row of the example named {@code name}. */
    /**
     * Every named row's text columns start under their headers and its figures end under theirs, with at least two
     * spaces before each column: no value overflows into the next. {@code table} starts at its header line.
     */
    private static void assertColumnsLineUp(String table, List<String> names, List<String> text, List<String> figures) {
        String header = table.lines().findFirst().orElseThrow();
        for (String name : names) {
            String row = row(table, name);
            for (String column : text) {
                int start = header.indexOf("  " + column) + 2;
                assertTrue(start > 1, "no column " + column + " in " + header);
                assertTrue(row.length() > start && row.startsWith("  ", start - 2) && row.charAt(start) != ' ',
                    "the " + column + " column does not start under its header:\n" + header + "\n" + row);
            }
            for (String column : figures) {
                int end = header.indexOf(column) + column.length();
                assertTrue(row.length() >= end && row.charAt(end - 1) != ' '
                        && (row.length() == end || row.charAt(end) == ' '),
                    "the " + column + " column does not end under its header:\n" + header + "\n" + row);
            }
        }
    }

    private static String row(String table, String name) {
        return table.lines().filter(line -> line.startsWith(name + " ")).findFirst()
            .orElseThrow(() -> new AssertionError("no row for " + name + ":\n" + table));
    }

    /** A command line's words, as a POSIX shell splits them (single quotes, and '\'' within them). */
    private static String[] words(String line) {
        List<String> words = new ArrayList<>();
        StringBuilder word = new StringBuilder();
        boolean quoted = false;
        boolean inWord = false;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (c == '\'') {
                quoted = !quoted;
                inWord = true;
            } else if (c == '\\' && !quoted && i + 1 < line.length()) {
                word.append(line.charAt(++i));
            } else if (c == ' ' && !quoted) {
                if (inWord) {
                    words.add(word.toString());
                    word.setLength(0);
                    inWord = false;
                }
            } else {
                word.append(c);
                inWord = true;
            }
        }
        if (inWord) {
            words.add(word.toString());
        }
        return words.toArray(String[]::new);
    }

    @Test
    void aReplayLineStartsWithTheCommandAsTheUserTypedIt() {
        String was = System.getProperty(LaunchCommand.PROPERTY);
        System.setProperty(LaunchCommand.PROPERTY, "../my clone/jpipeline");
        try {
            String[] result = Cli.run("examples", "--faulty", "--schedules", "1", "--only",
                Examples.faulty().get(0).name());
            assertTrue(result[1].contains("replay: '../my clone/jpipeline' examples --faulty --only '"), result[1]);
        } finally {
            if (was == null) {
                System.clearProperty(LaunchCommand.PROPERTY);
            } else {
                System.setProperty(LaunchCommand.PROPERTY, was);
            }
        }
        System.clearProperty(LaunchCommand.PROPERTY);
        String[] plain = Cli.run("examples", "--faulty", "--schedules", "1", "--only", Examples.faulty().get(0).name());
        assertTrue(plain[1].contains("replay: java --enable-native-access=ALL-UNNAMED -jar "), plain[1]);
        if (was != null) {
            System.setProperty(LaunchCommand.PROPERTY, was);
        }
    }

    /**
     * The tables' figures do not depend on the JVM's default locale (stream and demo format with Locale.ROOT): under
     * ar-EG today the time and per-schedule cells, and the heading's "1 schedule (seeds from 1)", come out in
     * Arabic-Indic digits while the threads and schedules cells stay ASCII; under de-DE "per schedule" reads
     * "6,08 ms" beside stream's "6.08".
     */
    @Test
    void theTablesFiguresDoNotFollowTheDefaultLocale() {
        java.util.Locale old = java.util.Locale.getDefault();
        try {
            for (String tag : new String[] {"ar-EG", "de-DE"}) {
                java.util.Locale.setDefault(java.util.Locale.forLanguageTag(tag));
                String[] result = Cli.run("examples", "--schedules", "1", "--only", "binary partitions: guarded roles");
                assertEquals("0", result[0], result[1] + result[2]);
                String out = result[1];
                assertTrue(out.chars().allMatch(c -> c < 128), tag + ": figures in the locale's digits: " + out);
                String row = row(out, "binary partitions: guarded roles");
                assertTrue(row.matches(".* \\d+ ms +\\d+\\.\\d\\d ms"), tag + ": " + row);
            }
        } finally {
            java.util.Locale.setDefault(old);
        }
    }
}
