package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.jpipeline.copy.CopyEngine;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Checked mode for Java-thread pipelines ({@link PipelineSharedState.Builder#checked(long)},
 * {@link CopyEngine#checked(long)}): copies are held back until a wait needs them, their destinations and
 * released stages hold the poison pattern, and a missing wait reads poison whatever the seed.
 *
 * <p>The stream test is seeded: its seed is printed, and {@code -Djpipeline.test.seed=<seed>} reruns it.
 */
class CheckedModeTest {

    /** Odd on purpose: the last three bytes are a trailing part of the pattern. */
    private static final int BYTES = 67;

    // -------------------------------------------------------------------------------------------------------------
    // Shared pipelines

    @ParameterizedTest
    @ValueSource(longs = {0, 1, 2, 42, -7})
    void aConsumerThatSkipsItsWaitReadsPoisonWhateverTheSeed(long seed) {
        PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 2).checked(seed).build();
        try (Arena arena = Arena.ofShared()) {
            MemorySegment stage = arena.allocate(BYTES);
            MemorySegment src = data(arena, BYTES, 1);
            CountDownLatch committed = new CountDownLatch(1);
            CountDownLatch looked = new CountDownLatch(1);
            Teams.run(2, g -> {
                boolean producer = g.threadRank() == 0;
                PipelineRole role = producer ? PipelineRole.PRODUCER : PipelineRole.CONSUMER;
                try (Pipeline pipe = Pipeline.make(g, state, role)) {
                    if (producer) {
                        pipe.producerAcquire();
                        assertEquals(AsyncContractFulfillment.ASYNC, MemcpyAsync.memcpyAsync(stage, src, BYTES, pipe),
                            "even a small copy is held back");
                        pipe.producerCommit();
                        committed.countDown();
                        Teams.await(looked, "the consumer has looked at the stage");
                    } else {
                        Teams.await(committed, "the producer has committed");
                        assertPoison(stage, "a read of a committed stage without consumer_wait");
                        pipe.consumerWait();
                        assertEquals(-1L, src.mismatch(stage), "the stage after consumer_wait");
                        pipe.consumerRelease();
                        assertPoison(stage, "a read after the last consumer_release");
                        looked.countDown();
                    }
                }
            });
        }
    }

    @Test
    void onlyTheLastReleasePoisonsTheStage() {
        PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 1).checked(3).build();
        try (Arena arena = Arena.ofShared()) {
            MemorySegment stage = arena.allocate(BYTES);
            MemorySegment src = data(arena, BYTES, 2);
            CountDownLatch firstReleased = new CountDownLatch(1);
            CountDownLatch lastReleased = new CountDownLatch(1);
            Teams.run(3, g -> {
                PipelineRole role = g.threadRank() == 0 ? PipelineRole.PRODUCER : PipelineRole.CONSUMER;
                try (Pipeline pipe = Pipeline.make(g, state, role)) {
                    switch (g.threadRank()) {
                        case 0 -> {
                            pipe.producerAcquire();
                            MemcpyAsync.memcpyAsync(stage, src, BYTES, pipe);
                            pipe.producerCommit();
                            Teams.await(lastReleased, "the last consumer has released");
                        }
                        case 1 -> {
                            pipe.consumerWait();
                            pipe.consumerRelease();
                            assertEquals(-1L, src.mismatch(stage), "another consumer still holds the stage");
                            firstReleased.countDown();
                        }
                        default -> {
                            pipe.consumerWait();
                            Teams.await(firstReleased, "the other consumer has released");
                            assertEquals(-1L, src.mismatch(stage), "the stage before the last release");
                            pipe.consumerRelease();
                            assertPoison(stage, "a read after the last consumer_release");
                            lastReleased.countDown();
                        }
                    }
                }
            });
        }
    }

    @Test
    void aCopyThatFailsWhenItLandsFailsItsStage() {
        PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 2).checked(5).build();
        try (Arena arena = Arena.ofShared()) {
            MemorySegment stages = arena.allocate(2L * BYTES);
            MemorySegment src = data(arena, BYTES, 3);
            CountDownLatch closed = new CountDownLatch(1);
            Teams.run(2, g -> {
                boolean producer = g.threadRank() == 0;
                PipelineRole role = producer ? PipelineRole.PRODUCER : PipelineRole.CONSUMER;
                try (Pipeline pipe = Pipeline.make(g, state, role)) {
                    if (producer) {
                        Arena doomed = Arena.ofShared();
                        MemorySegment gone = doomed.allocate(BYTES);
                        pipe.producerAcquire();
                        MemcpyAsync.memcpyAsync(stages.asSlice(0, BYTES), gone, BYTES, pipe);
                        pipe.producerCommit();
                        doomed.close();             // before the copy has landed: it cannot land any more
                        closed.countDown();
                        pipe.producerAcquire();
                        MemcpyAsync.memcpyAsync(stages.asSlice(BYTES, BYTES), src, BYTES, pipe);
                        pipe.producerCommit();
                    } else {
                        Teams.await(closed, "the producer has closed the source");
                        StageFailedException failed = assertThrows(StageFailedException.class, pipe::consumerWait);
                        assertEquals(0, failed.stage());
                        assertInstanceOf(IllegalStateException.class, failed.getCause(), "the closed arena");
                        pipe.consumerRelease();
                        pipe.consumerWait();
                        assertEquals(-1L, src.mismatch(stages.asSlice(BYTES, BYTES)), "the next stage lands");
                        pipe.consumerRelease();
                    }
                }
            });
        }
    }

    /**
     * Many batches through a checked 1P/1C pipeline (platform threads) and a 2P/2C one (virtual threads): every copy
     * lands, nothing hangs, every byte is
     * right. Producers fill a source per stage after acquiring it (the correct pattern: a held-back copy reads its
     * source when it lands), copy their slice in one or two pieces or write it directly (which a late poison of the
     * round before must never overwrite); consumers wait, wait with a time limit, or poll.
     */
    @Test
    void everyCopyLandsAndEveryByteIsRight() {
        String property = System.getProperty("jpipeline.test.seed", "");
        long seed = property.isBlank() ? System.nanoTime() : Long.parseLong(property.trim());
        System.out.println("CheckedModeTest seed " + seed + " (rerun: -Djpipeline.test.seed=" + seed + ")");
        List<String> failures = Collections.synchronizedList(new ArrayList<>());
        stream(seed, 1, 1, 2_000, false, failures);
        stream(seed ^ 0x5EED, 2, 2, 1_500, true, failures);
        if (!failures.isEmpty()) {
            fail("seed " + seed + " (rerun: -Djpipeline.test.seed=" + seed + "):\n  "
                + String.join("\n  ", failures.subList(0, Math.min(10, failures.size()))));
        }
    }

    private static void stream(long seed, int producers, int consumers, int batches, boolean virtual,
                               List<String> failures) {
        SplittableRandom config = new SplittableRandom(seed);
        int stages = 1 + config.nextInt(4);
        int slice = 1 + config.nextInt(200);
        int stageBytes = producers * slice;
        String what = producers + "P/" + consumers + "C on " + (virtual ? "virtual" : "platform") + " threads, "
            + stages + " stages, " + slice + "-byte slices";
        PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, stages).checked(seed).build();
        try (Arena arena = Arena.ofShared()) {
            MemorySegment ring = arena.allocate((long) stages * stageBytes);
            MemorySegment sources = arena.allocate((long) producers * stages * slice);
            ThreadTeam team = virtual ? ThreadTeam.ofVirtual(producers + consumers)
                : ThreadTeam.ofPlatform(producers + consumers);
            team.run(Teams.LIMIT, g -> {
                int rank = g.threadRank();
                SplittableRandom random = new SplittableRandom(seed + 31L * rank);
                try (Pipeline pipe = Pipeline.make(g, state, producers)) {
                    for (int b = 0; b < batches; b++) {
                        int s = b % stages;
                        MemorySegment stage = ring.asSlice((long) s * stageBytes, stageBytes);
                        if (rank < producers) {
                            produce(pipe, b, rank, stage.asSlice((long) rank * slice, slice),
                                sources.asSlice(((long) rank * stages + s) * slice, slice), random);
                        } else {
                            consume(pipe, b, producers, slice, stage, random, what, failures);
                        }
                    }
                }
            });
        }
    }

    private static void produce(Pipeline pipe, int batch, int producer, MemorySegment mine, MemorySegment src,
                                SplittableRandom random) {
        pipe.producerAcquire();
        int slice = (int) mine.byteSize();
        int how = random.nextInt(4);
        MemorySegment target = how == 0 ? mine : src;       // direct writes go to the stage itself
        for (int i = 0; i < slice; i++) {
            target.set(ValueLayout.JAVA_BYTE, i, expected(batch, producer, i));
        }
        if (how == 1) {
            MemcpyAsync.memcpyAsync(mine, src, slice, pipe);
        } else if (how >= 2) {
            int cut = random.nextInt(slice + 1);
            MemcpyAsync.memcpyAsync(mine, src, cut, pipe);
            MemcpyAsync.memcpyAsync(mine.asSlice(cut), src.asSlice(cut), slice - cut, pipe);
        }
        pipe.producerCommit();
    }

    private static void consume(Pipeline pipe, int batch, int producers, int slice, MemorySegment stage,
                                SplittableRandom random, String what, List<String> failures) {
        switch (random.nextInt(4)) {
            case 0 -> {
                if (!pipe.consumerWaitFor(Teams.PATIENCE)) {
                    throw new AssertionError(what + ": batch " + batch + " not ready within " + Teams.PATIENCE);
                }
            }
            case 1 -> {
                long deadline = System.nanoTime() + Teams.PATIENCE.toNanos();
                while (!pipe.consumerWaitFor(Duration.ZERO)) {
                    if (System.nanoTime() - deadline > 0) {
                        throw new AssertionError(what + ": batch " + batch + " not ready after polling for "
                            + Teams.PATIENCE);
                    }
                    Thread.yield();         // the producers may need this core (a poll loop on 2 cores)
                }
            }
            default -> pipe.consumerWait();
        }
        for (int p = 0; p < producers; p++) {
            for (int i = 0; i < slice; i++) {
                byte got = stage.get(ValueLayout.JAVA_BYTE, (long) p * slice + i);
                if (got != expected(batch, p, i)) {
                    failures.add(what + ": batch " + batch + ", producer " + p + ", byte " + i + ": expected "
                        + expected(batch, p, i) + ", got " + got);
                    break;
                }
            }
        }
        pipe.consumerRelease();
    }

    private static byte expected(int batch, int producer, int index) {
        return (byte) (batch * 31 + producer * 101 + index * 7 + 1);
    }

    // -------------------------------------------------------------------------------------------------------------
    // Thread-scope pipelines on a checked copy engine

    @Test
    void aPriorTooLargeLeavesTheBatchesItDoesNotCoverPoisoned() {
        try (CopyEngine engine = CopyEngine.checked(7); Arena arena = Arena.ofShared()) {
            Pipeline pipe = Pipeline.make(engine);
            MemorySegment[] dst = new MemorySegment[4];
            MemorySegment[] src = new MemorySegment[4];
            for (int b = 0; b < 4; b++) {
                dst[b] = arena.allocate(BYTES);
                src[b] = data(arena, BYTES, 10 + b);
                pipe.producerAcquire();
                MemcpyAsync.memcpyAsync(dst[b], src[b], BYTES, pipe);
                pipe.producerCommit();
            }
            assertPoison(dst[3], "batch 3 right after its commit");
            Pipeline.consumerWaitPrior(pipe, 2);            // covers batches 0 and 1 only
            assertEquals(-1L, src[0].mismatch(dst[0]), "batch 0, covered");
            assertEquals(-1L, src[1].mismatch(dst[1]), "batch 1, covered");
            assertPoison(dst[2], "batch 2, not covered by pipeline_consumer_wait_prior<2>");
            assertPoison(dst[3], "batch 3, not covered by pipeline_consumer_wait_prior<2>");
            Pipeline.consumerWaitPrior(pipe, 0);
            assertEquals(-1L, src[2].mismatch(dst[2]), "batch 2 after pipeline_consumer_wait_prior<0>");
            assertEquals(-1L, src[3].mismatch(dst[3]), "batch 3 after pipeline_consumer_wait_prior<0>");
            pipe.quit();
        }
    }

    @Test
    void aFileReadLandsOnTheThreadThatWaitsForIt() {
        byte[] file = new byte[BYTES];
        for (int i = 0; i < BYTES; i++) {
            file[i] = (byte) (i * 3 + 1);
        }
        GatedFileChannel channel = new GatedFileChannel(file);
        try (CopyEngine engine = CopyEngine.checked(8); Arena arena = Arena.ofShared()) {
            Pipeline pipe = Pipeline.make(engine);
            MemorySegment dst = arena.allocate(BYTES);
            pipe.producerAcquire();
            MemcpyAsync.memcpyAsync(dst, channel, 0, BYTES, pipe);
            pipe.producerCommit();
            assertNull(channel.reader(0), "the read is held back until a wait needs it");
            assertPoison(dst, "the destination of a read that has not landed");
            pipe.consumerWait();
            assertSame(Thread.currentThread(), channel.reader(0), "the waiting thread performs the read");
            assertEquals(-1L, MemorySegment.ofArray(file).mismatch(dst));
            pipe.consumerRelease();
            pipe.quit();
        }
    }

    @Test
    void aCopyTiedToABarrierLandsBeforeThePhaseCompletes() {
        try (CopyEngine engine = CopyEngine.checked(9); Arena arena = Arena.ofShared()) {
            MemorySegment dst = arena.allocate(BYTES);
            MemorySegment src = data(arena, BYTES, 4);
            AtomicReference<String> atCompletion = new AtomicReference<>();
            Barrier barrier = new Barrier(2, () -> atCompletion.set(describe(dst, src)));
            Bounded.Run peer = Bounded.start("barrier-peer", () -> {
                barrier.arriveAndWait();
                return describe(dst, src);
            });
            Pipeline pipe = Pipeline.make(engine);
            pipe.producerAcquire();
            MemcpyAsync.memcpyAsync(dst, src, BYTES, pipe);
            assertPoison(dst, "the destination before pipeline_producer_commit(pipe, barrier)");
            Teams.awaitParked(peer.thread(), "arriveAndWait");
            Pipeline.producerCommit(pipe, barrier);
            barrier.arriveAndWait();
            assertEquals("data", atCompletion.get(), "the destination when the phase completes");
            assertEquals("data", peer.result(Teams.PATIENCE), "the destination after the peer's wait");
            pipe.producerCommit();
            pipe.quit();
        }
    }

    @Test
    void aPollMayFindACommittedBatchStillInFlightButNotForever() {
        int inFlight = 0;
        int seeds = 32;
        for (long seed = 0; seed < seeds; seed++) {
            try (CopyEngine engine = CopyEngine.checked(seed); Arena arena = Arena.ofShared()) {
                Pipeline pipe = Pipeline.make(engine);
                MemorySegment dst = arena.allocate(BYTES);
                MemorySegment src = data(arena, BYTES, 5);
                pipe.producerAcquire();
                MemcpyAsync.memcpyAsync(dst, src, BYTES, pipe);
                pipe.producerCommit();
                int polls = 1;
                if (!pipe.consumerWaitFor(Duration.ZERO)) {
                    inFlight++;
                    assertPoison(dst, "seed " + seed + ": the destination while a poll finds the copy in flight");
                    while (!pipe.consumerWaitFor(Duration.ZERO)) {
                        polls++;
                    }
                }
                assertTrue(polls <= 3, "seed " + seed + ": at most two polls pass a copy by, took " + polls);
                assertEquals(-1L, src.mismatch(dst), "seed " + seed);
                pipe.consumerRelease();
                pipe.quit();
            }
        }
        assertTrue(inFlight > 0 && inFlight < seeds, "some polls, not all, find the copy in flight: " + inFlight
            + " of " + seeds);
    }

    @Test
    void aClosedCheckedEngineRefusesCopies() {
        CopyEngine engine = CopyEngine.checked(11);
        Pipeline pipe = Pipeline.make(engine);
        engine.close();
        pipe.producerAcquire();
        MemorySegment dst = MemorySegment.ofArray(new byte[8]);
        MemorySegment src = MemorySegment.ofArray(new byte[8]);
        IllegalStateException refused = assertThrows(IllegalStateException.class,
            () -> MemcpyAsync.memcpyAsync(dst, src, 8, pipe));
        assertTrue(refused.getMessage().contains("closed"), refused.getMessage());
    }

    @Test
    void aStateBuiltWithACheckedEngineIsChecked() {
        try (CopyEngine engine = CopyEngine.checked(12)) {
            assertTrue(engine.toString().contains("checked (seed 12)"), engine.toString());
            PipelineSharedState viaEngine = PipelineSharedState.builder(ThreadScope.BLOCK, 2).copyEngine(engine)
                .build();
            assertTrue(viaEngine.toString().contains("checked (seed 12)"), viaEngine.toString());
            PipelineSharedState own = PipelineSharedState.builder(ThreadScope.BLOCK, 2).copyEngine(engine).checked(13)
                .build();
            assertTrue(own.toString().contains("checked (seed 13)"), own.toString());
        }
        String plain = PipelineSharedState.create(ThreadScope.BLOCK, 2).toString();
        assertTrue(!plain.contains("checked"), plain);
    }

    // -------------------------------------------------------------------------------------------------------------

    private static MemorySegment data(Arena arena, int bytes, int salt) {
        MemorySegment s = arena.allocate(bytes);
        for (int i = 0; i < bytes; i++) {
            s.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 13 + salt));
        }
        return s;
    }

    /** "data" when {@code dst} holds {@code src}'s bytes, "poison" when it holds the pattern, else "other". */
    private static String describe(MemorySegment dst, MemorySegment src) {
        return dst.mismatch(src) == -1 ? "data" : isPoison(dst) ? "poison" : "other";
    }

    private static boolean isPoison(MemorySegment s) {
        long words = s.byteSize() / 4;
        for (long w = 0; w < words; w++) {
            if (s.get(ValueLayout.JAVA_INT_UNALIGNED, 4 * w) != 0xFFA5A5A5) {
                return false;
            }
        }
        for (long b = 4 * words; b < s.byteSize(); b++) {
            if (s.get(ValueLayout.JAVA_BYTE, b) != (byte) 0xA5) {
                return false;
            }
        }
        return true;
    }

    private static void assertPoison(MemorySegment s, String what) {
        if (!isPoison(s)) {
            fail(what + " should hold the poison pattern (words 0xFFA5A5A5, trailing bytes 0xA5), holds "
                + "0x" + Integer.toHexString(s.get(ValueLayout.JAVA_INT_UNALIGNED, 0)) + " at offset 0");
        }
        assertTrue(Float.isNaN(s.get(ValueLayout.JAVA_FLOAT_UNALIGNED, 0)), what + ": a poisoned float is a NaN");
    }

    @Test
    @Timeout(60)
    void aCheckedPipelineReadsOnTheIssuingThreadAndFailsTheStage() {
        int stageBytes = 8192;
        try (CopyEngine engine = CopyEngine.builder().workers(2).inlineThreshold(4096).name("checked-issuer-read")
            .build()) {
            PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 2).copyEngine(engine)
                .copyPolicy(CopyPolicy.ON_ISSUING_THREAD).checked(42).build();
            byte[] bytes = TestSegments.randomBytes(4 * stageBytes, 6);
            GatedFileChannel channel = new GatedFileChannel(bytes);
            channel.failFrom(3L * stageBytes);
            StringBuilder log = new StringBuilder();
            try (Arena arena = Arena.ofShared()) {
                MemorySegment stages = arena.allocate(2L * stageBytes);
                Teams.run(2, g -> {
                    Pipeline pipe = Pipeline.make(g, state, 1);
                    for (long b = 0; b < 4; b++) {
                        MemorySegment stage = stages.asSlice((b % 2) * stageBytes, stageBytes);
                        if (g.threadRank() == 0) {
                            pipe.producerAcquire();
                            MemcpyAsync.memcpyAsync(stage, channel, b * stageBytes, stageBytes, pipe);
                            pipe.producerCommit();
                        } else {
                            try {
                                pipe.consumerWait();
                                log.append(stage.mismatch(MemorySegment.ofArray(bytes).asSlice(b * stageBytes,
                                    stageBytes)) == -1
                                    ? "ok " : "bad ");
                            } catch (StageFailedException e) {
                                log.append("failed ");
                            }
                            pipe.consumerRelease();
                        }
                    }
                    pipe.quit();
                });
            }
            assertEquals("ok ok ok failed ", log.toString());
        }
    }
}
