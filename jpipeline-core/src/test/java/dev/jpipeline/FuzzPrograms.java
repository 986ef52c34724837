package dev.jpipeline;

import static dev.jpipeline.FuzzCopies.BUF;
import static dev.jpipeline.FuzzCopies.FILE;

import dev.jpipeline.FuzzScripts.Channel;
import dev.jpipeline.FuzzScripts.CopySpec;
import dev.jpipeline.FuzzScripts.Op;
import dev.jpipeline.FuzzScripts.Seg;
import dev.jpipeline.FuzzScripts.Step;
import dev.jpipeline.FuzzScripts.Time;
import dev.jpipeline.FuzzScripts.Token;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The misuse fuzzer's programs ({@link MisuseFuzzer}): a {@link Program} is generated from the run's seed and its
 * index alone, so that it can be replayed by itself; its {@link Kind} says which component it fuzzes.
 */
final class FuzzPrograms {

    /** {@code -Djpipeline.test.fuzzAvoidKnownBugs=true}: see {@link Program#avoidingKnownBugs()}. */
    private static final boolean AVOID_KNOWN_BUGS = Boolean.getBoolean("jpipeline.test.fuzzAvoidKnownBugs");

    private FuzzPrograms() {
    }

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

        static CopySpec validCopy(SplittableRandom rnd) {
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
}
