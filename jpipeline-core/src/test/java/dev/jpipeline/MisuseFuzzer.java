package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.jpipeline.FuzzOracles.SimulatedCrash;
import dev.jpipeline.FuzzOracles.Stats;
import dev.jpipeline.FuzzOracles.UserCompletionException;
import dev.jpipeline.FuzzPrograms.Kind;
import dev.jpipeline.FuzzPrograms.Program;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Assumptions;

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
 * <p>A program's kind says which component it fuzzes, and each component has a test of its own
 * ({@link Component}): {@link ThreadScopeMisuseFuzzTest} (THREAD), {@link SharedPipelineMisuseFuzzTest} (UNIFIED,
 * BY_COUNT, BY_ROLE) and {@link BarrierMisuseFuzzTest} (BARRIER). Each runs the programs of the run's seed that are
 * of its kinds: program I of seed S is the same program whichever test runs it, so that the three together run
 * the N programs of a seed, and a program is replayed by the test of its component.
 *
 * <p>Run: {@code ./mvnw -o test -pl jpipeline-core -Dtest='*MisuseFuzzTest'}. Properties: {@code
 * -Djpipeline.test.seed=S} (the run's seed, printed), {@code -Djpipeline.test.fuzzPrograms=N} (programs of the
 * seed's stream, default 10,000, shared out among the components by their kinds),
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
final class MisuseFuzzer {

    /** What a fuzz test fuzzes: the kinds of program it runs, of every seed's stream of programs. */
    enum Component {
        THREAD_SCOPE("ThreadScopeMisuseFuzzTest", Set.of(Kind.THREAD)),
        SHARED_PIPELINE("SharedPipelineMisuseFuzzTest", Set.of(Kind.UNIFIED, Kind.BY_COUNT, Kind.BY_ROLE)),
        BARRIER("BarrierMisuseFuzzTest", Set.of(Kind.BARRIER));

        /** The simple name of the test class that fuzzes this component. */
        final String test;
        private final Set<Kind> kinds;

        Component(String test, Set<Kind> kinds) {
            this.test = test;
            this.kinds = kinds;
        }

        boolean fuzzes(Program p) {
            return kinds.contains(p.kind());
        }

        static Component of(Kind kind) {
            for (Component c : values()) {
                if (c.kinds.contains(kind)) {
                    return c;
                }
            }
            throw new IllegalArgumentException("no component fuzzes " + kind);
        }
    }

    private MisuseFuzzer() {
    }

    /**
     * Runs the programs of the run's seed that fuzz {@code component} (see the class comment for the properties),
     * prints the seed and a summary, and fails listing the first findings.
     */
    static void run(Component component) throws Exception {
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
        String test = component.test;
        if (only >= 0 && !component.fuzzes(Program.generate(seed, only))) {
            Kind kind = Program.generate(seed, only).kind();
            Assumptions.abort("program " + only + " of seed " + seed + " is a " + kind + " program: "
                + Component.of(kind).test + " runs it");
        }
        System.out.println(test + " seed " + seed + " (rerun: -Dtest=" + test + " -Djpipeline.test.seed=" + seed
            + (only >= 0 ? " -Djpipeline.test.fuzzProgram=" + only : "") + "), "
            + (only >= 0 ? "program " + only + " x" + repeat : "its programs of " + programs) + ", " + parallel
            + " at a time; Barrier timed token waits " + (FuzzRun.TRY_WAIT_FOR != null ? "present"
            : "absent (skipped)"));

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
                    Program p = Program.generate(seed, indices.get(i));
                    if (!component.fuzzes(p)) {
                        continue;                   // another component's program: its own test runs it
                    }
                    ran.incrementAndGet();
                    if (verbose) {
                        System.out.println(p);
                    }
                    try {
                        new FuzzRun(p, stats).execute();
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
        System.out.println(stats.summary(test, seed, ran.get(), millis));
        assertTrue(finished, "the fuzz runners did not finish within 30 minutes (see the summary above)");
        if (!stats.findings.isEmpty()) {
            StringBuilder b = new StringBuilder(stats.findings.size() + " findings in " + ran.get()
                + " programs (seed " + seed + "); by kind: " + stats.kindCounts() + "\nfirst ones:");
            stats.findings.stream().filter(f -> f.kind().startsWith(showKind)).sorted().limit(shown)
                .forEach(f -> b.append("\n").append(f));
            fail(b.toString());
        }
    }
}
