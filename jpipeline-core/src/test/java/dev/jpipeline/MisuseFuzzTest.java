package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.jpipeline.copy.CopyEngine;
import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * A seeded random misuse fuzzer: thousands of tiny programs use the public API the way a hostile or careless
 * user would, and five oracles judge what happens.
 *
 * <pre>
 * A program (generated from the run's seed and its index alone, so it can be replayed by itself):
 *   kind        THREAD (Pipeline.make per thread), UNIFIED, BY_COUNT, BY_ROLE, or BARRIER
 *   group       ThreadTeam of 1..4 platform or virtual threads (rarely an invalid size)
 *   state       scope, stage count (rarely invalid), deadlock patience (50/100 ms, rarely the default, zero,
 *               negative or absurd), wait strategy
 *   make        per rank: the collective make (rarely mismatched between ranks, or with null/invalid args)
 *   script      per rank: 0..9 operations, mostly a valid protocol step, otherwise any operation with random
 *               arguments: acquire/commit/wait/waitFor/waitUntil/release/quit/close, consumerWaitPrior,
 *               producerCommit(pipe, barrier), memcpyAsync (sizes 0, small, 64 KiB, large, negative, past
 *               the end; heap, auto, confined (own or another thread's), closed, closed-mid-copy, read-only,
 *               overlapping, misaligned or null segments; AlignedSize; group form), file memcpyAsync (good,
 *               failing, no-progress or null channel), another rank's handle, self-interrupt, barrier
 *               arrive, arrive(update), arriveAndDrop, await(bad token), tryWait..., tryWaitParity, memcpyAsync
 *   ending      quit, close, end without quit (a dead participant) or throw out of the thread
 *
 * Oracles:
 *   HANG            the program must end within its limit (2 s + 3 patience intervals per blocking operation):
 *                   stuck programs must end with the library's report, never by the test's timeout
 *   UNCLEAR         every exception is clear: IllegalArgument/IllegalState/StageFailed/Interrupted (or a
 *                   NullPointerException naming the argument), never AssertionError, AIOOBE, ClassCast,
 *                   Arithmetic or a JDK exception leaking through; its message names a subject and a rule;
 *                   a failed copy's cause is an I/O error or a closed arena
 *   NOT_REJECTED    an operation whose arguments break a documented rule must throw
 *   TIMED_WAIT      a wait with a short limit (&lt;= 15 ms, zero, negative, past) returns within limit + 1.5 s and
 *                   is never ended by a hang report
 *   UNCAUGHT        no exception escapes into a thread the library owns (a copy engine's worker)
 * </pre>
 *
 * <p>Run: {@code ./mvnw -o test -pl jpipeline-core -Dtest=MisuseFuzzTest}. Properties: {@code
 * -Djpipeline.test.seed=S} (the run's seed, printed), {@code -Djpipeline.test.fuzzPrograms=N} (default 10,000),
 * {@code -Djpipeline.test.fuzzProgram=I} (run program I of seed S alone, printing it; with
 * {@code -Djpipeline.test.fuzzRepeat=R} R times, since schedules vary), {@code -Djpipeline.test.fuzzParallel=K}
 * (programs run K at a time, default 4: most of a program's time is waiting, not computing),
 * {@code -Djpipeline.test.fuzzVerbose=true} (print every program), {@code -Djpipeline.test.fuzzOracles=HANG,UNCLEAR}
 * (the oracles that fail the run; default all five), {@code -Djpipeline.test.fuzzMaxHangs=N} (stop starting
 * programs after N hangs, default 50: a hung program's threads stay behind), {@code -Djpipeline.test.fuzzShow=N}
 * and {@code -Djpipeline.test.fuzzShowKind=PREFIX} (which findings the failure message lists),
 * {@code -Djpipeline.test.fuzzMessages=true} (list every distinct exception message),
 * {@code -Djpipeline.test.fuzzLimitScale=F} (scale the programs' time limits),
 * {@code -Djpipeline.test.fuzzAvoidKnownBugs=true} (the harness's own check: leave out the misuse today's engine
 * is known to mishandle; the run must then be clean).
 *
 * <p>The seeded part is the programs, not the schedule: a replayed program runs the same operations, in an
 * interleaving the JVM chooses. Nothing orders threads by sleeping; every wait is bounded (by the program's
 * limit, and by the library's own hang report).
 */
class MisuseFuzzTest {

    /** {@code -Djpipeline.test.fuzzOracles=HANG,UNCLEAR,...}: the oracles that fail the test (default: all). */
    private static final List<String> ORACLES = List.of(System.getProperty("jpipeline.test.fuzzOracles",
        "HANG,UNCLEAR,NOT_REJECTED,TIMED_WAIT,UNCAUGHT").split(","));
    /** {@code -Djpipeline.test.fuzzAvoidKnownBugs=true}: see {@link Program#avoidingKnownBugs()}. */
    private static final boolean AVOID_KNOWN_BUGS = Boolean.getBoolean("jpipeline.test.fuzzAvoidKnownBugs");
    /** {@code -Djpipeline.test.fuzzMessages=true}: list every distinct exception message (digits as #). */
    private static final boolean MESSAGES = Boolean.getBoolean("jpipeline.test.fuzzMessages");
    /** How long past its limit a short timed wait may take (scheduling on a loaded 2-core machine). */
    private static final long TIMED_WAIT_SLACK_NANOS = 1_500_000_000L;

    /** Copies above 64 KiB run here, split in 16 KiB chunks over two workers. */
    private static final CopyEngine ENGINE = CopyEngine.builder().workers(2).minChunk(16 * 1024)
        .name("fuzz-copy").build();

    // Reused buffers: separate ones per role, so that only the OVERLAP kind overlaps.
    private static final int BUF = 160 * 1024 + 64;
    private static final MemorySegment DST_BYTES = MemorySegment.ofArray(new byte[BUF]);
    private static final MemorySegment SRC_BYTES = MemorySegment.ofArray(new byte[BUF]);
    private static final MemorySegment DST_LONGS = MemorySegment.ofArray(new long[BUF / 8]);
    private static final MemorySegment SRC_LONGS = MemorySegment.ofArray(new long[BUF / 8]);
    private static final MemorySegment DST_NATIVE = Arena.global().allocate(BUF, 64);
    private static final MemorySegment SRC_NATIVE = Arena.global().allocate(BUF, 64);
    private static final byte[] FILE = new byte[256 * 1024];

    static {
        new SplittableRandom(42).nextBytes(FILE);
    }

    // Barrier's timed token waits exist only after the redesign: found by reflection, skipped when absent.
    private static final MethodHandle TRY_WAIT = barrierMethod("tryWait", MethodType.methodType(boolean.class,
        long.class));
    private static final MethodHandle TRY_WAIT_FOR = barrierMethod("tryWaitFor", MethodType.methodType(
        boolean.class, long.class, Duration.class));
    private static final MethodHandle TRY_WAIT_UNTIL = barrierMethod("tryWaitUntil", MethodType.methodType(
        boolean.class, long.class, Instant.class));

    private static MethodHandle barrierMethod(String name, MethodType type) {
        try {
            return MethodHandles.publicLookup().findVirtual(Barrier.class, name, type);
        } catch (ReflectiveOperationException e) {
            return null;
        }
    }

    // =========================================================================================================
    // The test

    @Test
    void randomMisuseNeverHangsAndAlwaysExplains() throws Exception {
        String property = System.getProperty("jpipeline.test.seed", "");
        long seed = property.isBlank() ? System.nanoTime() : Long.parseLong(property.trim());
        int programs = Integer.getInteger("jpipeline.test.fuzzPrograms", 10_000);
        int only = Integer.getInteger("jpipeline.test.fuzzProgram", -1);
        int repeat = Integer.getInteger("jpipeline.test.fuzzRepeat", 1);
        int parallel = Math.max(1, Integer.getInteger("jpipeline.test.fuzzParallel", 4));
        boolean verbose = Boolean.getBoolean("jpipeline.test.fuzzVerbose") || only >= 0;
        int shown = Integer.getInteger("jpipeline.test.fuzzShow", 5);
        String showKind = System.getProperty("jpipeline.test.fuzzShowKind", "");
        int maxHangs = Integer.getInteger("jpipeline.test.fuzzMaxHangs", 50);
        System.out.println("MisuseFuzzTest seed " + seed + " (rerun: -Djpipeline.test.seed=" + seed
            + (only >= 0 ? " -Djpipeline.test.fuzzProgram=" + only : "") + "), "
            + (only >= 0 ? "program " + only + " x" + repeat : programs + " programs") + ", " + parallel
            + " at a time; Barrier timed token waits " + (TRY_WAIT_FOR != null ? "present" : "absent (skipped)"));

        Stats stats = new Stats();
        // An exception that escapes into a thread the library owns (a copy worker) is lost to the user.
        Thread.UncaughtExceptionHandler previous = Thread.getDefaultUncaughtExceptionHandler();
        Thread.setDefaultUncaughtExceptionHandler((thread, e) -> {
            if (e instanceof UserCompletionException) {
                // the user's completion ran in the copy that completed the phase: no caller to throw to
                stats.count("user completion exceptions thrown in a copy engine's thread");
            } else if (!(e instanceof SimulatedCrash)) {
                stats.find("UNCAUGHT " + e.getClass().getSimpleName() + " in a library thread", null, -1, -1,
                    "thread " + thread.getName(), e);
            }
        });
        long start = System.nanoTime();
        List<Integer> indices = new ArrayList<>();
        if (only >= 0) {
            for (int i = 0; i < repeat; i++) {
                indices.add(only);
            }
            parallel = 1;
        } else {
            for (int i = 0; i < programs; i++) {
                indices.add(i);
            }
        }
        AtomicInteger next = new AtomicInteger();
        AtomicInteger ran = new AtomicInteger();
        Thread[] runners = new Thread[parallel];
        for (int k = 0; k < parallel; k++) {
            runners[k] = Thread.ofPlatform().daemon().name("fuzz-runner-" + k).start(() -> {
                for (int i; (i = next.getAndIncrement()) < indices.size(); ) {
                    if (stats.hangs.get() >= maxHangs) {
                        stats.count("programs not run: over " + maxHangs + " hangs (-Djpipeline.test.fuzzMaxHangs)");
                        continue;
                    }
                    ran.incrementAndGet();
                    Program p = Program.generate(seed, indices.get(i));
                    if (verbose) {
                        System.out.println(p);
                    }
                    try {
                        new Run(p, stats).execute();
                    } catch (Throwable t) {
                        stats.find("HARNESS " + t.getClass().getSimpleName(), p, -2, -1, "the harness failed", t);
                    }
                }
            });
        }
        long bound = System.nanoTime() + TimeUnit.MINUTES.toNanos(30);
        boolean finished = true;
        for (Thread r : runners) {
            r.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(bound - System.nanoTime())));
            finished &= !r.isAlive();
        }
        long millis = (System.nanoTime() - start) / 1_000_000;
        Thread.setDefaultUncaughtExceptionHandler(previous);
        System.out.println(stats.summary(seed, ran.get(), millis));
        assertTrue(finished, "the fuzz runners did not finish within 30 minutes (see the summary above)");
        if (!stats.findings.isEmpty()) {
            StringBuilder b = new StringBuilder(stats.findings.size() + " findings in " + ran.get()
                + " programs (seed " + seed + "); by kind: " + stats.kindCounts() + "\nfirst ones:");
            stats.findings.stream().filter(f -> f.kind().startsWith(showKind)).sorted().limit(shown)
                .forEach(f -> b.append("\n").append(f));
            fail(b.toString());
        }
    }

    /** The harness's own checks: the clarity oracle judges known examples right; programs replay exactly. */
    @Test
    void theOraclesAndTheGeneratorAreSound() {
        assertTrue(unclear(new IllegalArgumentException("memcpy_async of 9 bytes runs past the end of the source"))
            == null);
        assertTrue(unclear(new IllegalStateException("consumer_wait after quit: rank 1 (consumer) has left the "
            + "pipeline")) == null);
        assertTrue(unclear(new NullPointerException("dst")) == null);
        assertTrue(unclear(new UserCompletionException()) == null);
        assertTrue(unclear(new IllegalStateException("a copy into stage 1 failed",
            new java.io.EOFException("file ends before byte 9"))) == null);
        assertTrue(unclear(new IllegalStateException("a memcpyAsync tied to barrier phase 3 failed",
            new IllegalArgumentException("memcpy_async source segment is closed (its arena was closed)"))) == null);
        assertTrue(unclear(new AssertionError("a pipeline handle belongs to the thread that made it")) != null);
        assertTrue(unclear(new NullPointerException()) != null);
        assertTrue(unclear(new NullPointerException("Cannot invoke \"Object.hashCode()\" because \"x\" is null"))
            != null);
        assertTrue(unclear(new ArrayIndexOutOfBoundsException(3)) != null);
        assertTrue(unclear(new ClassCastException("a cannot be cast to b")) != null);
        assertTrue(unclear(new ArithmeticException("long overflow")) != null);
        assertTrue(unclear(new IllegalStateException("Already closed")) != null);
        assertTrue(unclear(new IllegalStateException("rank 2")) != null);
        assertTrue(unclear(new IllegalStateException("")) != null);
        assertTrue(unclear(new NumberFormatException("stage count must be a number")) != null);
        assertTrue(unclear(new RuntimeException("the pipeline must not be used")) != null);
        assertTrue(unclear(new IllegalStateException("a copy into stage 1 failed",
            new WrongThreadException("Attempted access outside owning thread"))) != null);
        for (int i = 0; i < 200; i++) {
            assertTrue(Program.generate(7, i).toString().equals(Program.generate(7, i).toString()),
                "program " + i + " is generated the same way twice");
        }
    }

    // =========================================================================================================
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
            return (program < 0 ? "[no program: a library thread]" : "[program " + program + "]") + " " + kind + (rank >= 0 ? " rank " + rank : "")
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
            int index = p == null ? -1 : p.index;
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

        String summary(long seed, int programs, long millis) {
            StringBuilder b = new StringBuilder("MisuseFuzzTest seed " + seed + ": " + programs + " programs in "
                + millis + " ms");
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

    // =========================================================================================================
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
    private static final Pattern ARGUMENT_NAME = Pattern.compile("^[a-zA-Z][a-zA-Z0-9_]*( must not be null| is null)?$");

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

    // =========================================================================================================
    // Programs

    enum Kind { THREAD, UNIFIED, BY_COUNT, BY_ROLE, BARRIER }

    enum Ending { QUIT, CLOSE, DEAD, CRASH }

    enum Patience { MS50, MS100, DEFAULT, ZERO, NEGATIVE, ABSURD }

    enum Completion { NONE, COUNT, THROW, SMALL_COPY_INTO_SELF, WAIT_OWN_PARITY, AWAIT_LAST_TOKEN, TRY_PARITY }

    /** How a rank makes its pipeline. */
    enum MakeKind { UNIFIED, COUNT, ROLE, THREAD_DEFAULT, THREAD_ENGINE, THREAD_NULL_ENGINE, NONE }

    enum StateArg { MAIN, OTHER, NULL }

    record Make(MakeKind kind, int producers, PipelineRole role, StateArg state, boolean nullGroup) {
        @Override
        public String toString() {
            return switch (kind) {
                case COUNT -> "make(" + (nullGroup ? "null" : "g") + "," + state + "," + producers + ")";
                case ROLE -> "make(" + (nullGroup ? "null" : "g") + "," + state + "," + role + ")";
                case UNIFIED -> "make(" + (nullGroup ? "null" : "g") + "," + state + ")";
                case THREAD_DEFAULT -> "make()";
                case THREAD_ENGINE -> "make(engine)";
                case THREAD_NULL_ENGINE -> "make(null)";
                case NONE -> "-";
            };
        }
    }

    enum Op {
        ACQUIRE, ACQUIRE_INTERRUPTIBLY, COMMIT, WAIT, WAIT_INTERRUPTIBLY, WAIT_FOR, WAIT_UNTIL, RELEASE, QUIT, CLOSE,
        QUERY, WAIT_PRIOR, COMMIT_BARRIER, MEMCPY, MEMCPY_FILE, FOREIGN, INTERRUPT, BOGUS_GROUP_MAKE,
        B_ARRIVE, B_ARRIVE_N, B_DROP, B_AWAIT_BAD, B_TRY_WAIT, B_TRY_WAIT_FOR, B_TRY_WAIT_UNTIL, B_TRY_PARITY,
        B_MEMCPY, B_QUERY
    }

    /** Time arguments: a Duration, or an Instant relative to the call. */
    enum Time {
        NULL, ZERO, NEG_NANO, NEG_SECOND, NANO, NANOS_150, MICRO, MILLI, MILLIS_15, CENTURY, ABSURD;

        Duration duration() {
            return switch (this) {
                case NULL -> null;
                case ZERO -> Duration.ZERO;
                case NEG_NANO -> Duration.ofNanos(-1);
                case NEG_SECOND -> Duration.ofSeconds(-1);
                case NANO -> Duration.ofNanos(1);
                case NANOS_150 -> Duration.ofNanos(150);
                case MICRO -> Duration.ofNanos(1_000);
                case MILLI -> Duration.ofMillis(1);
                case MILLIS_15 -> Duration.ofMillis(15);
                case CENTURY -> Duration.ofDays(36_525);
                case ABSURD -> Duration.ofSeconds(Long.MAX_VALUE, 999_999_999);
            };
        }

        Instant instant() {
            return switch (this) {
                case NULL -> null;
                case NEG_NANO -> Instant.MIN;
                case ABSURD -> Instant.MAX;
                default -> Instant.now().plus(duration());
            };
        }

        /** Whether a wait with this limit must end soon. */
        boolean isShort() {
            return this != NULL && this != CENTURY && this != ABSURD;
        }

        long nanos() {
            return isShort() ? Math.max(0, duration().toNanos()) : Long.MAX_VALUE;
        }
    }

    /** Where a segment comes from. */
    enum Seg {
        HEAP_BYTES, HEAP_LONGS, NATIVE, READ_ONLY, CONFINED_OWN, CONFINED_OTHER, CLOSED, CLOSE_AFTER, MISALIGNED,
        OVERLAP, NULL
    }

    /** Barrier tokens: the thread's own, or values that are no token of this barrier. */
    enum Token { OWN, NEXT, OTHER_BARRIER, PLAIN_PHASE, MINUS_ONE, BIT_40, LONG_MIN, LONG_MAX }

    enum Channel { GOOD, FAILING, NO_PROGRESS, NULL }

    /**
     * A copy: {@code bytes} (maybe invalid) between segments of kinds {@code dst}/{@code src} of lengths
     * {@code dstLen}/{@code srcLen}; {@code alignment} 0 for a plain byte count, else an AlignedSize.
     */
    record CopySpec(long bytes, Seg dst, long dstLen, Seg src, long srcLen, long overlapOffset, long alignment,
                    int groupForm, Channel channel, long position) {
        /** See {@link Program#avoidingKnownBugs()}. */
        CopySpec avoidingKnownBugs(Op op) {
            Seg d = dst == Seg.CONFINED_OWN || dst == Seg.CONFINED_OTHER || dst == Seg.CLOSED ? Seg.NATIVE : dst;
            Seg s = src == Seg.CONFINED_OWN || src == Seg.CONFINED_OTHER || src == Seg.CLOSED ? Seg.NATIVE : src;
            if (channel != null && d == Seg.HEAP_LONGS) {
                d = Seg.HEAP_BYTES;                 // a file read into a long[] segment fails in the engine
            }
            Channel ch = channel == Channel.NO_PROGRESS ? Channel.FAILING : channel;     // #4 spins forever
            long b = bytes;
            long dl = dstLen;
            long sl = srcLen;
            if (op == Op.B_MEMCPY && bytes > 64 * 1024) {
                b = 64;                             // an over-arrival steals a barrier copy's pending arrival
                dl = Math.min(dl, 64);
                sl = Math.min(sl, 64);
            }
            return new CopySpec(b, d, dl, s, sl, overlapOffset, alignment, groupForm, ch, position);
        }

        @Override
        public String toString() {
            String size = alignment == 0 ? String.valueOf(bytes) : "AlignedSize(" + alignment + "," + bytes + ")";
            String form = groupForm == 0 ? "" : groupForm == 1 ? "group," : "bogusGroup,";
            if (channel != null) {
                return "(" + form + dst + "[" + dstLen + "] <- " + channel + "@" + position + ", " + size + ")";
            }
            return "(" + form + dst + "[" + dstLen + "] <- " + src + "[" + srcLen + "]"
                + (src == Seg.OVERLAP ? "+" + overlapOffset : "") + ", " + size + ")";
        }
    }

    record Step(Op op, Time time, long n, Token token, CopySpec copy, Op inner, int target) {
        /** See {@link Program#avoidingKnownBugs()}. */
        Step avoidingKnownBugs(int barrierExpected) {
            Time t = time == Time.NANO || time == Time.NANOS_150 ? Time.MICRO    // #12 1-200 ns wait forever
                : time == Time.NULL ? Time.ZERO : time;                              // null limits not always checked
            return switch (op) {
                case FOREIGN -> new Step(Op.QUERY, null, 0, null, null, null, 0);    // #6 foreign handle: assert
                case B_AWAIT_BAD -> new Step(Op.B_QUERY, null, 0, null, null, null, 0);   // #14 tokens unchecked
                case B_ARRIVE_N -> n > barrierExpected ? new Step(Op.B_ARRIVE, null, 0, null, null, null, 0)
                    : this;                                                          // #11 overflow
                case MEMCPY, B_MEMCPY, MEMCPY_FILE -> new Step(op, t, n, token, copy.avoidingKnownBugs(op), inner,
                    target);
                default -> new Step(op, t, n, token, copy, inner, target);
            };
        }

        boolean mayBlock() {
            return switch (op) {
                case ACQUIRE, ACQUIRE_INTERRUPTIBLY, WAIT, WAIT_INTERRUPTIBLY, WAIT_FOR, WAIT_UNTIL, FOREIGN -> true;
                default -> false;
            };
        }

        @Override
        public String toString() {
            StringBuilder b = new StringBuilder(op.name());
            switch (op) {
                case WAIT_FOR, WAIT_UNTIL, B_TRY_PARITY -> b.append('(').append(time)
                    .append(op == Op.B_TRY_PARITY ? "," + (n == 1) : "").append(')');
                case WAIT_PRIOR, B_ARRIVE_N -> b.append('(').append(n).append(')');
                case COMMIT_BARRIER -> b.append(n == 0 ? "(barrier)" : "(null)");
                case B_AWAIT_BAD, B_TRY_WAIT -> b.append('(').append(token).append(')');
                case B_TRY_WAIT_FOR, B_TRY_WAIT_UNTIL -> b.append('(').append(token).append(',').append(time)
                    .append(')');
                case MEMCPY, MEMCPY_FILE, B_MEMCPY -> b.append(copy);
                case FOREIGN -> b.append("(rank+").append(target).append(": ").append(inner).append(')');
                default -> {
                }
            }
            return b.toString();
        }
    }

    record Program(int index, long seed, Kind kind, int teamSize, boolean virtual, ThreadScope scope, int stages,
                   Patience patience, WaitStrategy strategy, int barrierExpected, Completion completion,
                   List<Make> makes, List<List<Step>> scripts, List<Ending> endings) {

        /**
         * The program's time limit: 2 s, plus three patience intervals for each operation of its longest
         * script that may block (a stuck wait is reported after about one to two intervals; each blocking
         * operation may be stuck anew). A hang report at the default patience takes about a second.
         */
        Duration limit() {
            long patienceMillis = switch (patience) {
                case MS50 -> 50;
                case MS100 -> 100;
                case DEFAULT -> 1000;
                default -> 0;
            };
            int blocking = 0;
            for (List<Step> script : scripts) {
                int b = 2;          // the make and the ending
                for (Step st : script) {
                    b += st.mayBlock() ? 1 : 0;
                }
                blocking = Math.max(blocking, b);
            }
            long millis = 2000 + 3 * patienceMillis * blocking;
            double scale = Double.parseDouble(System.getProperty("jpipeline.test.fuzzLimitScale", "1"));
            return Duration.ofMillis((long) (millis * scale));
        }

        boolean usesRunnerMemory() {
            for (List<Step> script : scripts) {
                for (Step st : script) {
                    if (st.copy() != null && (st.copy().dst() == Seg.CONFINED_OTHER
                        || st.copy().src() == Seg.CONFINED_OTHER)) {
                        return true;
                    }
                }
            }
            return false;
        }

        boolean shared() {
            return kind == Kind.UNIFIED || kind == Kind.BY_COUNT || kind == Kind.BY_ROLE;
        }

        @Override
        public String toString() {
            StringBuilder b = new StringBuilder("program " + index + ": " + kind + ", team of " + teamSize + " "
                + (virtual ? "virtual" : "platform") + " threads");
            if (shared()) {
                b.append(", state(").append(scope).append(", ").append(stages).append(" stages, patience ")
                    .append(patience).append(", ").append(strategy).append(')');
            }
            if (kind == Kind.BARRIER || kind == Kind.THREAD) {
                b.append(", Barrier(").append(barrierExpected).append(", ").append(completion).append(')');
            }
            for (int r = 0; r < scripts.size(); r++) {
                b.append("\n    rank ").append(r).append(": ").append(makes.get(r)).append(' ')
                    .append(scripts.get(r)).append(" then ").append(endings.get(r));
            }
            return b.toString();
        }

        // ---------------------------------------------------------------------------------------------------
        // Generation: everything comes from (seed, index), nothing from the run.

        static Program generate(long seed, int index) {
            SplittableRandom rnd = new SplittableRandom(mix(seed, index));
            int dice = rnd.nextInt(100);
            Kind kind = dice < 20 ? Kind.THREAD : dice < 42 ? Kind.UNIFIED : dice < 64 ? Kind.BY_COUNT
                : dice < 82 ? Kind.BY_ROLE : Kind.BARRIER;
            boolean partitioned = kind == Kind.BY_COUNT || kind == Kind.BY_ROLE;
            int n;
            if (rnd.nextInt(200) == 0) {
                n = rnd.nextBoolean() ? 0 : -1;
            } else if (partitioned) {
                n = rnd.nextInt(10) == 0 ? 1 : 2 + rnd.nextInt(3);
            } else {
                n = 1 + rnd.nextInt(4);
            }
            boolean virtual = rnd.nextBoolean();
            int sd = rnd.nextInt(100);
            ThreadScope scope = sd < 90 ? ThreadScope.BLOCK : sd < 94 ? ThreadScope.DEVICE
                : sd < 97 ? ThreadScope.SYSTEM : sd < 99 ? ThreadScope.THREAD : null;
            int stages = rnd.nextInt(100) < 93 ? 1 + rnd.nextInt(4)
                : pickInt(rnd, 0, -1, 256, 1000, Integer.MIN_VALUE, 255, Integer.MAX_VALUE);
            Patience patience;
            int pd = rnd.nextInt(1000);
            if (n == 1 && pd < 100) {
                patience = Patience.ZERO;
            } else if (n == 1 && pd < 150) {
                patience = Patience.ABSURD;
            } else if (pd >= 990) {
                patience = Patience.NEGATIVE;
            } else if (pd >= 987) {
                patience = Patience.DEFAULT;
            } else {
                patience = pd < 600 ? Patience.MS50 : Patience.MS100;
            }
            int wd = rnd.nextInt(100);
            WaitStrategy strategy = wd < 74 ? WaitStrategy.ADAPTIVE : wd < 99 ? WaitStrategy.BLOCKING : null;
            int barrierExpected;
            int bd = rnd.nextInt(100);
            int size = Math.max(n, 1);
            barrierExpected = bd < 80 ? size : bd < 88 ? size + 1 : bd < 93 ? 1 : bd < 97 ? Math.max(1, size - 1)
                : pickInt(rnd, 0, -1, Barrier.max() + 1, Integer.MAX_VALUE);
            Completion completion = Completion.NONE;
            if (kind == Kind.BARRIER) {
                int cd = rnd.nextInt(100);
                completion = cd < 50 ? Completion.NONE : cd < 72 ? Completion.COUNT : cd < 82 ? Completion.THROW
                    : cd < 88 ? Completion.SMALL_COPY_INTO_SELF : cd < 94 ? Completion.TRY_PARITY
                    : cd < 97 ? Completion.WAIT_OWN_PARITY : Completion.AWAIT_LAST_TOKEN;
            }
            List<Make> makes = makes(rnd, kind, size);
            // Which ranks mean to produce: a count partition's caller picks P of them, as CUDA code does.
            List<Integer> order = new ArrayList<>();
            for (int r = 0; r < size; r++) {
                order.add(r);
            }
            Collections.shuffle(order, new java.util.Random(rnd.nextLong()));
            List<List<Step>> scripts = new ArrayList<>();
            List<Ending> endings = new ArrayList<>();
            for (int r = 0; r < size; r++) {
                Make m = makes.get(r);
                boolean producer = switch (m.kind()) {
                    case COUNT -> order.indexOf(r) < m.producers() || rnd.nextInt(20) == 0;
                    case ROLE -> m.role() == PipelineRole.PRODUCER;
                    default -> true;
                };
                boolean ownEngine = kind != Kind.THREAD || m.kind() == MakeKind.THREAD_ENGINE;
                List<Step> script = script(rnd, kind, m, producer, size, Math.max(1, Math.min(stages, 8)), ownEngine);
                if (patience == Patience.DEFAULT && script.size() > 3) {
                    script = script.subList(0, 3);         // a stuck wait costs a second here: keep it short
                }
                scripts.add(script);
                int ed = rnd.nextInt(100);
                endings.add(ed < 50 ? Ending.QUIT : ed < 92 ? Ending.CLOSE : ed < 97 ? Ending.DEAD : Ending.CRASH);
            }
            if (completion == Completion.WAIT_OWN_PARITY || completion == Completion.AWAIT_LAST_TOKEN) {
                // Today a completion that waits on its barrier hangs, and a large barrier copy submitted meanwhile
                // spins on a core forever (PhaseBarrier.expectOneMore): keep this program's barrier copies small,
                // so that one hang cannot slow down every program after it.
                for (int r = 0; r < scripts.size(); r++) {
                    List<Step> out = new ArrayList<>();
                    for (Step st : scripts.get(r)) {
                        out.add(st.op() == Op.B_MEMCPY && st.copy().bytes() > 64 * 1024
                            ? new Step(st.op(), st.time(), st.n(), st.token(), st.copy().avoidingKnownBugs(st.op()),
                                st.inner(), st.target()) : st);
                    }
                    scripts.set(r, out);
                }
            }
            Program p = new Program(index, seed, kind, n, virtual, scope, stages, patience, strategy,
                barrierExpected, completion, makes, scripts, endings);
            return AVOID_KNOWN_BUGS ? p.avoidingKnownBugs() : p;
        }

        /**
         * The harness's own check ({@code -Djpipeline.test.fuzzAvoidKnownBugs=true}): the same program without
         * the misuse that today's engine is known to mishandle (issue 8's list, and what this fuzzer found
         * besides). On today's engine such a run must be clean; what it still finds is either a new bug or a
         * mistake of this harness.
         */
        Program avoidingKnownBugs() {
            Patience pat = patience == Patience.DEFAULT || patience == Patience.ABSURD ? Patience.MS50 : patience;
            List<Make> ms = new ArrayList<>(makes);
            Make first = ms.get(0);
            for (int r = 0; r < ms.size(); r++) {           // #5 a mismatched make hangs
                Make m = ms.get(r);
                if (shared() && (m.kind() != first.kind() || m.producers() != first.producers()
                    || m.state() != first.state() || m.role() == null && m.kind() == MakeKind.ROLE)) {
                    ms.set(r, new Make(first.kind(), first.producers(), first.kind() == MakeKind.ROLE
                        ? (m.kind() == MakeKind.ROLE && m.role() != null ? m.role() : PipelineRole.CONSUMER) : null,
                        first.state(), first.nullGroup()));
                }
            }
            List<List<Step>> ss = new ArrayList<>();
            for (List<Step> script : scripts) {
                List<Step> out = new ArrayList<>();
                for (Step st : script) {
                    out.add(st.avoidingKnownBugs(barrierExpected));
                }
                ss.add(out);
            }
            List<Ending> es = new ArrayList<>();
            for (Ending e : endings) {                      // #7 a dead participant strands its peers
                es.add(e == Ending.DEAD || e == Ending.CRASH ? Ending.CLOSE : e);
            }
            Completion comp = completion == Completion.WAIT_OWN_PARITY || completion == Completion.AWAIT_LAST_TOKEN
                ? Completion.COUNT : completion;            // #13 a completion waiting on its barrier hangs
            return new Program(index, seed, kind, teamSize, virtual, scope, stages, pat, strategy, barrierExpected,
                comp, ms, ss, es);
        }

        private static List<Make> makes(SplittableRandom rnd, Kind kind, int n) {
            List<Make> makes = new ArrayList<>();
            StateArg state = rnd.nextInt(100) == 0 ? StateArg.NULL : StateArg.MAIN;
            boolean nullGroup = rnd.nextInt(100) == 0;
            switch (kind) {
                case THREAD -> {
                    for (int r = 0; r < n; r++) {
                        int d = rnd.nextInt(100);
                        makes.add(new Make(d < 70 ? MakeKind.THREAD_ENGINE : d < 96 ? MakeKind.THREAD_DEFAULT
                            : MakeKind.THREAD_NULL_ENGINE, 0, null, StateArg.MAIN, false));
                    }
                }
                case BARRIER -> {
                    for (int r = 0; r < n; r++) {
                        makes.add(new Make(MakeKind.NONE, 0, null, StateArg.MAIN, false));
                    }
                }
                case UNIFIED -> {
                    for (int r = 0; r < n; r++) {
                        makes.add(new Make(MakeKind.UNIFIED, 0, null, state, nullGroup));
                    }
                }
                case BY_COUNT -> {
                    int p = n >= 2 ? 1 + rnd.nextInt(n - 1) : 1;
                    if (rnd.nextInt(100) < 4) {
                        p = pickInt(rnd, 0, -1, n, n + 3, Integer.MAX_VALUE, Integer.MIN_VALUE);
                    }
                    for (int r = 0; r < n; r++) {
                        makes.add(new Make(MakeKind.COUNT, p, null, state, nullGroup));
                    }
                }
                case BY_ROLE -> {
                    List<PipelineRole> roles = new ArrayList<>();
                    for (int r = 0; r < n; r++) {
                        roles.add(rnd.nextBoolean() ? PipelineRole.PRODUCER : PipelineRole.CONSUMER);
                    }
                    if (n >= 2 && rnd.nextInt(100) < 85) {      // mostly a valid mix of roles
                        roles.set(0, PipelineRole.PRODUCER);
                        roles.set(1, PipelineRole.CONSUMER);
                        Collections.shuffle(roles, new java.util.Random(rnd.nextLong()));
                    }
                    for (int r = 0; r < n; r++) {
                        makes.add(new Make(MakeKind.ROLE, 0, roles.get(r), state, nullGroup));
                    }
                }
            }
            if ((kind == Kind.UNIFIED || kind == Kind.BY_COUNT || kind == Kind.BY_ROLE) && n >= 2
                && state == StateArg.MAIN && !nullGroup && rnd.nextInt(100) < 8) {
                // a mismatched collective make on one rank: every rank must get an IllegalArgumentException
                int r = rnd.nextInt(n);
                Make m = makes.get(r);
                int d = rnd.nextInt(5);
                makes.set(r, switch (d) {
                    case 0 -> kind == Kind.UNIFIED ? new Make(MakeKind.COUNT, 1, null, StateArg.MAIN, false)
                        : new Make(MakeKind.UNIFIED, 0, null, StateArg.MAIN, false);
                    case 1 -> new Make(MakeKind.COUNT, kind == Kind.BY_COUNT ? m.producers() % (n - 1) + 1
                        + (n > 2 ? 0 : 1) : 1, null, StateArg.MAIN, false);
                    case 2 -> new Make(MakeKind.ROLE, 0, kind == Kind.BY_ROLE ? null : PipelineRole.CONSUMER,
                        StateArg.MAIN, false);
                    default -> new Make(m.kind(), m.producers(), m.role(), StateArg.OTHER, false);
                });
            }
            return makes;
        }

        /** A rank's script: mostly the next valid protocol step, sometimes anything. */
        private static List<Step> script(SplittableRandom rnd, Kind kind, Make make, boolean producer, int n,
                                         int stages, boolean ownEngine) {
            int length = rnd.nextInt(10);
            List<Step> steps = new ArrayList<>();
            boolean consumer = kind == Kind.THREAD || make.kind() == MakeKind.UNIFIED || !producer;
            boolean acquired = false;
            boolean waited = false;
            int outstanding = 0;
            for (int i = 0; i < length; i++) {
                if (kind == Kind.BARRIER) {
                    steps.add(barrierStep(rnd, ownEngine));
                    continue;
                }
                if (rnd.nextInt(100) < 70) {
                    boolean produce = producer && (!consumer || acquired || outstanding == 0
                        || (outstanding < stages && rnd.nextBoolean()));
                    if (produce) {
                        if (!acquired) {
                            steps.add(simple(rnd.nextInt(10) == 0 ? Op.ACQUIRE_INTERRUPTIBLY : Op.ACQUIRE));
                            acquired = true;
                        } else if (rnd.nextInt(3) == 0) {
                            steps.add(new Step(Op.MEMCPY, null, 0, null, validCopy(rnd), null, 0));
                        } else {
                            steps.add(simple(Op.COMMIT));
                            acquired = false;
                            outstanding++;
                        }
                    } else if (!waited) {
                        int d = rnd.nextInt(10);
                        steps.add(d < 5 ? simple(Op.WAIT) : d < 6 ? simple(Op.WAIT_INTERRUPTIBLY)
                            : d < 8 ? timed(rnd, Op.WAIT_FOR) : timed(rnd, Op.WAIT_UNTIL));
                        waited = true;
                    } else {
                        steps.add(kind == Kind.THREAD && rnd.nextInt(4) == 0
                            ? new Step(Op.WAIT_PRIOR, null, pickInt(rnd, 0, 1, 2), null, null, null, 0)
                            : simple(Op.RELEASE));
                        waited = false;
                        outstanding = Math.max(0, outstanding - 1);
                    }
                } else {
                    steps.add(anyStep(rnd, kind, n, ownEngine));
                }
            }
            return steps;
        }

        private static Step simple(Op op) {
            return new Step(op, null, 0, null, null, null, 0);
        }

        private static Step timed(SplittableRandom rnd, Op op) {
            return new Step(op, time(rnd), 0, null, null, null, 0);
        }

        private static Time time(SplittableRandom rnd) {
            int d = rnd.nextInt(100);
            return d < 3 ? Time.NULL : d < 18 ? Time.ZERO : d < 24 ? Time.NEG_NANO : d < 28 ? Time.NEG_SECOND
                : d < 40 ? Time.NANO : d < 50 ? Time.NANOS_150 : d < 60 ? Time.MICRO : d < 75 ? Time.MILLI
                : d < 80 ? Time.MILLIS_15 : d < 92 ? Time.CENTURY : Time.ABSURD;
        }

        private static Time shortTime(SplittableRandom rnd) {
            Time t = time(rnd);
            return t.isShort() || t == Time.NULL ? t : Time.MILLI;
        }

        /** Any pipeline operation, with random (often invalid) arguments. */
        private static Step anyStep(SplittableRandom rnd, Kind kind, int n, boolean ownEngine) {
            int d = rnd.nextInt(100);
            if (d < 6) {
                return simple(Op.ACQUIRE);
            } else if (d < 11) {
                return simple(Op.COMMIT);
            } else if (d < 16) {
                return simple(Op.WAIT);
            } else if (d < 20) {
                return timed(rnd, Op.WAIT_FOR);
            } else if (d < 23) {
                return timed(rnd, Op.WAIT_UNTIL);
            } else if (d < 28) {
                return simple(Op.RELEASE);
            } else if (d < 31) {
                return simple(Op.QUIT);
            } else if (d < 33) {
                return simple(Op.CLOSE);
            } else if (d < 35) {
                return simple(Op.QUERY);
            } else if (d < 39) {
                return new Step(Op.WAIT_PRIOR, null, pickInt(rnd, -1, 0, 1, 2, 8, 9, Integer.MAX_VALUE,
                    Integer.MIN_VALUE), null, null, null, 0);
            } else if (d < 43) {
                return new Step(Op.COMMIT_BARRIER, null, rnd.nextInt(6) == 0 ? 1 : 0, null, null, null, 0);
            } else if (d < 63) {
                return new Step(Op.MEMCPY, null, 0, null, anyCopy(rnd, ownEngine, true), null, 0);
            } else if (d < 71) {
                return new Step(Op.MEMCPY_FILE, null, 0, null, fileCopy(rnd), null, 0);
            } else if (d < 80 && n >= 2) {
                return new Step(Op.FOREIGN, null, 0, null, null, pick(rnd, Op.ACQUIRE, Op.COMMIT, Op.WAIT, Op.WAIT_FOR,
                    Op.RELEASE, Op.QUIT, Op.CLOSE, Op.QUERY, Op.MEMCPY, Op.WAIT_PRIOR, Op.COMMIT_BARRIER),
                    1 + rnd.nextInt(n - 1));
            } else if (d < 84) {
                return simple(Op.INTERRUPT);
            } else if (d < 86) {
                return simple(Op.BOGUS_GROUP_MAKE);
            } else if (d < 90) {
                return simple(Op.ACQUIRE_INTERRUPTIBLY);
            } else if (d < 94) {
                return simple(Op.WAIT_INTERRUPTIBLY);
            } else if (kind == Kind.THREAD) {
                return barrierStep(rnd, ownEngine);
            }
            return new Step(Op.MEMCPY, null, 0, null, anyCopy(rnd, ownEngine, true), null, 0);
        }

        private static Step barrierStep(SplittableRandom rnd, boolean ownEngine) {
            int d = rnd.nextInt(100);
            if (d < 28) {
                return simple(Op.B_ARRIVE);
            } else if (d < 36) {
                return new Step(Op.B_ARRIVE_N, null, pickInt(rnd, 0, -1, 1, 2, 3, Integer.MAX_VALUE,
                    Integer.MIN_VALUE, Barrier.max()), null, null, null, 0);
            } else if (d < 42) {
                return simple(Op.B_DROP);
            } else if (d < 50) {
                return new Step(Op.B_AWAIT_BAD, null, 0, pick(rnd, Token.MINUS_ONE, Token.BIT_40, Token.LONG_MIN,
                    Token.LONG_MAX), null, null, 0);
            } else if (d < 56) {
                return new Step(Op.B_TRY_WAIT, null, 0, anyToken(rnd), null, null, 0);
            } else if (d < 68) {
                // A barrier has no hang report: a long limit is only used with a value that is surely no token
                // (a user waiting a century for a phase that never completes would hang by their own choice).
                Token token = anyToken(rnd);
                boolean surelyBad = token == Token.MINUS_ONE || token == Token.BIT_40 || token == Token.LONG_MIN
                    || token == Token.LONG_MAX;
                return new Step(d < 64 ? Op.B_TRY_WAIT_FOR : Op.B_TRY_WAIT_UNTIL, surelyBad ? time(rnd)
                    : shortTime(rnd), 0, token, null, null, 0);
            } else if (d < 82) {
                return new Step(Op.B_TRY_PARITY, shortTime(rnd), rnd.nextInt(2), null, null, null, 0);
            } else if (d < 95) {
                // barrier-form copies run on the shared engine: never close their arena in mid-copy
                return new Step(Op.B_MEMCPY, null, 0, null, anyCopy(rnd, false, true), null, 0);
            }
            return simple(Op.B_QUERY);
        }

        private static Token anyToken(SplittableRandom rnd) {
            return rnd.nextInt(100) < 40 ? Token.OWN : Token.values()[rnd.nextInt(Token.values().length)];
        }

        private static CopySpec validCopy(SplittableRandom rnd) {
            long bytes = size(rnd, false);
            Seg[] kinds = {Seg.HEAP_BYTES, Seg.HEAP_LONGS, Seg.NATIVE};
            Seg dst = kinds[rnd.nextInt(3)];
            Seg src = kinds[rnd.nextInt(3)];
            long alignment = 0;
            if (rnd.nextInt(4) == 0 && dst != Seg.HEAP_BYTES && src != Seg.HEAP_BYTES) {
                alignment = 8;
                bytes = bytes / 8 * 8;
            }
            return new CopySpec(bytes, dst, bytes, src, bytes, 0, alignment, rnd.nextInt(8) == 0 ? 1 : 0, null, 0);
        }

        private static long size(SplittableRandom rnd, boolean invalidOk) {
            int d = rnd.nextInt(100);
            if (d < 6) {
                return 0;
            } else if (d < 66) {
                return 1 + rnd.nextInt(256);
            } else if (d < 70) {
                return 64 * 1024;
            } else if (d < 88 || !invalidOk) {
                return 64 * 1024 + 1 + rnd.nextInt(96 * 1024);
            }
            return pickLong(rnd, -1L, Long.MIN_VALUE, -64L * 1024 - 1, Long.MAX_VALUE);
        }

        private static CopySpec anyCopy(SplittableRandom rnd, boolean ownEngine, boolean memory) {
            long bytes = size(rnd, true);
            long len = Math.max(0, Math.min(bytes, 160 * 1024));
            long dstLen = len;
            long srcLen = len;
            int end = rnd.nextInt(100);
            if (end < 8 && bytes > 0 && bytes < BUF) {
                dstLen = Math.max(0, bytes - 1 - rnd.nextInt(8));      // past the destination's end
            } else if (end < 16 && bytes > 0 && bytes < BUF) {
                srcLen = Math.max(0, bytes - 1 - rnd.nextInt(8));      // past the source's end
            } else if (end < 30) {
                dstLen = Math.min(BUF - 8, len + rnd.nextInt(64));     // room to spare
            }
            Seg dst = seg(rnd, ownEngine, true);
            Seg src = memory ? seg(rnd, ownEngine, false) : null;
            long overlap = src == Seg.OVERLAP ? (bytes > 1 ? rnd.nextLong(Math.min(bytes, 64)) : 0) : 0;
            long alignment = 0;
            int ad = rnd.nextInt(100);
            if (ad < 15) {
                alignment = 1L << rnd.nextInt(5);                  // 1..16
                if (rnd.nextInt(3) > 0 && bytes > 0) {
                    bytes = bytes / alignment * alignment;
                    dstLen = Math.min(dstLen, Math.max(bytes, dstLen / alignment * alignment));
                    srcLen = Math.min(srcLen, Math.max(bytes, srcLen / alignment * alignment));
                }
            } else if (ad < 18) {
                alignment = pickLong(rnd, 3L, 0L, -8L, 1L << 62);           // not a power of two
            }
            int group = rnd.nextInt(100) < 10 ? 1 : rnd.nextInt(100) < 3 ? 2 : 0;
            return new CopySpec(bytes, dst, dstLen, src, srcLen, overlap, alignment, group, null, 0);
        }

        private static Seg seg(SplittableRandom rnd, boolean ownEngine, boolean dst) {
            int d = rnd.nextInt(100);
            Seg s = d < 22 ? Seg.HEAP_BYTES : d < 40 ? Seg.HEAP_LONGS : d < 62 ? Seg.NATIVE
                : d < 68 ? Seg.READ_ONLY : d < 75 ? Seg.CONFINED_OWN : d < 80 ? Seg.CONFINED_OTHER
                : d < 85 ? Seg.CLOSED : d < 89 ? Seg.CLOSE_AFTER : d < 93 ? Seg.MISALIGNED
                : d < 97 ? Seg.OVERLAP : Seg.NULL;
            if (s == Seg.CLOSE_AFTER && !ownEngine) {
                s = Seg.NATIVE;                 // closing in mid-copy is only done on the fuzzer's own engine
            }
            if (s == Seg.OVERLAP && dst) {
                s = Seg.HEAP_BYTES;
            }
            return s;
        }

        private static CopySpec fileCopy(SplittableRandom rnd) {
            long bytes = size(rnd, true);
            long dstLen = Math.max(0, Math.min(bytes, 160 * 1024));
            if (rnd.nextInt(10) == 0 && bytes > 0 && bytes < BUF) {
                dstLen = bytes - 1;
            }
            int cd = rnd.nextInt(100);
            Channel channel = cd < 80 ? Channel.GOOD : cd < 90 ? Channel.FAILING : cd < 96 ? Channel.NO_PROGRESS
                : Channel.NULL;
            int pd = rnd.nextInt(100);
            long position = pd < 80 ? rnd.nextLong(Math.max(1, FILE.length - Math.max(0, Math.min(bytes, FILE.length))))
                : pd < 88 ? FILE.length - rnd.nextInt(64) : pd < 94 ? FILE.length + rnd.nextInt(1000)
                : pickLong(rnd, -1L, Long.MIN_VALUE, Long.MAX_VALUE);
            Seg dst = seg(rnd, true, true);
            if (dst == Seg.CLOSE_AFTER) {
                dst = Seg.NATIVE;
            }
            return new CopySpec(bytes, dst, dstLen, null, 0, 0, 0, 0, channel, position);
        }

        @SafeVarargs
        private static <T> T pick(SplittableRandom rnd, T... values) {
            return values[rnd.nextInt(values.length)];
        }

        private static int pickInt(SplittableRandom rnd, int... values) {
            return values[rnd.nextInt(values.length)];
        }

        private static long pickLong(SplittableRandom rnd, long... values) {
            return values[rnd.nextInt(values.length)];
        }
    }

    static long mix(long seed, long index) {
        long z = seed + (index + 1) * 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    // =========================================================================================================
    // Running a program

    static final class Run {
        final Program p;
        final Stats stats;
        /** Set once the program is over: no-progress channels then report end of file, freeing the workers. */
        volatile boolean over;
        final AtomicReferenceArray<Pipeline> handles;
        final Thread[] threads;
        final String[] current;
        final CountDownLatch finished;
        PipelineSharedState state;
        PipelineSharedState otherState;
        Barrier barrier;
        final Barrier otherBarrier = new Barrier(1);
        /** The last token any thread got from {@link #barrier} (for completions that wait on their barrier). */
        volatile long lastToken = -1;
        /** A confined arena of the runner thread: another thread's confined memory for the team. */
        Arena runnerArena;
        final FuzzChannel good;
        final FuzzChannel failing;
        final FuzzChannel noProgress;

        Run(Program p, Stats stats) {
            this.p = p;
            this.stats = stats;
            int n = Math.max(1, p.teamSize());
            this.handles = new AtomicReferenceArray<>(n);
            this.threads = new Thread[n];
            this.current = new String[n];
            this.finished = new CountDownLatch(n);
            this.good = new FuzzChannel(this, Channel.GOOD);
            this.failing = new FuzzChannel(this, Channel.FAILING);
            this.noProgress = new FuzzChannel(this, Channel.NO_PROGRESS);
        }

        void execute() {
            stats.count("programs " + p.kind());
            runnerArena = Arena.ofConfined();
            if (p.usesRunnerMemory()) {
                runnerMemory = runnerArena.allocate(2L * BUF, 64);
            }
            try {
                if (setUp()) {
                    runTeam();
                }
            } finally {
                over = true;
                runnerArena.close();
            }
        }

        /** The harness's own calls (state, barrier, team); false when the program cannot go on. */
        private boolean setUp() {
            if (p.shared()) {
                try {
                    PipelineSharedState.Builder builder = PipelineSharedState.builder(p.scope(), p.stages());
                    switch (p.patience()) {
                        case MS50 -> builder.detectDeadlocks(Duration.ofMillis(50));
                        case MS100 -> builder.detectDeadlocks(Duration.ofMillis(100));
                        case ZERO -> builder.detectDeadlocks(Duration.ZERO);
                        case NEGATIVE -> builder.detectDeadlocks(Duration.ofMillis(-5));
                        case ABSURD -> builder.detectDeadlocks(Duration.ofSeconds(Long.MAX_VALUE));
                        case DEFAULT -> {
                        }
                    }
                    builder.waitStrategy(p.strategy()).copyEngine(ENGINE);
                    state = builder.build();
                    otherState = PipelineSharedState.builder(ThreadScope.BLOCK, 2).copyEngine(ENGINE)
                        .detectDeadlocks(Duration.ofMillis(50)).build();
                } catch (Throwable t) {
                    judgeSetUp("PipelineSharedState", t, invalidState());
                    return false;
                }
                judgeSetUp("PipelineSharedState", null, invalidState());
            }
            if (p.kind() == Kind.BARRIER || p.kind() == Kind.THREAD) {
                try {
                    barrier = new Barrier(p.barrierExpected(), completion());
                } catch (Throwable t) {
                    judgeSetUp("Barrier", t, p.barrierExpected() < 1 || p.barrierExpected() > Barrier.max()
                        ? "expected count " + p.barrierExpected() : null);
                    return false;
                }
                judgeSetUp("Barrier", null, p.barrierExpected() < 1 || p.barrierExpected() > Barrier.max()
                    ? "expected count " + p.barrierExpected() : null);
            } else {
                barrier = new Barrier(Math.max(1, p.teamSize()));
            }
            return true;
        }

        private String invalidState() {
            if (p.scope() == null) {
                return "null scope";
            } else if (p.scope() == ThreadScope.THREAD) {
                return "THREAD scope";
            } else if (p.stages() < 1 || p.stages() > PipelineSharedState.MAX_STAGES) {
                return "stage count " + p.stages();
            } else if (p.patience() == Patience.NEGATIVE) {
                return "negative patience";
            } else if (p.strategy() == null) {
                return "null wait strategy";
            }
            return null;
        }

        private void judgeSetUp(String what, Throwable t, String invalid) {
            if (t != null) {
                stats.count("exceptions " + t.getClass().getSimpleName());
                String why = unclear(t);
                if (why != null) {
                    stats.find("UNCLEAR " + why, p, -1, -1, "setting up the " + what, t);
                }
            } else if (invalid != null) {
                stats.find("NOT_REJECTED " + what, p, -1, -1, what + " accepted " + invalid, null);
            }
        }

        private Runnable completion() {
            return switch (p.completion()) {
                case NONE -> null;
                case COUNT -> () -> stats.count("barrier completions");
                case THROW -> () -> {
                    if ((barrier.phase() & 3) == 1) {
                        throw new UserCompletionException();
                    }
                };
                case SMALL_COPY_INTO_SELF -> () -> MemcpyAsync.memcpyAsync(DST_NATIVE.asSlice(0, 64),
                    SRC_NATIVE.asSlice(0, 64), 64, barrier);
                case TRY_PARITY -> () -> barrier.tryWaitParity((barrier.phase() & 1) == 1, Duration.ofMillis(1));
                case WAIT_OWN_PARITY -> () -> barrier.waitParity((barrier.phase() & 1) == 1);
                case AWAIT_LAST_TOKEN -> () -> {
                    long token = lastToken;
                    if (token != -1) {
                        barrier.await(token);
                    }
                };
            };
        }

        private void runTeam() {
            ThreadTeam team;
            try {
                team = p.virtual() ? ThreadTeam.ofVirtual(p.teamSize()) : ThreadTeam.ofPlatform(p.teamSize());
            } catch (Throwable t) {
                judgeSetUp("ThreadTeam", t, p.teamSize() < 1 ? "team size " + p.teamSize() : null);
                return;
            }
            judgeSetUp("ThreadTeam", null, p.teamSize() < 1 ? "team size " + p.teamSize() : null);
            long begin = System.nanoTime();
            long deadline = begin + p.limit().toNanos();
            String teamFailure = null;
            try {
                team.run(p.limit(), this::body);
            } catch (ThreadTeam.TeamFailure f) {
                if (!(f.getCause() instanceof SimulatedCrash)) {
                    teamFailure = f.getMessage();
                }
            }
            boolean done;
            try {
                done = finished.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
            long millis = (System.nanoTime() - begin) / 1_000_000;
            stats.count(millis < 20 ? "programs taking < 20 ms" : millis < 100 ? "programs taking 20-99 ms"
                : millis < 500 ? "programs taking 100-499 ms" : "programs taking >= 500 ms");
            if (!done) {
                stats.hangs.incrementAndGet();
                stats.find("HANG", p, -1, -1, "the program did not end within " + p.limit() + ": " + stuck(),
                    null);
            } else if (teamFailure != null) {
                stats.find("HARNESS team", p, -1, -1, teamFailure, null);
            }
        }

        private String stuck() {
            StringBuilder b = new StringBuilder();
            for (int r = 0; r < threads.length; r++) {
                Thread t = threads[r];
                if (t != null && t.isAlive()) {
                    String site = String.valueOf(current[r]).replaceFirst("^step \\d+ ", "")
                        .replaceFirst("[(\\[].*", "");
                    stats.count("hung ranks stuck in " + p.kind() + " " + site);
                    b.append("\n      rank ").append(r).append(" in ").append(current[r]).append(", ")
                        .append(t.getState());
                    StackTraceElement[] st = t.getStackTrace();
                    int shown = 0;
                    for (StackTraceElement e : st) {
                        if (shown < 5 && e.getClassName().startsWith("dev.jpipeline")) {
                            b.append("\n        at ").append(e);
                            shown++;
                        }
                    }
                }
            }
            return b.toString();
        }

        // -----------------------------------------------------------------------------------------------------
        // A team thread

        /** What one thread of the program holds. */
        final class Ctx {
            final int rank;
            final Group group;
            Pipeline pipe;
            Arena confined;
            long lastToken = Long.MIN_VALUE + 1;
            boolean hasToken;
            /** Set by an operation before its call when its arguments break a documented rule. */
            String invalid;

            Ctx(int rank, Group group) {
                this.rank = rank;
                this.group = group;
            }

            Arena confined() {
                if (confined == null) {
                    confined = Arena.ofConfined();
                }
                return confined;
            }
        }

        private void body(Group g) {
            int r = g.threadRank();
            threads[r] = Thread.currentThread();
            Ctx c = new Ctx(r, g);
            Ending ending = p.endings().get(r);
            try {
                current[r] = "make";
                make(c);
                List<Step> script = p.scripts().get(r);
                for (int i = 0; i < script.size(); i++) {
                    current[r] = "step " + i + " " + script.get(i);
                    execute(c, i, script.get(i));
                }
                current[r] = "ending " + ending;
                if (c.pipe != null && (ending == Ending.QUIT || ending == Ending.CLOSE)) {
                    int i = script.size();
                    execute(c, i, new Step(ending == Ending.QUIT ? Op.QUIT : Op.CLOSE, null, 0, null, null, null, 0));
                }
            } finally {
                Thread.interrupted();
                if (c.confined != null) {
                    c.confined.close();
                }
                current[r] = "ended";
                finished.countDown();
            }
            if (ending == Ending.CRASH) {
                throw new SimulatedCrash();
            }
        }

        private void make(Ctx c) {
            Make m = p.makes().get(c.rank);
            if (m.kind() == MakeKind.NONE) {
                return;
            }
            PipelineSharedState s = m.state() == StateArg.MAIN ? state : m.state() == StateArg.OTHER ? otherState
                : null;
            Group g = m.nullGroup() ? null : c.group;
            String invalid = invalidMake(c.rank);
            Throwable thrown = null;
            long start = System.nanoTime();
            try {
                c.pipe = switch (m.kind()) {
                    case UNIFIED -> Pipeline.make(g, s);
                    case COUNT -> Pipeline.make(g, s, m.producers());
                    case ROLE -> Pipeline.make(g, s, m.role());
                    case THREAD_DEFAULT -> Pipeline.make();
                    case THREAD_ENGINE -> Pipeline.make(ENGINE);
                    case THREAD_NULL_ENGINE -> Pipeline.make((CopyEngine) null);
                    case NONE -> null;
                };
                handles.set(c.rank, c.pipe);
            } catch (Throwable t) {
                thrown = t;
            }
            judge(c, -1, "make " + m, thrown, invalid, null, System.nanoTime() - start);
        }

        /** Why the program's collective make must fail on every rank (for thread scope: on this rank), or null. */
        private String invalidMake(int rank) {
            Make m = p.makes().get(0);
            if (!p.shared()) {
                return p.makes().get(rank).kind() == MakeKind.THREAD_NULL_ENGINE ? "null engine" : null;
            }
            for (Make other : p.makes()) {
                if (other.kind() != m.kind() || other.producers() != m.producers() || other.state() != m.state()
                    || other.nullGroup() != m.nullGroup() || (other.kind() == MakeKind.ROLE && other.role() == null)) {
                    return "mismatched or null arguments across ranks";
                }
            }
            int n = p.teamSize();
            if (m.state() == StateArg.NULL || m.nullGroup()) {
                return "null argument";
            }
            if (m.kind() == MakeKind.COUNT && (m.producers() < 1 || m.producers() > n - 1)) {
                return "producer count " + m.producers() + " in a group of " + n;
            }
            if (m.kind() == MakeKind.ROLE) {
                long producers = p.makes().stream().filter(x -> x.role() == PipelineRole.PRODUCER).count();
                if (producers == 0 || producers == n) {
                    return "every rank chose the same role";
                }
            }
            return null;
        }

        /** Runs one step and judges it. */
        private void execute(Ctx c, int i, Step s) {
            c.invalid = null;
            Throwable thrown = null;
            long start = System.nanoTime();
            try {
                perform(c, s, c.pipe);
            } catch (Skip skip) {
                stats.count("skipped " + s.op());
                return;
            } catch (HarnessError e) {
                stats.find("HARNESS arguments", p, c.rank, i, s.toString(), e.getCause());
                return;
            } catch (Throwable t) {
                thrown = t;
            }
            long elapsed = System.nanoTime() - start;
            Thread.interrupted();       // an interrupt belongs to the step that made it (INTERRUPT: the next one)
            if (s.op() == Op.INTERRUPT) {
                Thread.currentThread().interrupt();
            }
            judge(c, i, s.toString(), thrown, c.invalid, s.time(), elapsed);
        }

        private void judge(Ctx c, int i, String what, Throwable thrown, String invalid, Time time, long elapsed) {
            stats.count("steps");
            if (thrown != null) {
                stats.count("exceptions " + thrown.getClass().getSimpleName());
                if (MESSAGES) {
                    stats.count("message " + thrown.getClass().getSimpleName() + ": " + String.valueOf(
                        thrown.getMessage()).replaceAll("[0-9]+", "#").replaceAll("\\s+", " ")
                        .replaceAll("(pipeline deadlock: [^#]*).*", "$1..."));
                }
                String why = unclear(thrown);
                if (why != null) {
                    stats.find("UNCLEAR " + why, p, c.rank, i, what, thrown);
                }
                String message = String.valueOf(thrown.getMessage());
                if (message.startsWith("pipeline deadlock")) {
                    stats.count("hang reports");
                    if (time != null && time.isShort()) {
                        stats.find("TIMED_WAIT ended by a hang report", p, c.rank, i, what, thrown);
                    }
                }
            } else if (invalid != null) {
                stats.find("NOT_REJECTED " + invalid.replaceAll(" [0-9-].*", ""), p, c.rank, i,
                    what + " accepted: " + invalid, null);
            }
            if (time != null && time.isShort() && elapsed > time.nanos() + TIMED_WAIT_SLACK_NANOS) {
                stats.find("TIMED_WAIT ignored its limit", p, c.rank, i, what + " took " + elapsed / 1_000_000
                    + " ms", thrown);
            }
        }

        // -----------------------------------------------------------------------------------------------------
        // Operations

        private void perform(Ctx c, Step s, Pipeline pipe) throws Throwable {
            switch (s.op()) {
                case ACQUIRE -> need(pipe).producerAcquire();
                case ACQUIRE_INTERRUPTIBLY -> need(pipe).producerAcquireInterruptibly();
                case COMMIT -> need(pipe).producerCommit();
                case WAIT -> need(pipe).consumerWait();
                case WAIT_INTERRUPTIBLY -> need(pipe).consumerWaitInterruptibly();
                case WAIT_FOR -> {
                    need(pipe);
                    c.invalid = s.time() == Time.NULL ? "null timeout" : null;
                    pipe.consumerWaitFor(s.time().duration());
                }
                case WAIT_UNTIL -> {
                    need(pipe);
                    c.invalid = s.time() == Time.NULL ? "null deadline" : null;
                    pipe.consumerWaitUntil(s.time().instant());
                }
                case RELEASE -> need(pipe).consumerRelease();
                case QUIT -> need(pipe).quit();
                case CLOSE -> need(pipe).close();
                case QUERY -> {
                    need(pipe).isActive();
                    pipe.scope();
                    pipe.toString();
                }
                case WAIT_PRIOR -> {
                    c.invalid = s.n() < 0 ? "negative prior" : pipe == null ? "null pipe"
                        : pipe.scope() != ThreadScope.THREAD ? "consumerWaitPrior on a shared pipeline" : null;
                    Pipeline.consumerWaitPrior(pipe, (int) s.n());
                }
                case COMMIT_BARRIER -> {
                    Barrier b = s.n() == 0 ? barrier : null;
                    c.invalid = b == null ? "null barrier" : pipe == null ? "null pipe"
                        : pipe.scope() != ThreadScope.THREAD ? "producerCommit(pipe, barrier) on a shared pipeline"
                        : null;
                    Pipeline.producerCommit(pipe, b);
                }
                case MEMCPY -> copy(c, s.copy(), pipe, null);
                case B_MEMCPY -> copy(c, s.copy(), null, barrier);
                case MEMCPY_FILE -> fileCopy(c, s.copy(), pipe);
                case FOREIGN -> {
                    int n = handles.length();
                    Pipeline other = handles.get((c.rank + s.target()) % n);
                    if (other == null || other == pipe) {
                        throw Skip.INSTANCE;
                    }
                    perform(c, new Step(s.inner(), Time.ZERO, 0, null, Program.validCopy(
                        new SplittableRandom(p.index())), null, 0), other);
                    // (quit and close of a handle that has already quit may be no-ops, checked or not)
                    if (c.invalid == null && s.inner() != Op.QUERY && s.inner() != Op.QUIT
                        && s.inner() != Op.CLOSE) {
                        c.invalid = "use of another thread's pipeline handle";
                    }
                }
                case INTERRUPT -> {
                }
                case BOGUS_GROUP_MAKE -> {
                    c.invalid = "a group whose rank is outside 0..size-1";
                    Pipeline.make(bogusGroup(), PipelineSharedState.create(ThreadScope.BLOCK, 2));
                }
                case B_ARRIVE -> {
                    long token = barrier.arrive();
                    c.lastToken = token;
                    c.hasToken = true;
                    lastToken = token;
                }
                case B_ARRIVE_N -> {
                    c.invalid = s.n() < 1 ? "arrive(update) with an update below 1"
                        : s.n() > p.barrierExpected() ? "arrive(update) with more arrivals than the barrier expects"
                        : null;
                    long token = barrier.arrive((int) s.n());
                    c.lastToken = token;
                    c.hasToken = true;
                    lastToken = token;
                }
                case B_DROP -> barrier.arriveAndDrop();
                case B_AWAIT_BAD -> {
                    c.invalid = "await with " + s.token() + ", which is no token";
                    barrier.await(token(c, s.token()));
                }
                case B_TRY_WAIT -> {
                    long token = token(c, s.token());
                    c.invalid = invalidToken(s.token());
                    boolean ignored = (boolean) need(TRY_WAIT).invokeExact(barrier, token);
                }
                case B_TRY_WAIT_FOR -> {
                    long token = token(c, s.token());
                    c.invalid = invalidToken(s.token());
                    if (c.invalid == null && s.time() == Time.NULL) {
                        c.invalid = "null timeout";
                    }
                    boolean ignored = (boolean) need(TRY_WAIT_FOR).invokeExact(barrier, token, s.time().duration());
                }
                case B_TRY_WAIT_UNTIL -> {
                    long token = token(c, s.token());
                    c.invalid = invalidToken(s.token());
                    if (c.invalid == null && s.time() == Time.NULL) {
                        c.invalid = "null deadline";
                    }
                    boolean ignored = (boolean) need(TRY_WAIT_UNTIL).invokeExact(barrier, token, s.time().instant());
                }
                case B_TRY_PARITY -> {
                    c.invalid = s.time() == Time.NULL ? "null timeout" : null;
                    barrier.tryWaitParity(s.n() == 1, s.time().duration());
                }
                case B_QUERY -> {
                    barrier.phase();
                    barrier.expected();
                    barrier.toString();
                }
            }
        }

        private static <T> T need(T object) {
            if (object == null) {
                throw Skip.INSTANCE;
            }
            return object;
        }

        private long token(Ctx c, Token t) {
            return switch (t) {
                case OWN -> {
                    if (!c.hasToken) {
                        throw Skip.INSTANCE;
                    }
                    yield c.lastToken;
                }
                case NEXT -> {
                    if (!c.hasToken) {
                        throw Skip.INSTANCE;
                    }
                    yield c.lastToken + 1;
                }
                case OTHER_BARRIER -> otherBarrier.arrive();
                case PLAIN_PHASE -> barrier.phase();
                case MINUS_ONE -> -1;
                case BIT_40 -> 1L << 40;
                case LONG_MIN -> Long.MIN_VALUE;
                case LONG_MAX -> Long.MAX_VALUE;
            };
        }

        /** Tokens that name no begun phase of this barrier (NEXT only while its phase is the current one). */
        private static String invalidToken(Token t) {
            return switch (t) {
                case OWN, NEXT -> null;     // NEXT may already have begun by the time it is used
                default -> "a token that is no token of this barrier (" + t + ")";
            };
        }

        private Group bogusGroup() {
            return new Group() {
                @Override
                public int size() {
                    return 2;
                }

                @Override
                public int threadRank() {
                    return 2;
                }

                @Override
                public void sync() {
                }
            };
        }

        // -----------------------------------------------------------------------------------------------------
        // Copies

        /** A segment of kind {@code kind} with {@code length} bytes, or null for NULL. */
        private MemorySegment segment(Ctx c, Seg kind, long length, boolean dst, List<Arena> closeAfter) {
            long n = Math.max(0, Math.min(length, BUF - 8));
            return switch (kind) {
                case HEAP_BYTES, OVERLAP -> (dst ? DST_BYTES : SRC_BYTES).asSlice(0, n);
                case HEAP_LONGS -> (dst ? DST_LONGS : SRC_LONGS).asSlice(0, n);
                case NATIVE -> (dst ? DST_NATIVE : SRC_NATIVE).asSlice(0, n);
                case READ_ONLY -> (dst ? DST_NATIVE : SRC_NATIVE).asSlice(0, n).asReadOnly();
                case MISALIGNED -> (dst ? DST_NATIVE : SRC_NATIVE).asSlice(1, n);
                case CONFINED_OWN -> c.confined().allocate(Math.max(1, n), 16).asSlice(0, n);
                case CONFINED_OTHER -> runnerMemory.asSlice(dst ? 0 : BUF, n);
                case CLOSED -> {
                    Arena a = Arena.ofShared();
                    MemorySegment m = a.allocate(Math.max(1, n), 16).asSlice(0, n);
                    a.close();
                    yield m;
                }
                case CLOSE_AFTER -> {
                    Arena a = Arena.ofShared();
                    closeAfter.add(a);
                    yield a.allocate(Math.max(1, n), 16).asSlice(0, n);
                }
                case NULL -> null;
            };
        }

        /** The runner thread's confined memory (2 x BUF bytes): another thread's confined segments for the team. */
        MemorySegment runnerMemory;

        private void copy(Ctx c, CopySpec k, Pipeline pipe, Barrier bar) throws Exception {
            List<Arena> closeAfter = new ArrayList<>(1);
            MemorySegment dst;
            MemorySegment src;
            try {
                if (k.src() == Seg.OVERLAP) {
                    // one heap buffer: dst at 0, src at the offset (identical ranges when the offset is 0)
                    long dstLen = Math.min(k.dstLen(), BUF - 64);
                    long srcLen = Math.min(k.srcLen(), BUF - 64 - k.overlapOffset());
                    dst = DST_BYTES.asSlice(0, dstLen);
                    src = DST_BYTES.asSlice(k.overlapOffset(), srcLen);
                } else {
                    dst = segment(c, k.dst(), k.dstLen(), true, closeAfter);
                    src = segment(c, k.src(), k.srcLen(), false, closeAfter);
                }
            } catch (RuntimeException e) {
                throw new HarnessError(e);
            }
            c.invalid = invalidCopy(k, dst, src, pipe == null && bar == null);
            try {
                Group g = k.groupForm() == 0 ? null : k.groupForm() == 1 ? c.group : bogusGroup();
                boolean aligned = k.alignment() != 0;
                if (bar == null) {
                    if (g == null) {
                        if (aligned) {
                            MemcpyAsync.memcpyAsync(dst, src, AlignedSize.of(k.alignment(), k.bytes()), pipe);
                        } else {
                            MemcpyAsync.memcpyAsync(dst, src, k.bytes(), pipe);
                        }
                    } else if (aligned) {
                        MemcpyAsync.memcpyAsync(g, dst, src, AlignedSize.of(k.alignment(), k.bytes()), pipe);
                    } else {
                        MemcpyAsync.memcpyAsync(g, dst, src, k.bytes(), pipe);
                    }
                } else if (g == null) {
                    if (aligned) {
                        MemcpyAsync.memcpyAsync(dst, src, AlignedSize.of(k.alignment(), k.bytes()), bar);
                    } else {
                        MemcpyAsync.memcpyAsync(dst, src, k.bytes(), bar);
                    }
                } else if (aligned) {
                    MemcpyAsync.memcpyAsync(g, dst, src, AlignedSize.of(k.alignment(), k.bytes()), bar);
                } else {
                    MemcpyAsync.memcpyAsync(g, dst, src, k.bytes(), bar);
                }
            } finally {
                for (Arena a : closeAfter) {
                    a.close();          // in mid-copy, when the copy went to the engine
                }
            }
        }

        /** The documented rule that a memory copy's arguments break, or null. */
        private String invalidCopy(CopySpec k, MemorySegment dst, MemorySegment src, boolean nullTarget) {
            long bytes = k.bytes();
            long a = k.alignment();
            if (dst == null || src == null) {
                return "memcpyAsync with a null segment";
            }
            if (nullTarget) {
                return "memcpyAsync with a null pipeline";
            }
            if (a != 0 && (a < 1 || Long.bitCount(a) != 1 || bytes % a != 0 || bytes < 0)) {
                return "memcpyAsync with an invalid AlignedSize";
            }
            if (bytes < 0) {
                return "memcpyAsync with a negative size";
            }
            if (bytes > dst.byteSize() || bytes > src.byteSize()) {
                return "memcpyAsync past the end of a segment";
            }
            if (k.groupForm() == 2) {
                return "memcpyAsync with a group whose rank is outside it";
            }
            if (bytes == 0) {
                return null;
            }
            if (dst.isReadOnly()) {
                return "memcpyAsync into a read-only segment";
            }
            if (a > 1 && (dst.maxByteAlignment() < a || src.maxByteAlignment() < a)) {
                return "memcpyAsync of misaligned segments with an AlignedSize";
            }
            if (k.src() == Seg.OVERLAP && k.overlapOffset() < bytes) {
                return "memcpyAsync of overlapping segments";
            }
            if (k.dst() == Seg.CLOSED || k.src() == Seg.CLOSED) {
                return "memcpyAsync with a segment of a closed arena";
            }
            if (k.dst() == Seg.CONFINED_OWN || k.src() == Seg.CONFINED_OWN || k.dst() == Seg.CONFINED_OTHER
                || k.src() == Seg.CONFINED_OTHER) {
                return "memcpyAsync with a segment of a confined arena";
            }
            return null;
        }

        private void fileCopy(Ctx c, CopySpec k, Pipeline pipe) {
            MemorySegment dst;
            try {
                dst = segment(c, k.dst(), k.dstLen(), true, new ArrayList<>());
            } catch (RuntimeException e) {
                throw new HarnessError(e);
            }
            FileChannel channel = switch (k.channel()) {
                case GOOD -> good;
                case FAILING -> failing;
                case NO_PROGRESS -> noProgress;
                case NULL -> null;
            };
            long bytes = k.bytes();
            if (dst == null || channel == null || pipe == null) {
                c.invalid = "file memcpyAsync with a null argument";
            } else if (bytes < 0 || k.position() < 0) {
                c.invalid = "file memcpyAsync with a negative size or position";
            } else if (bytes > dst.byteSize()) {
                c.invalid = "file memcpyAsync past the end of a segment";
            } else if (bytes > 0 && dst.isReadOnly()) {
                c.invalid = "file memcpyAsync into a read-only segment";
            } else if (bytes > 0 && k.dst() == Seg.CLOSED) {
                c.invalid = "file memcpyAsync into a segment of a closed arena";
            } else if (bytes > 0 && (k.dst() == Seg.CONFINED_OWN || k.dst() == Seg.CONFINED_OTHER)) {
                c.invalid = "file memcpyAsync into a segment of a confined arena";
            }
            MemcpyAsync.memcpyAsync(dst, channel, k.position(), bytes, pipe);
        }
    }

    // =========================================================================================================
    // A file channel: good data, a failing read, or reads that make no progress until the program is over

    static final class FuzzChannel extends PositionalReadChannel {
        private final Run run;
        private final Channel mode;

        FuzzChannel(Run run, Channel mode) {
            this.run = run;
            this.mode = mode;
        }

        @Override
        public int read(ByteBuffer dst, long position) throws IOException {
            switch (mode) {
                case FAILING -> throw new IOException("injected read error at position " + position);
                case NO_PROGRESS -> {
                    if (!run.over) {
                        Thread.yield();
                        return 0;
                    }
                    throw new EOFException("the fuzz program is over");
                }
                default -> {
                }
            }
            if (position >= FILE.length) {
                return -1;
            }
            int n = (int) Math.min(dst.remaining(), FILE.length - position);
            dst.put(FILE, (int) position, n);
            return n;
        }

        @Override
        public long size() {
            return FILE.length;
        }

        @Override
        public String toString() {
            return "FuzzChannel[" + mode + "]";
        }
    }
}
