package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Conformance scenarios 10-23 (libcudacxx-pipeline-semantics.md §15 B: the producer/consumer protocol). */
class ConformanceProtocolTest {

    private static MemorySegment intValue(int v) {
        return MemorySegment.ofArray(new int[] {v});
    }

    @Test
    void s10_singleThreadRoundTripWithParityFlip() {
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 2);
        Pipeline pipe = Pipeline.make(Teams.soloGroup(), state);
        MemorySegment dst = MemorySegment.ofArray(new int[1]);
        int[] values = {12, 24, 42};
        for (int b = 0; b < 3; b++) {
            pipe.producerAcquire();
            MemorySegment src = intValue(values[b]);
            MemcpyAsync.memcpyAsync(dst, src, 4, pipe);
            pipe.producerCommit();
            switch (b) {
                case 0 -> pipe.consumerWait();
                case 1 -> assertTrue(pipe.consumerWaitFor(Duration.ofSeconds(30)));
                default -> assertTrue(pipe.consumerWaitUntil(Instant.now().plusSeconds(30)));
            }
            assertEquals(values[b], dst.get(ValueLayout.JAVA_INT, 0));
            assertEquals(values[b], src.get(ValueLayout.JAVA_INT, 0), "source unchanged");
            pipe.consumerRelease();
        }
        assertTrue(pipe.quit());
    }

    @Test
    void s11_firstRoundIsFree() {
        int stages = 5;
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, stages);
        AtomicInteger committedBeforeAnyRelease = new AtomicInteger();
        Teams.run(2, g -> {
            Pipeline pipe = Pipeline.make(g, state, 1);
            if (g.threadRank() == 0) {
                for (int s = 0; s < stages; s++) {
                    pipe.producerAcquire();
                    pipe.producerCommit();
                    committedBeforeAnyRelease.incrementAndGet();
                }
            }
            g.sync();                            // the consumer does nothing until the producer is done
            if (g.threadRank() == 1) {
                for (int s = 0; s < stages; s++) {
                    pipe.consumerWait();
                    pipe.consumerRelease();
                }
            }
            pipe.quit();
        });
        assertEquals(stages, committedBeforeAnyRelease.get());
    }

    @Test
    void s12_producerRunsAtMostStagesAhead() {
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 2);
        long[] releasedAt = new long[1];
        long[] thirdAcquiredAt = new long[1];
        Teams.runSeeingPeers(2, (g, threads) -> {
            Pipeline pipe = Pipeline.make(g, state, 1);
            if (g.threadRank() == 0) {
                for (int b = 0; b < 3; b++) {
                    pipe.producerAcquire();
                    if (b == 2) {
                        thirdAcquiredAt[0] = System.nanoTime();
                    }
                    pipe.producerCommit();
                }
            } else {
                pipe.consumerWait();
                Teams.awaitParked(threads[0], "producerAcquire");  // the third acquire blocks before the release
                releasedAt[0] = System.nanoTime();
                pipe.consumerRelease();
                for (int b = 1; b < 3; b++) {
                    pipe.consumerWait();
                    pipe.consumerRelease();
                }
            }
            pipe.quit();
        });
        assertTrue(thirdAcquiredAt[0] >= releasedAt[0], "the third acquire must wait for the first release");
    }

    @Test
    void s13_everyProducerMustCommit() {
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 2);
        AtomicInteger before = new AtomicInteger(-1);
        AtomicInteger after = new AtomicInteger(-1);
        Teams.run(4, g -> {
            int r = g.threadRank();
            Pipeline pipe = Pipeline.make(g, state, 3);
            if (r < 2) {
                pipe.producerAcquire();
                pipe.producerCommit();
            }
            g.sync();
            if (r == 3) {
                before.set(pipe.consumerWaitFor(Duration.ofMillis(50)) ? 1 : 0);
            }
            g.sync();
            if (r == 2) {
                pipe.producerAcquire();
                pipe.producerCommit();
            }
            if (r == 3) {
                after.set(pipe.consumerWaitFor(Duration.ofSeconds(10)) ? 1 : 0);
                pipe.consumerRelease();
            }
            pipe.quit();
        });
        assertEquals(0, before.get());
        assertEquals(1, after.get());
    }

    @Test
    void s14_acquireIsIdempotentUntilCommit() {
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 1);
        Pipeline pipe = Pipeline.make(Teams.soloGroup(), state);
        pipe.producerAcquire();
        pipe.producerAcquire();      // same stage: returns at once (a real second acquire would need a release)
        pipe.producerCommit();
        pipe.consumerWait();
        pipe.consumerRelease();
        pipe.producerAcquire();      // round 1 of the only stage: only one stage was used
        pipe.producerCommit();
        assertTrue(pipe.consumerWaitFor(Duration.ZERO));
    }

    @Test
    void s15_waitIsIdempotentUntilRelease() {
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 2);
        Pipeline pipe = Pipeline.make(Teams.soloGroup(), state);
        MemorySegment dst0 = MemorySegment.ofArray(new int[1]);
        MemorySegment dst1 = MemorySegment.ofArray(new int[1]);
        pipe.producerAcquire();
        MemcpyAsync.memcpyAsync(dst0, intValue(7), 4, pipe);
        pipe.producerCommit();
        pipe.producerAcquire();
        MemcpyAsync.memcpyAsync(dst1, intValue(8), 4, pipe);
        pipe.producerCommit();
        long start = System.nanoTime();
        pipe.consumerWait();
        pipe.consumerWait();
        assertTrue(pipe.consumerWaitFor(Duration.ofMillis(1)));
        assertTrue(Teams.millisSince(start) < 1000);
        assertEquals(7, dst0.get(ValueLayout.JAVA_INT, 0));
        pipe.consumerRelease();
        pipe.consumerWait();
        assertEquals(8, dst1.get(ValueLayout.JAVA_INT, 0));
        pipe.consumerRelease();
    }

    @Test
    void s16_fifoStageOrder() {
        int stages = 3;
        int batches = 300;
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, stages);
        MemorySegment[] buffers = new MemorySegment[stages];
        for (int s = 0; s < stages; s++) {
            buffers[s] = MemorySegment.ofArray(new long[2]);
        }
        AtomicInteger seen = new AtomicInteger();
        Teams.run(4, g -> {
            int r = g.threadRank();
            Pipeline pipe = Pipeline.make(g, state, 2);
            MemorySegment tag = MemorySegment.ofArray(new long[1]);
            for (int b = 0; b < batches; b++) {
                MemorySegment stage = buffers[b % stages];       // batch b sits in stage b mod S
                if (r < 2) {
                    pipe.producerAcquire();
                    tag.set(ValueLayout.JAVA_LONG, 0, b);
                    MemcpyAsync.memcpyAsync(stage.asSlice(8L * r), tag, 8, pipe);
                    pipe.producerCommit();
                } else {
                    pipe.consumerWait();
                    assertEquals(b, stage.getAtIndex(ValueLayout.JAVA_LONG, 0), "tag of producer 0");
                    assertEquals(b, stage.getAtIndex(ValueLayout.JAVA_LONG, 1), "tag of producer 1");
                    seen.incrementAndGet();
                    pipe.consumerRelease();
                }
            }
            pipe.quit();
        });
        assertEquals(2 * batches, seen.get());
    }

    /** Unified pipeline of {@code threads}, each writing its slot of each batch and checking every slot. */
    private static void unifiedRoundTrips(int threads, int stages, int batches) {
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, stages);
        long[][] buffers = new long[stages][threads];
        AtomicLong checks = new AtomicLong();
        Teams.run(threads, g -> {
            int r = g.threadRank();
            Pipeline pipe = Pipeline.make(g, state);
            for (int b = 0; b < batches; b++) {
                long[] stage = buffers[b % stages];
                pipe.producerAcquire();
                stage[r] = (long) b * threads + r;
                pipe.producerCommit();
                pipe.consumerWait();
                for (int t = 0; t < threads; t++) {
                    assertEquals((long) b * threads + t, stage[t], "batch " + b + " slot " + t);
                }
                checks.incrementAndGet();
                pipe.consumerRelease();
            }
            pipe.quit();
        });
        assertEquals((long) threads * batches, checks.get());
    }

    @Test
    void s17_manyPhasesNoAba() {
        unifiedRoundTrips(3, 3, 1000);
    }

    @Test
    void s18_singleStageStrictAlternation() {
        unifiedRoundTrips(4, 1, 200);
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 1);
        AtomicLong releases = new AtomicLong();
        AtomicBoolean ranAhead = new AtomicBoolean();
        long[] slot = new long[1];
        Teams.run(2, g -> {
            Pipeline pipe = Pipeline.make(g, state, 1);
            for (int b = 0; b < 500; b++) {
                if (g.threadRank() == 0) {
                    pipe.producerAcquire();
                    if (releases.get() < b) {
                        ranAhead.set(true);
                    }
                    slot[0] = b;
                    pipe.producerCommit();
                } else {
                    pipe.consumerWait();
                    assertEquals(b, slot[0]);
                    releases.incrementAndGet();          // counted before the release makes it visible
                    pipe.consumerRelease();
                }
            }
            pipe.quit();
        });
        assertFalse(ranAhead.get(), "with one stage the producer may be at most one batch ahead");
    }

    @Test
    void s19_maximumStageCountWraps() {
        unifiedRoundTrips(2, 255, 600);
    }

    @Test
    void s20_disjointProducerSlices() {
        int producers = 3;
        int stages = 2;
        int batches = 200;
        int sliceLongs = 16;
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, stages);
        MemorySegment[] buffers = new MemorySegment[stages];
        for (int s = 0; s < stages; s++) {
            buffers[s] = MemorySegment.ofArray(new long[producers * sliceLongs]);
        }
        AtomicInteger complete = new AtomicInteger();
        Teams.run(5, g -> {
            int r = g.threadRank();
            Pipeline pipe = Pipeline.make(g, state, producers);
            MemorySegment src = MemorySegment.ofArray(new long[sliceLongs]);
            for (int b = 0; b < batches; b++) {
                MemorySegment stage = buffers[b % stages];
                if (r < producers) {
                    pipe.producerAcquire();
                    for (int i = 0; i < sliceLongs; i++) {
                        src.setAtIndex(ValueLayout.JAVA_LONG, i, b * 1_000_000L + r * 1000L + i);
                    }
                    MemcpyAsync.memcpyAsync(stage.asSlice(8L * sliceLongs * r), src,
                        AlignedSize.of(8, 8L * sliceLongs), pipe);
                    pipe.producerCommit();
                } else {
                    pipe.consumerWait();
                    for (int p = 0; p < producers; p++) {
                        for (int i = 0; i < sliceLongs; i++) {
                            assertEquals(b * 1_000_000L + p * 1000L + i,
                                stage.getAtIndex(ValueLayout.JAVA_LONG, p * sliceLongs + i));
                        }
                    }
                    complete.incrementAndGet();
                    pipe.consumerRelease();
                }
            }
            pipe.quit();
        });
        assertEquals(2 * batches, complete.get());
    }

    @Test
    void s21_plainWritesHappenBeforeTheConsumersReads() {
        int stages = 4;
        int batches = 100_000;
        int width = 32;
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, stages);
        int[][] buffers = new int[stages][width];
        long[] sums = new long[1];
        Teams.run(2, g -> {
            Pipeline pipe = Pipeline.make(g, state, 1);
            for (int b = 0; b < batches; b++) {
                int[] stage = buffers[b % stages];
                if (g.threadRank() == 0) {
                    pipe.producerAcquire();
                    for (int i = 0; i < width; i++) {
                        stage[i] = b;                   // plain writes, overwriting the previous round
                    }
                    pipe.producerCommit();
                } else {
                    pipe.consumerWait();
                    long sum = 0;
                    for (int i = 0; i < width; i++) {
                        sum += stage[i];
                    }
                    if (sum != (long) b * width) {
                        throw new AssertionError("torn or stale stage in batch " + b + ": sum " + sum);
                    }
                    sums[0] += sum;
                    pipe.consumerRelease();
                }
            }
            pipe.quit();
        });
        assertEquals((long) width * batches * (batches - 1) / 2, sums[0]);
    }

    @Test
    void s22_divergentTiming() {
        int threads = 256;
        int batches = 10;
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 2);
        MemorySegment in = MemorySegment.ofArray(new int[threads * batches]);
        for (int i = 0; i < threads * batches; i++) {
            in.setAtIndex(ValueLayout.JAVA_INT, i, i);
        }
        MemorySegment[] shared = {MemorySegment.ofArray(new int[threads]), MemorySegment.ofArray(new int[threads])};
        int[] out = new int[threads * batches];
        // the ranks release each batch one after another, rank 0 first: the fast ranks run a batch ahead (and
        // block in the next acquire or wait) while the slow ones still hold the stage
        CountDownLatch[][] released = new CountDownLatch[batches][threads];
        for (CountDownLatch[] batch : released) {
            Arrays.setAll(batch, i -> new CountDownLatch(1));
        }
        Teams.run(threads, g -> {
            int r = g.threadRank();
            Pipeline pipe = Pipeline.make(g, state);
            for (int b = 0; b < batches; b++) {
                pipe.producerAcquire();
                MemcpyAsync.memcpyAsync(g, shared[b % 2], in.asSlice(4L * threads * b), 4L * threads, pipe);
                pipe.producerCommit();
                pipe.consumerWait();
                out[b * threads + r] = shared[b % 2].getAtIndex(ValueLayout.JAVA_INT, r);
                if (r > 0) {
                    Teams.await(released[b][r - 1], "rank " + (r - 1) + " releases batch " + b);
                }
                pipe.consumerRelease();
                released[b][r].countDown();
            }
            pipe.quit();
        });
        for (int i = 0; i < out.length; i++) {
            assertEquals(i, out[i]);
        }
    }

    /** The documentation's pattern: prime every stage, then wait/compute/release/refill, then drain. */
    @Test
    void s23_primeSteadyDrain() {
        int threads = 8;
        int stages = 2;
        int batches = 50;
        int perBatch = threads * 4;
        PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, stages);
        MemorySegment in = MemorySegment.ofArray(new int[perBatch * batches]);
        for (int i = 0; i < perBatch * batches; i++) {
            in.setAtIndex(ValueLayout.JAVA_INT, i, i * 3);
        }
        MemorySegment[] shared = new MemorySegment[stages];
        for (int s = 0; s < stages; s++) {
            shared[s] = MemorySegment.ofArray(new int[perBatch]);
        }
        int[] out = new int[perBatch * batches];
        Teams.run(threads, g -> {
            Pipeline pipe = Pipeline.make(g, state);
            int fetch = 0;
            for (; fetch < stages; fetch++) {                               // prime
                pipe.producerAcquire();
                MemcpyAsync.memcpyAsync(g, shared[fetch % stages], in.asSlice(4L * perBatch * fetch),
                    AlignedSize.of(4, 4L * perBatch), pipe);
                pipe.producerCommit();
            }
            for (int b = 0; b < batches; b++) {
                pipe.consumerWait();
                for (int i = g.threadRank(); i < perBatch; i += threads) {  // compute
                    out[b * perBatch + i] = shared[b % stages].getAtIndex(ValueLayout.JAVA_INT, i) / 3;
                }
                pipe.consumerRelease();
                if (fetch < batches) {                                      // steady state: refill
                    pipe.producerAcquire();
                    MemcpyAsync.memcpyAsync(g, shared[fetch % stages], in.asSlice(4L * perBatch * fetch),
                        AlignedSize.of(4, 4L * perBatch), pipe);
                    pipe.producerCommit();
                    fetch++;
                }
            }
            pipe.quit();
        });
        for (int i = 0; i < out.length; i++) {
            assertEquals(i, out[i]);
        }
    }
}
