package dev.jpipeline;

import dev.jpipeline.FuzzPrograms.Program;
import java.io.IOException;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.regex.Pattern;

/**
 * The misuse fuzzer's oracles ({@link MisuseFuzzer}): what a broken one records (a {@link Finding}), the counts a
 * run keeps ({@link Stats}), the clarity oracle ({@link #unclear}), and the exceptions the harness throws on purpose.
 */
final class FuzzOracles {

    /** {@code -Djpipeline.test.fuzzOracles=HANG,UNCLEAR,...}: the oracles that fail the test (default: all). */
    private static final List<String> ORACLES = List.of(System.getProperty("jpipeline.test.fuzzOracles",
        "HANG,UNCLEAR,NOT_REJECTED,TIMED_WAIT,UNCAUGHT").split(","));

    private FuzzOracles() {
    }

    // Findings and statistics

    /** One broken oracle. */
    record Finding(int program, String kind, int rank, int step, String what, String detail)
        implements Comparable<Finding> {
        @Override
        public int compareTo(Finding o) {
            return program != o.program ? Integer.compare(program, o.program) : kind.compareTo(o.kind);
        }

        @Override
        public String toString() {
            return (program < 0 ? "[no program: a library thread]" : "[program " + program + "]") + " " + kind
                + (rank >= 0 ? " rank " + rank : "")
                + (step >= 0 ? " step " + step : "") + ": " + what + (detail.isEmpty() ? "" : "\n      " + detail)
                + (program < 0 ? "" : "\n      replay: -Djpipeline.test.fuzzProgram=" + program);
        }
    }

    static final class Stats {
        final ConcurrentLinkedQueue<Finding> findings = new ConcurrentLinkedQueue<>();
        final Map<String, LongAdder> counts = new ConcurrentHashMap<>();
        final Map<String, String> firstExample = new ConcurrentHashMap<>();
        /** Hung programs leave their threads behind: a run stops starting programs after too many. */
        final AtomicInteger hangs = new AtomicInteger();

        void count(String key) {
            counts.computeIfAbsent(key, k -> new LongAdder()).increment();
        }

        /** Records a broken oracle; {@code p} is null when no program can be blamed (a library thread's). */
        void find(String kind, Program p, int rank, int step, String what, Throwable t) {
            if (!kind.startsWith("HARNESS") && ORACLES.stream().noneMatch(kind::startsWith)) {
                count("ignored (oracle off) " + kind);
                return;
            }
            String detail = t == null ? "" : describe(t);
            int index = p == null ? -1 : p.index();
            findings.add(new Finding(index, kind, rank, step, what, detail));
            count("finding " + kind);
            firstExample.putIfAbsent(kind, (p == null ? "" : "program " + index + ": ") + what
                + (t == null ? "" : " -> " + oneLine(t)));
        }

        Map<String, Long> kindCounts() {
            Map<String, Long> m = new TreeMap<>();
            for (Finding f : findings) {
                m.merge(f.kind(), 1L, Long::sum);
            }
            return m;
        }

        String summary(String test, long seed, int programs, long millis) {
            StringBuilder b = new StringBuilder(test + " seed " + seed + ": " + programs + " programs in " + millis
                + " ms");
            Map<String, Long> sorted = new TreeMap<>();
            counts.forEach((k, v) -> sorted.put(k, v.sum()));
            sorted.forEach((k, v) -> b.append("\n  ").append(k).append(": ").append(v));
            if (!firstExample.isEmpty()) {
                b.append("\n  examples:");
                new TreeMap<>(firstExample).forEach((k, v) -> b.append("\n    ").append(k).append(" -- ").append(v));
            }
            return b.toString();
        }
    }

    static String oneLine(Throwable t) {
        String s = t.toString().replace('\n', ' ');
        return s.length() > 300 ? s.substring(0, 300) + "..." : s;
    }

    static String describe(Throwable t) {
        StringBuilder b = new StringBuilder(oneLine(t));
        StackTraceElement[] st = t.getStackTrace();
        for (int i = 0; i < Math.min(4, st.length); i++) {
            b.append("\n        at ").append(st[i]);
        }
        if (t.getCause() != null) {
            b.append("\n        caused by ").append(oneLine(t.getCause()));
        }
        return b.toString();
    }

    // The clarity oracle

    /** Subjects a clear message talks about. */
    private static final Pattern SUBJECT = Pattern.compile("pipeline|stage|batch|barrier|phase|token|memcpy|copy|"
        + "segment|arena|rank|thread|group|producer|consumer|role|patience|timeout|deadline|align|engine|channel|"
        + "file|position|handle|quit|acquire|commit|wait|release|arriv|completion|expected|count|bytes|source|"
        + "destination|deadlock|parity|prior|scope|state|team|size|party|parties");
    /** Words that state a rule (or what broke it). */
    private static final Pattern RULE = Pattern.compile("must|cannot|can never|can't|\\bnot\\b|never|without|only|"
        + "need|would|deadlock|no producer|no consumer|closed|overlap|past the end|beyond|read-only|aligned|"
        + "multiple|outside|negative|at least|at most|in \\d+\\.\\.|after quit|failed|invalid|mismatch|differ|"
        + "same way|belong|owner|more than|exceed|too |use |interrupt|out of range|already|instead|allowed|"
        + "expects|requires|illegal|unknown|ended|no longer|has quit|is a ");
    private static final Pattern ARGUMENT_NAME =
        Pattern.compile("^[a-zA-Z][a-zA-Z0-9_]*( must not be null| is null)?$");

    /** Why {@code t} is not a clear exception, or null when it is. */
    static String unclear(Throwable t) {
        if (t instanceof UserCompletionException) {
            return null;
        }
        if (t instanceof NullPointerException) {
            String m = t.getMessage();
            if (m == null) {
                return "NullPointerException without a message";
            }
            if (!ARGUMENT_NAME.matcher(m).matches() && !m.contains("must not be null")) {
                return "NullPointerException naming no argument";
            }
            return null;
        }
        if (t instanceof AssertionError || t instanceof IndexOutOfBoundsException || t instanceof ClassCastException
            || t instanceof ArithmeticException) {
            return t.getClass().getSimpleName();
        }
        if (!(t instanceof IllegalArgumentException || t instanceof IllegalStateException
            || t instanceof StageFailedException || t instanceof InterruptedException)) {
            return "unexpected type " + t.getClass().getName();
        }
        if (t.getClass().getName().startsWith("java.") && t.getClass() != IllegalArgumentException.class
            && t.getClass() != IllegalStateException.class && t.getClass() != InterruptedException.class) {
            return "JDK subclass " + t.getClass().getName();         // e.g. NumberFormatException leaking out
        }
        String m = t.getMessage();
        if (m == null || m.isBlank()) {
            return t.getClass().getSimpleName() + " without a message";
        }
        String lower = m.toLowerCase(Locale.ROOT);
        if (m.length() < 15 || !SUBJECT.matcher(lower).find() || !RULE.matcher(lower).find()) {
            return t.getClass().getSimpleName() + " whose message names no rule";
        }
        Throwable cause = t.getCause();
        if (cause != null && !(cause instanceof IOException) && !(cause instanceof UserCompletionException)
            && !(cause instanceof IllegalStateException && String.valueOf(cause.getMessage()).contains("closed"))
            && unclear(cause) != null) {
            // a failed copy's cause: an I/O error, an arena closed in mid-copy, or a clear exception of its own
            return t.getClass().getSimpleName() + " caused by " + cause.getClass().getName();
        }
        return null;
    }

    /** Thrown by a barrier completion on purpose: the user's own exception, which must come back as is. */
    static final class UserCompletionException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        UserCompletionException() {
            super("the user's completion action failed on purpose");
        }
    }

    /** Thrown out of a team thread on purpose: the thread ends early, without quit. */
    static final class SimulatedCrash extends RuntimeException {
        private static final long serialVersionUID = 1L;

        SimulatedCrash() {
            super("simulated crash of a participant", null, false, false);
        }
    }

    /** The harness itself failed while preparing an operation's arguments (a bug of this test). */
    static final class HarnessError extends Error {
        private static final long serialVersionUID = 1L;

        HarnessError(Throwable cause) {
            super("the fuzzer failed to prepare arguments: " + cause, cause);
        }
    }

    /** An operation that cannot be attempted in this program (its object does not exist). */
    static final class Skip extends RuntimeException {
        private static final long serialVersionUID = 1L;
        static final Skip INSTANCE = new Skip();

        private Skip() {
            super(null, null, false, false);
        }
    }
}
