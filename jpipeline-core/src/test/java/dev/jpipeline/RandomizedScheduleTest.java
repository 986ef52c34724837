package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.copy.CopyEngine;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * Seeded randomized schedules: random group sizes (1-16), stage counts (1-8), unified / by-count / by-role
 * pipelines, platform or virtual threads, plain writes or memcpyAsync (inline or on a copy engine), random
 * delays. Checks FIFO order, that no batch is lost or seen
 * twice, that a producer never runs more than S stages ahead of the slowest consumer, and data integrity.
 *
 * <p>The seed is printed; rerun one with {@code ./mvnw verify -Djpipeline.test.seed=<seed>}. The total number
 * of batches comes from {@code -Djpipeline.test.batches} (default 10,000).
 */
class RandomizedScheduleTest {

    private enum Form { UNIFIED, BY_COUNT, BY_ROLE }

    /** How producers fill their slot of a stage. */
    private enum Fill { PLAIN_WRITE, INLINE_COPY, ASYNC_COPY }

    private record Config(Form form, int threads, int stages, int producers, boolean virtual, Fill fill,
                          int batches, long seed) {
    }

    /** Runs every copy on its workers, however small, so that completion always arrives from another thread. */
    private static final CopyEngine ASYNC = CopyEngine.builder().workers(2).inlineThreshold(0).name("random-async")
        .build();

    @Test
    void randomSchedulesKeepEveryPipelineInvariant() {
        String property = System.getProperty("jpipeline.test.seed", "");
        long seed = property.isBlank() ? System.nanoTime() : Long.parseLong(property.trim());
        int totalBatches = Integer.getInteger("jpipeline.test.batches", 10_000);
        System.out.println("RandomizedScheduleTest seed " + seed + " (rerun: -Djpipeline.test.seed=" + seed + ")");
        Random random = new Random(seed);
        int configurations = 12;
        long delivered = 0;
        for (int i = 0; i < configurations; i++) {
            Config config = randomConfig(random, (totalBatches + configurations - 1) / configurations);
            try {
                delivered += run(config);
            } catch (Throwable t) {
                throw new AssertionError("seed " + seed + ", configuration " + i + ": " + config, t);
            }
        }
        assertTrue(delivered >= totalBatches, "batches delivered: " + delivered);
    }

    private static Config randomConfig(Random random, int batches) {
        Form form = Form.values()[random.nextInt(3)];
        int threads = form == Form.UNIFIED ? 1 + random.nextInt(16) : 2 + random.nextInt(15);
        int stages = 1 + random.nextInt(8);
        int producers = form == Form.UNIFIED ? threads : 1 + random.nextInt(threads - 1);
        return new Config(form, threads, stages, producers, random.nextBoolean(),
            Fill.values()[random.nextInt(3)], batches, random.nextLong());
    }

    private static long tag(long seed, long batch, int producer) {
        long z = seed + batch * 0x9E3779B97F4A7C15L + producer * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 31)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 29);
    }

    /** Runs one configuration; returns the number of batches every consumer saw. */
    private static long run(Config c) {
        PipelineSharedState.Builder builder = PipelineSharedState.builder(ThreadScope.BLOCK, c.stages());
        if (c.fill() == Fill.ASYNC_COPY) {
            builder.copyEngine(ASYNC);
        }
        PipelineSharedState state = builder.build();
        MemorySegment[] stages = new MemorySegment[c.stages()];
        // per producer and stage: the copy source, reused only once the stage is re-acquired (copy landed)
        MemorySegment[][] sources = new MemorySegment[c.producers()][c.stages()];
        for (int s = 0; s < c.stages(); s++) {
            stages[s] = MemorySegment.ofArray(new long[c.producers()]);
            for (int p = 0; p < c.producers(); p++) {
                sources[p][s] = MemorySegment.ofArray(new long[1]);
            }
        }
        // Which ranks produce (the caller's choice for by-count, each thread's role for by-role).
        List<Integer> ranks = new ArrayList<>();
        for (int r = 0; r < c.threads(); r++) {
            ranks.add(r);
        }
        Collections.shuffle(ranks, new Random(c.seed()));
        int[] producerIndex = new int[c.threads()];
        int[] consumerIndex = new int[c.threads()];
        int consumers = c.form() == Form.UNIFIED ? c.threads() : c.threads() - c.producers();
        for (int i = 0; i < c.threads(); i++) {
            int r = ranks.get(i);
            producerIndex[r] = c.form() == Form.UNIFIED ? r : i < c.producers() ? i : -1;
            consumerIndex[r] = c.form() == Form.UNIFIED ? r : i < c.producers() ? -1 : i - c.producers();
        }
        AtomicLongArray released = new AtomicLongArray(consumers);
        AtomicLong seen = new AtomicLong();
        ThreadTeam team = c.virtual() ? ThreadTeam.ofVirtual(c.threads()) : ThreadTeam.ofPlatform(c.threads());
        team.run(Teams.LIMIT, g -> {
            int r = g.threadRank();
            int p = producerIndex[r];
            int ci = consumerIndex[r];
            Pipeline pipe = switch (c.form()) {
                case UNIFIED -> Pipeline.make(g, state);
                case BY_COUNT -> Pipeline.make(g, state, c.producers());
                case BY_ROLE -> Pipeline.make(g, state, p >= 0 ? PipelineRole.PRODUCER : PipelineRole.CONSUMER);
            };
            SplittableRandom delays = new SplittableRandom(c.seed() ^ r);
            for (long b = 0; b < c.batches(); b++) {
                int stageIndex = (int) (b % c.stages());
                MemorySegment stage = stages[stageIndex];
                if (p >= 0) {
                    pipe.producerAcquire();
                    for (int k = 0; k < consumers; k++) {
                        long slowest = released.get(k);
                        if (slowest < b - c.stages() + 1) {
                            throw new AssertionError("producer " + p + " acquired batch " + b + " while consumer "
                                + k + " had released only " + slowest + " batches (" + c.stages() + " stages)");
                        }
                    }
                    delay(delays);
                    if (c.fill() == Fill.PLAIN_WRITE) {
                        stage.setAtIndex(ValueLayout.JAVA_LONG, p, tag(c.seed(), b, p));
                    } else {
                        MemorySegment src = sources[p][stageIndex];
                        src.set(ValueLayout.JAVA_LONG, 0, tag(c.seed(), b, p));
                        MemcpyAsync.memcpyAsync(stage.asSlice(8L * p, 8), src, 8, pipe);
                    }
                    pipe.producerCommit();
                }
                if (ci >= 0) {
                    pipe.consumerWait();
                    for (int q = 0; q < c.producers(); q++) {
                        if (stage.getAtIndex(ValueLayout.JAVA_LONG, q) != tag(c.seed(), b, q)) {
                            throw new AssertionError("consumer " + ci + " expected batch " + b + " from producer "
                                + q + " in stage " + (b % c.stages()) + " but found another batch's data");
                        }
                    }
                    delay(delays);
                    seen.incrementAndGet();
                    released.incrementAndGet(ci);          // counted before the release makes it visible
                    pipe.consumerRelease();
                }
            }
            pipe.quit();
        });
        for (int k = 0; k < consumers; k++) {
            assertEquals(c.batches(), released.get(k), "consumer " + k + " released every batch exactly once");
        }
        assertEquals((long) consumers * c.batches(), seen.get());
        return c.batches();
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
