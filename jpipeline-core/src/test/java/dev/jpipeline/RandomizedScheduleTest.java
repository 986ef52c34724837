package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.fail;

import dev.jpipeline.copy.CopyEngine;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * Seeded randomized schedules: random group sizes (1-16), stage counts (1-8), unified / by-count / by-role
 * pipelines, platform or virtual threads, plain writes, memcpyAsync (inline or on a copy engine) or file reads,
 * random delays; and, in some configurations, early quits, dead threads and failing copies:
 *
 * <pre>
 *   early quit    a thread quits after a random number of batches (0 included: before its first operation)
 *   dead thread   a thread ends without quit after a random number of batches; a dead producer may die holding
 *                 an acquired stage it never commits. The pipeline detects deadlocks with a 100 ms patience:
 *                 a dead participant counts as quit once noticed, and its held batch fails
 *   copy failure  producers read some batches from a GatedFileChannel that fails from a position on; the
 *                 batches that read a failing position must raise StageFailedException in every consumer
 * </pre>
 *
 * From each configuration the test computes what every thread must see: the batches delivered to each consumer
 * (all of them, or up to the point where no producer is left: then the documented IllegalStateException "no
 * producer is left"; symmetrically "no consumer is left" for a producer), the exact set of failed batches, and
 * the data of every other batch. It checks FIFO order, that no batch is lost or seen twice, that a producer never
 * runs more than S stages ahead of the slowest consumer still in the pipeline, and data integrity.
 *
 * <p>The seed is printed; rerun one with {@code ./mvnw verify -Djpipeline.test.seed=<seed>} (one configuration
 * alone: {@code -Djpipeline.test.scheduleConfig=<index>}). The total number of batches comes from
 * {@code -Djpipeline.test.batches} (default 100,000).
 */
class RandomizedScheduleTest {

    private enum Form { UNIFIED, BY_COUNT, BY_ROLE }

    /** How producers fill their slot of a stage. */
    private enum Fill { PLAIN_WRITE, INLINE_COPY, ASYNC_COPY, FILE_READ }

    /** How a thread leaves: after every batch, or early (quit, or its thread ends, maybe holding a stage). */
    private enum Exit { FULL, QUIT, DIE, DIE_HOLDING }

    private record Config(int index, Form form, int threads, int stages, int producers, boolean virtual, Fill fill,
                          int batches, long seed, int[] producerIndex, int[] consumerIndex, Exit[] exits,
                          int[] ends, boolean detect) {

        int consumers() {
            return form == Form.UNIFIED ? threads : threads - producers;
        }

        boolean hasDead() {
            return Arrays.stream(exits).anyMatch(e -> e == Exit.DIE || e == Exit.DIE_HOLDING);
        }

        @Override
        public String toString() {
            StringBuilder b = new StringBuilder("config " + index + ": " + form + " of " + threads + " "
                + (virtual ? "virtual" : "platform") + " threads, " + producers + " producing, " + stages
                + " stages, " + fill + ", " + batches + " batches" + (detect ? ", deadlock patience 100 ms" : ""));
            for (int r = 0; r < threads; r++) {
                if (exits[r] != Exit.FULL) {
                    b.append(", rank ").append(r).append(' ').append(producerIndex[r] >= 0 ? "(producer "
                        + producerIndex[r] + (consumerIndex[r] >= 0 ? ", consumer " + consumerIndex[r] : "") + ")"
                        : "(consumer " + consumerIndex[r] + ")").append(' ').append(exits[r]).append(" after ")
                        .append(ends[r]);
                }
            }
            return b.toString();
        }
    }

    /** What the configuration promises each thread will see (computed before it runs). */
    private record Expected(long[] commits, long[] releases, long delivered, boolean[] producerCut,
                            boolean[] consumerCut, int[] failer, TreeSet<Long> heldFailures) {
    }

    /** What a thread saw. */
    private static final class Outcome {
        long commits;
        long releases;
        final List<Long> failed = new ArrayList<>();
        /** The exception that ended the thread's loop, where, and at which batch. */
        Throwable end;
        String endOp;
        long endBatch = -1;
        String corruption;
        String ahead;
    }

    /** Runs every copy on its workers, however small, so that completion always arrives from another thread. */
    private static final CopyEngine ASYNC = CopyEngine.builder().workers(2).inlineThreshold(0).name("random-async")
        .build();

    /**
     * Harness self-check ({@code -Djpipeline.test.scheduleDeadAsQuit=true}): dying threads quit instead, at the
     * same point (a dying holder quits holding its stage, so its batch does not fail). Since a dead participant
     * must count as quit, the expectations are the same but for the held batches: with this switch, an engine
     * that implements quit correctly passes every configuration.
     */
    private static final boolean DEAD_AS_QUIT = Boolean.getBoolean("jpipeline.test.scheduleDeadAsQuit");

    /**
     * How long a configuration may run without any consumer releasing a batch before it counts as hung. A bound on
     * the time without progress, not on the whole run (see runWatched).
     */
    private static final Duration STALL = Teams.LIMIT;
    /** The team's own limit: a backstop only, far above any run that keeps releasing batches. */
    private static final Duration BACKSTOP = Duration.ofMinutes(30);

    /** File reads: positions repeat every WINDOW batches (more than any stage count, so stale data shows). */
    private static final int WINDOW = 64;

    @Test
    void randomSchedulesKeepEveryPipelineInvariant() {
        String property = System.getProperty("jpipeline.test.seed", "");
        long seed = property.isBlank() ? System.nanoTime() : Long.parseLong(property.trim());
        int totalBatches = Integer.getInteger("jpipeline.test.batches", 100_000);
        int only = Integer.getInteger("jpipeline.test.scheduleConfig", -1);
        System.out.println("RandomizedScheduleTest seed " + seed + " (rerun: -Djpipeline.test.seed=" + seed
            + "), " + totalBatches + " batches");
        Random random = new Random(seed);
        int perConfig = (totalBatches + 11) / 12;
        long delivered = 0;
        long deliveredHere = 0;         // by the configurations this run ran (all, unless one is replayed)
        long start = System.nanoTime();
        List<String> failures = new ArrayList<>();
        int configs = 0;
        int[] kinds = new int[3];       // configurations with early quits, dead threads, file reads
        for (int i = 0; delivered < totalBatches && i < 100 && (only < 0 || i <= only); i++) {
            Config config = randomConfig(random, i, perConfig);
            Expected expected = expect(config);
            if (only >= 0 && i != only) {
                delivered += expected.delivered();
                continue;
            }
            configs++;
            boolean quits = Arrays.stream(config.exits()).anyMatch(e -> e == Exit.QUIT);
            kinds[0] += quits ? 1 : 0;
            kinds[1] += config.hasDead() ? 1 : 0;
            kinds[2] += config.fill() == Fill.FILE_READ ? 1 : 0;
            long t0 = System.nanoTime();
            try {
                List<String> wrong = run(config, expected);
                if (!wrong.isEmpty()) {
                    List<String> shown = wrong.size() <= 8 ? wrong : new ArrayList<>(wrong.subList(0, 8));
                    if (wrong.size() > 8) {
                        shown.add("... and " + (wrong.size() - 8) + " more");
                    }
                    failures.add("seed " + seed + ", " + config + ":\n    " + String.join("\n    ", shown)
                        + "\n    rerun alone: -Djpipeline.test.seed=" + seed + " -Djpipeline.test.scheduleConfig="
                        + config.index());
                }
            } catch (Throwable t) {
                failures.add("seed " + seed + ", " + config + ":\n    " + t);
            }
            if (Boolean.getBoolean("jpipeline.test.scheduleVerbose")) {
                System.out.println(config + " -> " + (System.nanoTime() - t0) / 1_000_000 + " ms");
            }
            delivered += expected.delivered();
            deliveredHere += expected.delivered();
        }
        System.out.println("RandomizedScheduleTest seed " + seed + ": " + deliveredHere + " batches in " + configs
            + " configurations (" + kinds[0] + " with early quits, " + kinds[1] + " with dead threads, " + kinds[2]
            + " with file reads and copy failures) in " + (System.nanoTime() - start) / 1_000_000 + " ms; "
            + failures.size() + " failed");
        if (!failures.isEmpty()) {
            fail(failures.size() + " of " + configs + " configurations failed:\n" + String.join("\n",
                failures.subList(0, Math.min(6, failures.size()))));
        }
        if (only < 0 && delivered < totalBatches) {
            fail("only " + delivered + " batches delivered");
        }
    }

    private static Config randomConfig(Random random, int index, int batches) {
        Form form = Form.values()[random.nextInt(3)];
        int threads = form == Form.UNIFIED ? 1 + random.nextInt(16) : 2 + random.nextInt(15);
        int stages = 1 + random.nextInt(8);
        int producers = form == Form.UNIFIED ? threads : 1 + random.nextInt(threads - 1);
        boolean virtual = random.nextBoolean();
        int fd = random.nextInt(100);
        Fill fill = fd < 22 ? Fill.PLAIN_WRITE : fd < 44 ? Fill.INLINE_COPY : fd < 72 ? Fill.ASYNC_COPY
            : Fill.FILE_READ;
        long seed = random.nextLong();
        // Which ranks produce (the caller's choice for by-count, each thread's role for by-role).
        List<Integer> ranks = new ArrayList<>();
        for (int r = 0; r < threads; r++) {
            ranks.add(r);
        }
        Collections.shuffle(ranks, new Random(seed));
        int[] producerIndex = new int[threads];
        int[] consumerIndex = new int[threads];
        for (int i = 0; i < threads; i++) {
            int r = ranks.get(i);
            producerIndex[r] = form == Form.UNIFIED ? r : i < producers ? i : -1;
            consumerIndex[r] = form == Form.UNIFIED ? r : i < producers ? -1 : i - producers;
        }
        Exit[] exits = new Exit[threads];
        int[] ends = new int[threads];
        Arrays.fill(exits, Exit.FULL);
        Arrays.fill(ends, batches);
        boolean early = random.nextInt(100) < 30;
        boolean dead = random.nextInt(100) < 22;
        if (early || dead) {
            int leaving = 1 + random.nextInt(Math.min(3, threads));
            Collections.shuffle(ranks, random);
            for (int k = 0; k < leaving; k++) {
                int r = ranks.get(k);
                boolean dies = dead && (!early || random.nextBoolean());
                exits[r] = !dies ? Exit.QUIT : producerIndex[r] >= 0 && random.nextInt(3) == 0 ? Exit.DIE_HOLDING
                    : Exit.DIE;
                ends[r] = random.nextInt(8) == 0 ? 0 : random.nextInt(batches);
            }
        }
        boolean detect = dead || random.nextBoolean();
        return new Config(index, form, threads, stages, producers, virtual, fill, batches, seed, producerIndex,
            consumerIndex, exits, ends, detect);
    }

    // -------------------------------------------------------------------------------------------------------------
    // What the configuration promises

    /**
     * Consumers see every batch some producer still commits; a consumer that waits for a batch after the last
     * producer has left gets "no producer is left". A producer may acquire batch b while some consumer still
     * releases batch b - S; past that it gets "no consumer is left". A producer that dies holding batch b makes
     * b fail. Solved as a fixed point, since each side's end can cut the other's.
     */
    private static Expected expect(Config c) {
        int n = c.threads();
        long[] commits = new long[n];
        long[] releases = new long[n];
        boolean[] producerCut = new boolean[n];
        boolean[] consumerCut = new boolean[n];
        for (int r = 0; r < n; r++) {
            commits[r] = c.producerIndex()[r] >= 0 ? c.ends()[r] : 0;
            releases[r] = c.consumerIndex()[r] >= 0 ? c.ends()[r] : 0;
        }
        long delivered = 0;
        if (c.form() != Form.UNIFIED) {
            for (boolean changed = true; changed; ) {
                changed = false;
                long d = 0;             // batches some producer commits (or dies holding)
                for (int r = 0; r < n; r++) {
                    if (c.producerIndex()[r] >= 0) {
                        boolean holds = c.exits()[r] == Exit.DIE_HOLDING && !producerCut[r] && !DEAD_AS_QUIT;
                        d = Math.max(d, commits[r] + (holds ? 1 : 0));
                    }
                }
                long qc = 0;            // batches some consumer releases
                for (int r = 0; r < n; r++) {
                    if (c.consumerIndex()[r] >= 0) {
                        long rel = Math.min(c.ends()[r], d);
                        consumerCut[r] = rel < c.ends()[r];
                        changed |= rel != releases[r];
                        releases[r] = rel;
                        qc = Math.max(qc, rel);
                    }
                }
                for (int r = 0; r < n; r++) {
                    if (c.producerIndex()[r] >= 0) {
                        // holding batch ends[r] needs its acquire to succeed too
                        long reach = c.ends()[r] + (c.exits()[r] == Exit.DIE_HOLDING ? 1 : 0);
                        long com = Math.min(c.ends()[r], qc + c.stages());
                        boolean cut = reach > qc + c.stages();
                        changed |= com != commits[r] || cut != producerCut[r];
                        commits[r] = com;
                        producerCut[r] = cut;
                    }
                }
                delivered = d;
            }
        }
        for (int r = 0; r < n; r++) {
            if (c.consumerIndex()[r] >= 0) {
                delivered = Math.max(delivered, releases[r]);
            }
        }
        TreeSet<Long> held = new TreeSet<>();
        for (int r = 0; r < n && !DEAD_AS_QUIT; r++) {
            if (c.exits()[r] == Exit.DIE_HOLDING && !producerCut[r]) {
                held.add((long) c.ends()[r]);
            }
        }
        // A failing file read for batch b is made by one producer that commits b.
        int[] failer = new int[c.fill() == Fill.FILE_READ ? c.batches() : 0];
        for (int b = 0; b < failer.length; b++) {
            failer[b] = -1;
            if (injected(c, b) && !held.contains((long) b)) {
                List<Integer> eligible = new ArrayList<>();
                for (int r = 0; r < n; r++) {
                    if (c.producerIndex()[r] >= 0 && commits[r] > b) {
                        eligible.add(r);
                    }
                }
                if (!eligible.isEmpty()) {
                    failer[b] = eligible.get(Math.floorMod(tag(c.seed(), b, 77), eligible.size()));
                }
            }
        }
        return new Expected(commits, releases, delivered, producerCut, consumerCut, failer, held);
    }

    private static boolean injected(Config c, long batch) {
        return Math.floorMod(tag(c.seed() ^ 0x5DEECE66DL, batch, 0), 150) == 0;
    }

    private static boolean readsFile(Config c, long batch) {
        return injected(c, batch) || Math.floorMod(tag(c.seed() ^ 0xB5L, batch, 1), 4) == 0;
    }

    private static long tag(long seed, long batch, int producer) {
        long z = seed + batch * 0x9E3779B97F4A7C15L + producer * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 31)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 29);
    }

    // -------------------------------------------------------------------------------------------------------------
    // Running a configuration

    /** Runs one configuration; returns what went wrong (empty when every thread saw what it must). */
    private static List<String> run(Config c, Expected e) {
        PipelineSharedState.Builder builder = PipelineSharedState.builder(ThreadScope.BLOCK, c.stages());
        if (c.fill() == Fill.ASYNC_COPY || c.fill() == Fill.FILE_READ) {
            builder.copyEngine(ASYNC);
        }
        if (c.detect()) {
            builder.detectDeadlocks(Duration.ofMillis(100));
        }
        PipelineSharedState state = builder.build();
        int producers = c.producers();
        MemorySegment[] stages = new MemorySegment[c.stages()];
        // per producer and stage: the copy source, reused only once the stage is re-acquired (copy landed)
        MemorySegment[][] sources = new MemorySegment[producers][c.stages()];
        for (int s = 0; s < c.stages(); s++) {
            // file reads need a segment that a ByteBuffer can view: native memory
            stages[s] = c.fill() == Fill.FILE_READ ? Arena.ofAuto().allocate(8L * producers, 8)
                : MemorySegment.ofArray(new long[producers]);
            for (int p = 0; p < producers; p++) {
                sources[p][s] = MemorySegment.ofArray(new long[1]);
            }
        }
        // The file: WINDOW batches of one long per producer; reads from its end on fail.
        byte[] data = new byte[c.fill() == Fill.FILE_READ ? WINDOW * producers * 8 : 0];
        MemorySegment file = MemorySegment.ofArray(data);
        for (int i = 0; i < data.length / 8; i++) {
            file.set(ValueLayout.JAVA_LONG_UNALIGNED, 8L * i, tag(c.seed() ^ 0xF11EL, i, 3));
        }
        GatedFileChannel channel = new GatedFileChannel(data);
        channel.failFrom(data.length);

        int consumers = c.consumers();
        AtomicLongArray released = new AtomicLongArray(consumers);
        Outcome[] outcomes = new Outcome[c.threads()];
        for (int r = 0; r < c.threads(); r++) {
            outcomes[r] = new Outcome();
        }
        // the expected releases per consumer index, for the "at most S ahead" check
        long[] releasesOf = new long[consumers];
        for (int r = 0; r < c.threads(); r++) {
            if (c.consumerIndex()[r] >= 0) {
                releasesOf[c.consumerIndex()[r]] = e.releases()[r];
            }
        }
        long[] commitsOf = new long[producers];
        for (int r = 0; r < c.threads(); r++) {
            if (c.producerIndex()[r] >= 0) {
                commitsOf[c.producerIndex()[r]] = e.commits()[r];
            }
        }
        List<String> wrong = new ArrayList<>();
        ThreadTeam team = c.virtual() ? ThreadTeam.ofVirtual(c.threads()) : ThreadTeam.ofPlatform(c.threads());
        runWatched(team, released, wrong, g -> {
            int r = g.threadRank();
            int p = c.producerIndex()[r];
            int ci = c.consumerIndex()[r];
            Outcome o = outcomes[r];
            Exit exit = c.exits()[r];
            Pipeline pipe = switch (c.form()) {
                case UNIFIED -> Pipeline.make(g, state);
                case BY_COUNT -> Pipeline.make(g, state, c.producers());
                case BY_ROLE -> Pipeline.make(g, state, p >= 0 ? PipelineRole.PRODUCER : PipelineRole.CONSUMER);
            };
            SplittableRandom delays = new SplittableRandom(c.seed() ^ r);
            long b = 0;
            String op = "start";
            try {
                for (; b < c.ends()[r]; b++) {
                    int stageIndex = (int) (b % c.stages());
                    MemorySegment stage = stages[stageIndex];
                    if (p >= 0) {
                        op = "producer_acquire";
                        pipe.producerAcquire();
                        for (int k = 0; k < consumers; k++) {
                            long slowest = released.get(k);
                            if (releasesOf[k] > b - c.stages() && slowest < b - c.stages() + 1 && o.ahead == null) {
                                o.ahead = "producer " + p + " acquired batch " + b + " while consumer " + k
                                    + " had released only " + slowest + " batches (" + c.stages() + " stages)";
                            }
                        }
                        delay(delays);
                        op = "fill";
                        fill(c, e, stage, sources[p][stageIndex], channel, pipe, b, p, r);
                        op = "producer_commit";
                        pipe.producerCommit();
                        o.commits++;
                    }
                    if (ci >= 0) {
                        op = "consumer_wait";
                        try {
                            pipe.consumerWait();
                            check(c, stage, b, ci, commitsOf, data, o);
                        } catch (StageFailedException failed) {
                            o.failed.add(b);
                            if (failed.batch() != b && o.corruption == null) {
                                o.corruption = "StageFailedException for batch " + b + " names batch "
                                    + failed.batch();
                            }
                        }
                        delay(delays);
                        released.incrementAndGet(ci);          // counted before the release makes it visible
                        op = "consumer_release";
                        pipe.consumerRelease();
                        o.releases++;
                    }
                }
                if (exit == Exit.DIE_HOLDING) {
                    op = "producer_acquire (then die holding it)";
                    pipe.producerAcquire();
                }
            } catch (Throwable t) {
                o.end = t;
                o.endOp = op;
                o.endBatch = b;
            }
            if (exit == Exit.FULL || exit == Exit.QUIT || DEAD_AS_QUIT) {
                pipe.quit();
            }
            // DIE and DIE_HOLDING: the thread ends here without quit()
        });
        judge(c, e, outcomes, wrong);
        return wrong;
    }

    /**
     * Runs {@code body} on {@code team} and returns once the team has ended, or once no consumer has released a
     * batch (counted in {@code released}) for {@link #STALL}: a hang (a lost wake-up, a wait that never returns),
     * which it adds to {@code wrong} with where each member is. It bounds the time without progress, not the run:
     * the run's length depends on the machine (up to 16 threads that spin and yield on 2 cores, under whatever else
     * runs there), a hang's does not. Every configuration has a finite number of batches, so a run that keeps
     * releasing them ends.
     */
    private static void runWatched(ThreadTeam team, AtomicLongArray released, List<String> wrong,
                                   Consumer<Group> body) {
        AtomicReferenceArray<Thread> members = new AtomicReferenceArray<>(team.size());
        AtomicReference<Throwable> ended = new AtomicReference<>();
        Thread runner = Thread.ofPlatform().daemon().name("random-schedule-team").start(() -> {
            try {
                team.run(BACKSTOP, g -> {
                    members.set(g.threadRank(), Thread.currentThread());
                    body.accept(g);
                });
            } catch (Throwable t) {
                ended.set(t);
            }
        });
        long seen = -1;
        long since = System.nanoTime();
        try {
            while (!runner.join(Duration.ofMillis(50))) {
                long releases = 0;
                for (int k = 0; k < released.length(); k++) {
                    releases += released.get(k);
                }
                if (releases != seen) {
                    seen = releases;
                    since = System.nanoTime();
                } else if (System.nanoTime() - since > STALL.toNanos()) {
                    List<String> where = new ArrayList<>();
                    for (int r = 0; r < members.length(); r++) {
                        Thread member = members.get(r);
                        if (member != null && member.isAlive()) {
                            where.add("rank " + r + " in " + ThreadTeam.topFrame(member));
                        }
                    }
                    wrong.add("the team failed: no consumer released a batch for " + STALL + " (after " + releases
                        + " releases): " + where);
                    return;             // its threads are daemons, left as a timed-out team leaves them
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while watching the team", e);
        }
        Throwable end = ended.get();
        if (end instanceof ThreadTeam.TeamFailure failure) {
            wrong.add("the team failed: " + failure.getMessage().lines().findFirst().orElse("")
                + (failure.getCause() == null ? "" : " (" + firstLine(failure.getCause()) + ")"));
        } else if (end instanceof RuntimeException e) {
            throw e;
        } else if (end instanceof Error e) {
            throw e;
        }
    }

    private static void fill(Config c, Expected e, MemorySegment stage, MemorySegment src,
                             GatedFileChannel channel, Pipeline pipe, long b, int p, int rank) {
        switch (c.fill()) {
            case PLAIN_WRITE -> stage.setAtIndex(ValueLayout.JAVA_LONG, p, tag(c.seed(), b, p));
            case INLINE_COPY, ASYNC_COPY -> {
                src.set(ValueLayout.JAVA_LONG, 0, tag(c.seed(), b, p));
                MemcpyAsync.memcpyAsync(stage.asSlice(8L * p, 8), src, 8, pipe);
            }
            case FILE_READ -> {
                if (!readsFile(c, b)) {
                    stage.setAtIndex(ValueLayout.JAVA_LONG, p, tag(c.seed(), b, p));
                } else {
                    long position = e.failer()[(int) b] == rank ? channel.size() + 8L * p : position(c, b, p);
                    MemcpyAsync.memcpyAsync(stage.asSlice(8L * p, 8), channel, position, 8, pipe);
                }
            }
        }
    }

    private static long position(Config c, long batch, int producer) {
        return ((batch % WINDOW) * c.producers() + producer) * 8;
    }

    /** Checks the slots of every producer that committed batch {@code b}. */
    private static void check(Config c, MemorySegment stage, long b, int ci, long[] commitsOf, byte[] data,
                              Outcome o) {
        if (o.corruption != null) {
            return;
        }
        for (int q = 0; q < c.producers(); q++) {
            if (b >= commitsOf[q]) {
                continue;           // producer q has left before batch b: its slot holds an older batch
            }
            long expected = c.fill() == Fill.FILE_READ && readsFile(c, b)
                ? MemorySegment.ofArray(data).get(ValueLayout.JAVA_LONG_UNALIGNED, position(c, b, q))
                : tag(c.seed(), b, q);
            if (stage.getAtIndex(ValueLayout.JAVA_LONG, q) != expected) {
                o.corruption = "consumer " + ci + " expected batch " + b + " from producer " + q + " in stage "
                    + (b % c.stages()) + " but found another batch's data";
                return;
            }
        }
    }

    /** Compares what each thread saw with what the configuration promises. */
    private static void judge(Config c, Expected e, Outcome[] outcomes, List<String> wrong) {
        for (int r = 0; r < c.threads(); r++) {
            Outcome o = outcomes[r];
            boolean producer = c.producerIndex()[r] >= 0;
            boolean consumer = c.consumerIndex()[r] >= 0;
            String who = "rank " + r + " (" + (producer && consumer ? "unified" : producer ? "producer" : "consumer")
                + (c.exits()[r] == Exit.FULL ? "" : ", " + c.exits()[r] + " after " + c.ends()[r]) + ")";
            if (o.corruption != null) {
                wrong.add(who + ": " + o.corruption);
            }
            if (o.ahead != null) {
                wrong.add(who + ": " + o.ahead);
            }
            String cut = producer && e.producerCut()[r] ? "no consumer" : consumer && e.consumerCut()[r]
                ? "no producer" : null;
            if (cut == null && o.end != null) {
                wrong.add(who + ": unexpected " + firstLine(o.end) + " in " + o.endOp + " of batch " + o.endBatch);
                continue;           // the counts below only repeat that it stopped early
            } else if (cut != null && (!(o.end instanceof IllegalStateException)
                || !String.valueOf(o.end.getMessage()).contains(cut))) {
                wrong.add(who + ": expected IllegalStateException \"" + cut + " is left\" at batch "
                    + (producer ? e.commits()[r] : e.releases()[r]) + ", got " + (o.end == null ? "none"
                    : firstLine(o.end) + " in " + o.endOp + " of batch " + o.endBatch));
                if (o.end != null) {
                    continue;
                }
            }
            if (producer && o.commits != e.commits()[r]) {
                wrong.add(who + ": committed " + o.commits + " batches, expected " + e.commits()[r]);
            }
            if (consumer) {
                if (o.releases != e.releases()[r]) {
                    wrong.add(who + ": released " + o.releases + " batches, expected " + e.releases()[r]
                        + " (lost or duplicated batches)");
                }
                TreeSet<Long> expectedFailed = new TreeSet<>();
                for (long b : e.heldFailures()) {
                    if (b < e.releases()[r]) {
                        expectedFailed.add(b);
                    }
                }
                for (int b = 0; b < e.failer().length && b < e.releases()[r]; b++) {
                    if (e.failer()[b] >= 0) {
                        expectedFailed.add((long) b);
                    }
                }
                TreeSet<Long> failed = new TreeSet<>(o.failed);
                if (!failed.equals(expectedFailed) || failed.size() != o.failed.size()) {
                    wrong.add(who + ": StageFailedException for batches " + abbreviate(o.failed)
                        + ", expected exactly " + abbreviate(new ArrayList<>(expectedFailed)));
                }
            }
        }
    }

    private static String firstLine(Throwable t) {
        String s = t.toString();
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl) + " ...";
    }

    private static String abbreviate(List<Long> batches) {
        return batches.size() <= 12 ? batches.toString()
            : batches.subList(0, 12).toString().replace("]", ", ... (" + batches.size() + " in all)]");
    }

    private static void delay(SplittableRandom random) {
        int dice = random.nextInt(256);
        if (dice == 0) {
            // kept: a random descheduling that perturbs the schedule under test; it orders nothing
            LockSupport.parkNanos(random.nextInt(50_000));
        } else if (dice < 8) {
            Thread.yield();
        } else if (dice < 24) {
            for (int i = random.nextInt(200); i > 0; i--) {
                Thread.onSpinWait();
            }
        }
    }
}
