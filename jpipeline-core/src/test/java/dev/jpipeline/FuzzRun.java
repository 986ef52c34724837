package dev.jpipeline;

import static dev.jpipeline.FuzzCopies.DST_NATIVE;
import static dev.jpipeline.FuzzCopies.SRC_NATIVE;
import static dev.jpipeline.FuzzOracles.unclear;

import dev.jpipeline.FuzzOracles.HarnessError;
import dev.jpipeline.FuzzOracles.SimulatedCrash;
import dev.jpipeline.FuzzOracles.Skip;
import dev.jpipeline.FuzzOracles.Stats;
import dev.jpipeline.FuzzOracles.UserCompletionException;
import dev.jpipeline.FuzzPrograms.Ending;
import dev.jpipeline.FuzzPrograms.Kind;
import dev.jpipeline.FuzzPrograms.Make;
import dev.jpipeline.FuzzPrograms.MakeKind;
import dev.jpipeline.FuzzPrograms.Patience;
import dev.jpipeline.FuzzPrograms.Program;
import dev.jpipeline.FuzzPrograms.StateArg;
import dev.jpipeline.FuzzScripts.Op;
import dev.jpipeline.FuzzScripts.Step;
import dev.jpipeline.FuzzScripts.Time;
import dev.jpipeline.FuzzScripts.Token;
import dev.jpipeline.copy.CopyEngine;
import java.lang.foreign.Arena;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Runs one misuse fuzzer program ({@link MisuseFuzzer}) on a team of its own and judges every step by the oracles
 * ({@link FuzzOracles}); its copies and file reads are {@link FuzzCopies}'.
 */
final class FuzzRun {

    /** {@code -Djpipeline.test.fuzzMessages=true}: list every distinct exception message (digits as #). */
    private static final boolean MESSAGES = Boolean.getBoolean("jpipeline.test.fuzzMessages");
    /** How long past its limit a short timed wait may take (scheduling on a loaded 2-core machine). */
    private static final long TIMED_WAIT_SLACK_NANOS = 1_500_000_000L;

    /** Copies above 64 KiB run here, split in 16 KiB chunks over two workers. */
    static final CopyEngine ENGINE = CopyEngine.builder().workers(2).minChunk(16 * 1024)
        .name("fuzz-copy").build();

    // Barrier's timed token waits exist only after the redesign: found by reflection, skipped when absent.
    private static final MethodHandle TRY_WAIT = barrierMethod("tryWait", MethodType.methodType(boolean.class,
        long.class));
    static final MethodHandle TRY_WAIT_FOR = barrierMethod("tryWaitFor", MethodType.methodType(
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

    final Program p;
    final Stats stats;
    /** The program's copies and file reads, and the memory and channels they use. */
    final FuzzCopies copies = new FuzzCopies();
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

    FuzzRun(Program p, Stats stats) {
        this.p = p;
        this.stats = stats;
        int n = Math.max(1, p.teamSize());
        this.handles = new AtomicReferenceArray<>(n);
        this.threads = new Thread[n];
        this.current = new String[n];
        this.finished = new CountDownLatch(n);
    }

    void execute() {
        stats.count("programs " + p.kind());
        runnerArena = Arena.ofConfined();
        if (p.usesRunnerMemory()) {
            copies.runnerMemory = runnerArena.allocate(2L * FuzzCopies.BUF, 64);
        }
        try {
            if (setUp()) {
                runTeam();
            }
        } finally {
            copies.over = true;
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
    static final class Ctx {
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
            case MEMCPY -> copies.copy(c, s.copy(), pipe, null);
            case B_MEMCPY -> copies.copy(c, s.copy(), null, barrier);
            case MEMCPY_FILE -> copies.fileCopy(c, s.copy(), pipe);
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

    /** A group whose rank is outside 0..size-1. */
    static Group bogusGroup() {
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

}
