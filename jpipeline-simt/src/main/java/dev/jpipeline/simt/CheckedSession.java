package dev.jpipeline.simt;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * One run under one {@link Schedule}: the seeded source of every scheduling decision of the run's kernel launches,
 * the virtual clock of their timed waits, the trace of recent decisions and accesses, and the first finding.
 *
 * <pre>
 * Confinement: a checked launch runs one CUDA thread at a time (BlockScheduler's turn, one resident block), and
 * the turn passes under the scheduler's lock, so every call here is ordered by those hand-offs: plain fields.
 * The finding is the exception: the launching thread may report a holder stuck outside jpipeline while a kernel
 * thread reports something else, so the finding's fields are guarded by this.
 * Decisions: choose(n) with n >= 2 candidates, and landsNow() (whether a copy in flight lands while a thread
 * could run), count one decision each; the first schedule.randomizedDecisions() of them draw from the seed, the
 * rest take candidate 0 (the oldest ready thread: round-robin) and land no copy until nothing else can run.
 * Lateness: each schedule draws how eagerly its copies land while threads could run (1 in 2, 1 in 8, 1 in 64
 * decisions, or never), so that some schedules land copies early and others as late as the waits allow.
 * </pre>
 */
final class CheckedSession {

    /** Trace steps kept: the decisive interleaving is usually in the last few. */
    static final int TRACE_DEPTH = 24;

    final Schedule schedule;
    /** The thread that runs the schedule: the only one whose launches it may check. */
    final Thread owner = Thread.currentThread();
    private final SplittableRandom random;
    /** A copy lands, while a thread could run, at 1 in landOdds decisions; 0: only when nothing else can run. */
    private final int landOdds;
    private long decisions;
    /** Where the virtual clock starts. */
    private static final long CLOCK_ORIGIN = 1L << 40;
    /** Virtual nanoTime of timed waits: moves only when nothing else can run (BlockScheduler). */
    private long clock = CLOCK_ORIGIN;
    /** The wall clock when the run started: Instant deadlines are read against it plus virtual time. */
    private final Instant started = Instant.now();
    /** The last steps: each the decision count then the parts of its text, formatted only for a finding. */
    private final Object[][] trace = new Object[TRACE_DEPTH][];
    private long traced;
    private FindingKind findingKind;
    private String findingMessage;
    private List<String> findingTrace;

    /** One access of a run: its launch's number in the run, the block (linear), the thread's rank, its number. */
    record AccessId(int launch, int block, int rank, int seq) {
    }

    /** The accesses whose sites this run records (RaceDetector's second run of a race): empty for most runs. */
    private final List<AccessId> sitesWanted;
    /** The accesses whose sites the run's races could not name, in the order asked. */
    private final List<AccessId> sitesNeeded = new ArrayList<>(2);
    private int launches;

    CheckedSession(Schedule schedule) {
        this(schedule, List.of());
    }

    /** A session that records the sites of the accesses {@code sitesWanted}. */
    CheckedSession(Schedule schedule, List<AccessId> sitesWanted) {
        this.sitesWanted = List.copyOf(sitesWanted);
        this.schedule = schedule;
        this.random = new SplittableRandom(schedule.seed());
        this.landOdds = LAND_ODDS[random.nextInt(LAND_ODDS.length)];
    }

    private static final int[] LAND_ODDS = {2, 8, 64, 0};

    /** One decision among {@code n >= 2} candidates: an index in {@code 0..n-1}. */
    int choose(int n) {
        return ++decisions <= schedule.randomizedDecisions() ? random.nextInt(n) : 0;
    }

    /** Whether a copy in flight lands now, though a thread could run: one decision. */
    boolean landsNow() {
        return ++decisions <= schedule.randomizedDecisions() && landOdds != 0 && random.nextInt(landOdds) == 0;
    }

    /** A checked launch of the run starts: its number in the run. */
    int launchStarts() {
        return launches++;
    }

    /** Whether the site of this access is to be recorded. */
    boolean wantsSite(int launch, int block, int rank, int seq) {
        return !sitesWanted.isEmpty() && sitesWanted.contains(new AccessId(launch, block, rank, seq));
    }

    /** A race of the run needs the site of {@code access}, which was not recorded. */
    void needSite(AccessId access) {
        sitesNeeded.add(access);
    }

    List<AccessId> sitesNeeded() {
        return sitesNeeded;
    }

    long decisions() {
        return decisions;
    }

    long nanoTime() {
        return clock;
    }

    /** The run's instant: its start on the wall clock plus the virtual time that has passed. */
    Instant instantNow() {
        return started.plusNanos(clock - CLOCK_ORIGIN);
    }

    /** Time passes (nothing else could run): the clock moves to {@code to}, if later. */
    void advanceTo(long to) {
        if (to - clock > 0) {
            clock = to;
        }
    }

    /** A step of the interleaving, for the finding's trace: its parts, joined by their string forms. */
    void trace(Object... parts) {
        Object[] step = new Object[parts.length + 1];
        step[0] = decisions;
        System.arraycopy(parts, 0, step, 1, parts.length);
        trace[(int) (traced++ % TRACE_DEPTH)] = step;
    }

    /** Records the run's first finding; later ones are consequences. Returns whether this one was first. */
    synchronized boolean report(FindingKind kind, String message) {
        if (findingKind != null) {
            return false;
        }
        findingKind = kind;
        findingMessage = message;
        findingTrace = traceSteps();
        return true;
    }

    synchronized boolean hasFinding() {
        return findingKind != null;
    }

    synchronized FindingKind findingKind() {
        return findingKind;
    }

    synchronized String findingMessage() {
        return findingMessage;
    }

    synchronized List<String> findingTrace() {
        return findingTrace == null ? traceSteps() : findingTrace;
    }

    private List<String> traceSteps() {
        List<String> steps = new ArrayList<>(TRACE_DEPTH);
        for (long i = Math.max(0, traced - TRACE_DEPTH); i < traced; i++) {
            Object[] step = trace[(int) (i % TRACE_DEPTH)];
            StringBuilder b = new StringBuilder("#").append(step[0]).append(' ');
            for (int p = 1; p < step.length; p++) {
                b.append(step[p]);
            }
            steps.add(b.toString());
        }
        return steps;
    }
}
