package dev.jpipeline.simt;

import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Checked execution: runs code that launches kernels under seeded, replayable schedules, with late copies,
 * poisoned shared memory and sync checks, to find the bugs that a GPU shows only sometimes. No CUDA counterpart;
 * compute-sanitizer's racecheck, synccheck and initcheck find similar bugs on a GPU, without replay (see
 * docs/checking.md).
 *
 * <p>Every {@link Kernel#launch} made by the run's thread while it runs checked behaves as follows:
 * <ul>
 *   <li>One CUDA thread of the whole launch runs at a time, the blocks one after another in index order. The turn
 *       may pass to another thread at every pipeline and barrier operation, sync, shared-memory access through the
 *       {@link KernelContext} accessors, and copy issue; the schedule's seed picks who runs next, and when each
 *       asynchronous copy lands (any time between its issue and the wait that needs it). The same schedule gives
 *       the same interleaving, so the same result and the same finding, every run.</li>
 *   <li>Dynamic shared memory and {@link KernelContext#sharedArray} start with a poison pattern (every 4-byte word
 *       {@code 0xFFA5A5A5}, a NaN as a float), so do copy destinations until the copy lands and a pipeline stage's
 *       copy destinations once every consumer has released the stage. A read of poison through the accessors
 *       fails the launch with a {@link CheckViolation} naming the thread, the offset and the last writer.</li>
 *   <li>Syncs are checked: {@code __syncthreads} reached from different call sites, a block or warp barrier that
 *       part of its threads never reach, a {@code __syncwarp} mask that the lanes disagree on.</li>
 *   <li>A hang is reported as soon as every thread is blocked with no copy in flight, and timed waits use a
 *       virtual clock that moves only when nothing else can run, so a timeout is replayable too.</li>
 * </ul>
 * Cooperative launches are refused under checked execution (their blocks would run in parallel, beyond the
 * schedule's control). Kernels must not wait for threads outside the launch.
 *
 * <p>A launch outside a checked run pays nothing for this: one scoped-value look-up per launch.
 */
public final class CheckedExecution {

    /** The session of the checked run on this thread, if any: looked up once per launch. */
    static final ScopedValue<CheckedSession> SESSION = ScopedValue.newInstance();

    private static final Function<Schedule, String> REPLAY_CALL =
        s -> "CheckedExecution.replay(Schedule.parse(\"" + s + "\"), run)";

    private CheckedExecution() {
    }

    /**
     * Runs {@code run} once with every kernel launch it makes checked under {@code schedule}.
     *
     * @param <R>      the run's result type
     * @param schedule the schedule, not null
     * @param run      code that launches kernels and returns a result to compare (for example whether the output
     *                 matched a reference); not null
     * @return what it returned (null when it threw) and the first finding (null when clean); a throw from
     *         {@code run} is a finding, of the kind of the checker's report that caused it, or
     *         {@link FindingKind#ROLE_MIXUP}, {@link FindingKind#HANG} or {@link FindingKind#FAILURE}
     * @throws NullPointerException when an argument is null
     */
    public static <R> Outcome<R> replay(Schedule schedule, Supplier<R> run) {
        return replay(schedule, REPLAY_CALL, run);
    }

    /**
     * {@link #replay(Schedule, Supplier)} with the replay line of a finding made by {@code replayLine}.
     *
     * @param <R>        the run's result type
     * @param schedule   the schedule, not null
     * @param replayLine makes a finding's replay line from its schedule (a command line, for a tool); not null
     * @param run        the code to run, not null
     * @return what it returned and the first finding
     * @throws NullPointerException when an argument is null
     */
    public static <R> Outcome<R> replay(Schedule schedule, Function<Schedule, String> replayLine, Supplier<R> run) {
        Objects.requireNonNull(schedule, "schedule");
        Objects.requireNonNull(replayLine, "replayLine");
        Objects.requireNonNull(run, "run");
        if (SESSION.isBound()) {
            throw new IllegalStateException("checked runs do not nest: this thread already runs schedule "
                + SESSION.get().schedule);
        }
        CheckedSession session = new CheckedSession(schedule);
        Outcome<R> outcome = runOnce(session, replayLine, run);
        List<CheckedSession.AccessId> unnamed = session.sitesNeeded();
        if (outcome.finding() != null && outcome.finding().kind() == FindingKind.DATA_RACE && !unnamed.isEmpty()) {
            // the race's accesses did not record their sites: the same schedule makes the same accesses again, and
            // this time those accesses record them (RaceDetector)
            Outcome<R> named = runOnce(new CheckedSession(schedule, unnamed), replayLine, run);
            if (named.finding() != null && named.finding().kind() == FindingKind.DATA_RACE) {
                outcome = named;
            }
        }
        return outcome;
    }

    private static <R> Outcome<R> runOnce(CheckedSession session, Function<Schedule, String> replayLine,
                                          Supplier<R> run) {
        Schedule schedule = session.schedule;
        R result = null;
        Throwable thrown = null;
        try {
            result = ScopedValue.where(SESSION, session).call(run::get);
        } catch (Throwable e) {           // whatever the run throws, even a checked exception thrown sneakily
            thrown = e;
        }
        if (thrown != null && !session.hasFinding()) {
            session.report(classify(thrown), describe(thrown));
        }
        Finding finding = !session.hasFinding() ? null : new Finding(session.findingKind(), schedule,
            session.findingMessage(), session.findingTrace(), replayLine.apply(schedule));
        return new Outcome<>(result, finding, session.decisions());
    }

    /**
     * Runs {@code run} under {@code schedules} seeded schedules (seeds {@code firstSeed}, {@code firstSeed + 1},
     * ...), stopping at the first that finds a bug or gives a result other than the first schedule's
     * ({@code Objects.deepEquals}, so arrays compare by content); then shrinks the finding's schedule (the fewest
     * seeded decisions that still show the same kind of finding) where a few replays find one.
     *
     * @param <R>       the run's result type
     * @param schedules how many schedules to run, at least 1
     * @param firstSeed the first schedule's seed
     * @param run       code that launches kernels, on fresh inputs at each call, and returns a result to
     *                  compare; not null
     * @return the exploration's outcome
     * @throws IllegalArgumentException when {@code schedules < 1}
     * @throws NullPointerException     when {@code run} is null
     */
    public static <R> Exploration<R> explore(int schedules, long firstSeed, Supplier<R> run) {
        return explore(schedules, firstSeed, REPLAY_CALL, run);
    }

    /**
     * {@link #explore(int, long, Supplier)} with the replay line of a finding made by {@code replayLine}.
     *
     * @param <R>        the run's result type
     * @param schedules  how many schedules to run, at least 1
     * @param firstSeed  the first schedule's seed
     * @param replayLine makes a finding's replay line from its schedule; not null
     * @param run        the code to run, not null
     * @return the exploration's outcome
     * @throws IllegalArgumentException when {@code schedules < 1}
     * @throws NullPointerException     when an argument is null
     */
    public static <R> Exploration<R> explore(int schedules, long firstSeed, Function<Schedule, String> replayLine,
                                             Supplier<R> run) {
        if (schedules < 1) {
            throw new IllegalArgumentException("an exploration runs at least 1 schedule, got " + schedules);
        }
        Objects.requireNonNull(replayLine, "replayLine");
        Objects.requireNonNull(run, "run");
        R first = null;
        long decisions = 0;
        for (int i = 0; i < schedules; i++) {
            Schedule schedule = Schedule.of(firstSeed + i);
            Outcome<R> outcome = replay(schedule, replayLine, run);
            decisions += outcome.decisions();
            if (i == 0) {
                first = outcome.result();
            }
            Finding finding = outcome.finding();
            if (finding == null && !Objects.deepEquals(first, outcome.result())) {
                finding = new Finding(FindingKind.RESULT_DIFFERS, schedule, "schedule " + schedule + " gave "
                    + outcome.result() + ", the first schedule (" + firstSeed + ") gave " + first, List.of(),
                    replayLine.apply(schedule));
            }
            if (finding != null) {
                return new Exploration<>(i + 1, first, shrink(finding, outcome.decisions(), first, replayLine, run),
                    decisions);
            }
        }
        return new Exploration<>(schedules, first, null, decisions);
    }

    /**
     * The smallest count of seeded decisions, by bisection over at most 20 replays, under which the finding's
     * seed still shows a finding of its kind; the finding itself when none shorter does.
     */
    private static <R> Finding shrink(Finding finding, long decisions, R first, Function<Schedule, String> replayLine,
                                      Supplier<R> run) {
        long low = 0;                       // decisions known not to be enough (or untested: 0)
        long high = Math.min(decisions, Integer.MAX_VALUE - 1L);
        Finding best = finding;
        for (int replays = 0; replays < 20 && low < high; replays++) {
            int mid = (int) ((low + high) / 2);
            Finding again = findingUnder(new Schedule(finding.schedule().seed(), mid), finding.kind(), first,
                replayLine, run);
            if (again != null) {
                best = again;
                high = mid;
            } else {
                low = mid + 1;
            }
        }
        return best;
    }

    /** The finding of {@code kind} under {@code schedule}, or null when it shows another or none. */
    private static <R> Finding findingUnder(Schedule schedule, FindingKind kind, R first,
                                            Function<Schedule, String> replayLine, Supplier<R> run) {
        Outcome<R> outcome = replay(schedule, replayLine, run);
        if (kind == FindingKind.RESULT_DIFFERS) {
            return outcome.finding() == null && !Objects.deepEquals(first, outcome.result())
                ? new Finding(kind, schedule, "schedule " + schedule + " gave " + outcome.result()
                    + ", the first schedule gave " + first, List.of(), replayLine.apply(schedule))
                : null;
        }
        return outcome.finding() != null && outcome.finding().kind() == kind ? outcome.finding() : null;
    }

    /**
     * Whether the current thread runs checked (inside {@link #replay} or {@link #explore}).
     *
     * @return whether kernel launches made now run checked
     */
    public static boolean isChecking() {
        return SESSION.isBound();
    }

    /** The kind of finding that a throw from a checked run stands for. */
    private static FindingKind classify(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof CheckViolation v) {
                return v.kind();
            }
            String m = c.getMessage();
            if (c instanceof IllegalStateException && m != null
                && m.matches("(?s)(producer|consumer)_\\w+ is a (producer|consumer) operation, but .*")) {
                return FindingKind.ROLE_MIXUP;
            }
            if (c instanceof KernelFailure && c.getCause() == null && m != null && m.contains(" hung")) {
                return FindingKind.HANG;
            }
        }
        return FindingKind.FAILURE;
    }

    private static String describe(Throwable t) {
        Throwable cause = t instanceof KernelFailure && t.getCause() != null ? t.getCause() : t;
        return t == cause ? String.valueOf(t) : t.getMessage();
    }
}
