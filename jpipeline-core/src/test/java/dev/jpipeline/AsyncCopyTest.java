package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.copy.CopyEngine;
import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Copies that run on the copy engine: completion tied to the stage, failures, files. */
class AsyncCopyTest {

    /** Every copy is asynchronous and copies of 8 KiB or more are split over two workers. */
    private static final CopyEngine ENGINE = CopyEngine.builder().workers(2).inlineThreshold(0).minChunk(4096)
        .name("async-copy-test").build();

    @AfterAll
    static void closeEngine() {
        ENGINE.close();
    }

    private static byte[] pattern(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 31 + seed);
        }
        return b;
    }

    private static void assertContent(MemorySegment dst, byte[] expected, int from, int to) {
        for (int i = from; i < to; i++) {
            assertEquals(expected[i], dst.get(ValueLayout.JAVA_BYTE, i - from), "byte " + i);
        }
    }

    /**
     * Waits until the read at {@code position} has returned and the worker that did it has told the copy's landing:
     * it is idle again, parked for new work (only when nothing else is queued for it).
     */
    private static void awaitLanded(GatedFileChannel channel, long position) {
        Teams.await(channel.served(position), "the read at " + position + " returns");
        Teams.awaitParked(channel.reader(position), "take");
    }

    private static PipelineSharedState state(int stages) {
        return PipelineSharedState.builder(ThreadScope.BLOCK, stages).copyEngine(ENGINE)
            .copyPolicy(CopyPolicy.ON_COPY_ENGINE).build();      // these tests are about the engine
    }

    /** A producer (rank 0) and a consumer (rank 1); the producer's body runs first, the consumer's after. */
    private static void producerConsumer(PipelineSharedState state, java.util.function.Consumer<Pipeline> producer,
                                         java.util.function.Consumer<Pipeline> consumer) {
        Teams.run(2, g -> {
            Pipeline pipe = Pipeline.make(g, state, 1);
            if (g.threadRank() == 0) {
                producer.accept(pipe);
            } else {
                consumer.accept(pipe);
            }
            pipe.quit();
        });
    }

    @Test
    void largeCopiesRunOnTheEngineAndLandBeforeTheConsumerSeesTheStage() {
        byte[] source = pattern(1 << 20, 7);
        MemorySegment src = MemorySegment.ofArray(source);
        MemorySegment[] stages = {Arena.ofAuto().allocate(1 << 20), Arena.ofAuto().allocate(1 << 20)};
        PipelineSharedState state = state(2);
        AtomicInteger checked = new AtomicInteger();
        producerConsumer(state, pipe -> {
            for (int b = 0; b < 20; b++) {
                pipe.producerAcquire();
                assertEquals(AsyncContractFulfillment.ASYNC,
                    MemcpyAsync.memcpyAsync(stages[b % 2], src, 1 << 20, pipe));
                pipe.producerCommit();               // returns at once: the producer is not blocked by its copy
            }
        }, pipe -> {
            for (int b = 0; b < 20; b++) {
                pipe.consumerWait();
                assertEquals(source[source.length - 1], stages[b % 2].get(ValueLayout.JAVA_BYTE, source.length - 1));
                assertEquals(source[0], stages[b % 2].get(ValueLayout.JAVA_BYTE, 0));
                stages[b % 2].fill((byte) 0);       // the next round must copy again
                checked.incrementAndGet();
                pipe.consumerRelease();
            }
        });
        assertEquals(20, checked.get());
    }

    @Test
    void consumerDoesNotSeeTheStageBeforeItsLastChunkLands() throws Exception {
        byte[] file = pattern(8192, 3);
        GatedFileChannel channel = new GatedFileChannel(file);
        CountDownLatch lastChunk = channel.gate(4096);          // the second of two 4 KiB chunks
        MemorySegment stage = Arena.ofAuto().allocate(8192);
        PipelineSharedState state = state(1);
        AtomicReference<String> log = new AtomicReference<>("");
        producerConsumer(state, pipe -> {
            pipe.producerAcquire();
            MemcpyAsync.memcpyAsync(stage, channel, 0, 8192, pipe);
            pipe.producerCommit();
        }, pipe -> {
            log.set(log.get() + "early=" + pipe.consumerWaitFor(Duration.ofMillis(100)));
            lastChunk.countDown();
            log.set(log.get() + " later=" + pipe.consumerWaitFor(Duration.ofSeconds(10)));
            assertContent(stage, file, 0, 8192);
            pipe.consumerRelease();
        });
        assertEquals("early=false later=true", log.get());
    }

    @Test
    void copiesLandingOutOfOrderCompleteTheStageOnlyWhenAllHaveLanded() {
        byte[] file = pattern(8192, 11);
        GatedFileChannel channel = new GatedFileChannel(file);
        CountDownLatch first = channel.gate(0);
        MemorySegment stage = Arena.ofAuto().allocate(8192);
        PipelineSharedState state = state(1);
        AtomicReference<String> log = new AtomicReference<>("");
        producerConsumer(state, pipe -> {
            pipe.producerAcquire();
            MemcpyAsync.memcpyAsync(stage.asSlice(0, 4096), channel, 0, 4096, pipe);      // held back
            MemcpyAsync.memcpyAsync(stage.asSlice(4096), channel, 4096, 4096, pipe);      // lands first
            pipe.producerCommit();
        }, pipe -> {
            awaitLanded(channel, 4096);
            assertContent(stage.asSlice(4096), file, 4096, 8192);         // the second copy has landed...
            log.set("early=" + pipe.consumerWaitFor(Duration.ofMillis(50)));   // ...but the stage is incomplete
            first.countDown();
            pipe.consumerWait();
            assertContent(stage, file, 0, 8192);
            log.set(log.get() + " done");
            pipe.consumerRelease();
        });
        assertEquals("early=false done", log.get());
    }

    @Test
    void aFailingFileSourceFailsItsStageOnlyAndThePipelineClosesCleanly() {
        byte[] file = pattern(4 * 4096, 5);
        GatedFileChannel channel = new GatedFileChannel(file);
        channel.failFrom(4096);                     // batch 1 (bytes 4096..8191) fails; batches 2, 3 do not exist
        MemorySegment[] stages = {Arena.ofAuto().allocate(4096), Arena.ofAuto().allocate(4096)};
        PipelineSharedState state = state(2);
        AtomicReference<String> outcomes = new AtomicReference<>("");
        producerConsumer(state, pipe -> {
            for (int b = 0; b < 3; b++) {
                pipe.producerAcquire();
                if (b == 2) {
                    channel.failFrom(Long.MAX_VALUE);       // the source recovers for batch 2
                }
                MemcpyAsync.memcpyAsync(stages[b % 2], channel, b == 2 ? 0 : 4096L * b, 4096, pipe);
                pipe.producerCommit();
            }
        }, pipe -> {
            for (int b = 0; b < 3; b++) {
                try {
                    pipe.consumerWait();
                    outcomes.set(outcomes.get() + "ok ");
                } catch (StageFailedException e) {
                    assertEquals(1, e.stage());
                    assertEquals(1, e.batch());
                    assertInstanceOf(IOException.class, e.getCause());
                    assertTrue(e.getCause().getMessage().contains("injected read error at position 4096"));
                    outcomes.set(outcomes.get() + "failed ");
                }
                pipe.consumerRelease();                     // the failed stage is still the consumer's to release
            }
        });
        assertEquals("ok failed ok ", outcomes.get());
    }

    @Test
    void aFileThatEndsEarlyIsAnEofFailure(@TempDir Path dir) throws IOException {
        Path path = dir.resolve("short.bin");
        Files.write(path, pattern(1000, 1));
        MemorySegment stage = Arena.ofAuto().allocate(4096);
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            Pipeline pipe = Pipeline.make(ENGINE);
            pipe.producerAcquire();
            MemcpyAsync.memcpyAsync(stage, channel, 0, 4096, pipe);
            pipe.producerCommit();
            StageFailedException e = assertThrows(StageFailedException.class, pipe::consumerWait);
            assertInstanceOf(EOFException.class, e.getCause());
            assertEquals(-1, e.stage());
            pipe.consumerRelease();
        }
    }

    @Test
    void realFileReadsRoundTrip(@TempDir Path dir) throws IOException {
        byte[] content = pattern(256 * 1024, 9);
        Path path = dir.resolve("data.bin");
        Files.write(path, content);
        MemorySegment[] stages = {Arena.ofAuto().allocate(64 * 1024), Arena.ofAuto().allocate(64 * 1024)};
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            PipelineSharedState state = state(2);
            producerConsumer(state, pipe -> {
                for (int b = 0; b < 4; b++) {
                    pipe.producerAcquire();
                    MemcpyAsync.memcpyAsync(stages[b % 2], channel, 64 * 1024L * b, 64 * 1024, pipe);
                    pipe.producerCommit();
                }
            }, pipe -> {
                for (int b = 0; b < 4; b++) {
                    pipe.consumerWait();
                    assertContent(stages[b % 2], content, 64 * 1024 * b, 64 * 1024 * (b + 1));
                    pipe.consumerRelease();
                }
            });
        }
    }

    @Test
    void threadScopeWaitPriorWaitsForExactlyTheOlderBatches() throws Exception {
        byte[] file = pattern(5 * 4096, 2);
        GatedFileChannel channel = new GatedFileChannel(file);
        CountDownLatch[] gates = new CountDownLatch[5];
        for (int b = 0; b < 5; b++) {
            gates[b] = channel.gate(4096L * b);
        }
        MemorySegment[] dst = new MemorySegment[5];
        AtomicReference<String> log = new AtomicReference<>("");
        // a worker per batch: a held-back read must not keep the newer batches from landing
        try (CopyEngine engine = CopyEngine.builder().workers(5).inlineThreshold(0).minChunk(4096)
                .name("wait-prior-test").build()) {
            Thread consumerThread = Thread.ofPlatform().start(() -> {
                Pipeline pipe = Pipeline.make(engine);
                for (int b = 0; b < 5; b++) {
                    dst[b] = Arena.ofAuto().allocate(4096);
                    pipe.producerAcquire();
                    MemcpyAsync.memcpyAsync(dst[b], channel, 4096L * b, 4096, pipe);
                    pipe.producerCommit();
                }
                Pipeline.consumerWaitPrior(pipe, 2);        // batches 0..2
                log.set("prior2 ");
                Pipeline.consumerWaitPrior(pipe, 0);        // batches 3, 4
                log.set(log.get() + "prior0");
            });
            Teams.awaitParked(consumerThread, "consumerWaitPrior");
            assertEquals("", log.get());
            gates[3].countDown();
            gates[4].countDown();
            awaitLanded(channel, 4096L * 3);
            awaitLanded(channel, 4096L * 4);
            Teams.awaitParked(consumerThread, "consumerWaitPrior");
            assertEquals("", log.get(), "the newest batches landing does not satisfy waitPrior(2)");
            for (int b = 0; b < 3; b++) {
                gates[b].countDown();
            }
            consumerThread.join(Teams.PATIENCE.toMillis());
            assertFalse(consumerThread.isAlive(), "waitPrior returns once every batch has landed");
        }
        assertEquals("prior2 prior0", log.get());
        for (int b = 0; b < 5; b++) {
            assertContent(dst[b], file, 4096 * b, 4096 * (b + 1));
        }
    }

    @Test
    void producerCommitWithBarrierHoldsThePhaseUntilTheCopiesLand() throws Exception {
        byte[] file = pattern(4096, 4);
        GatedFileChannel channel = new GatedFileChannel(file);
        CountDownLatch gate = channel.gate(0);
        MemorySegment dst = Arena.ofAuto().allocate(4096);
        Barrier barrier = new Barrier(1);
        Pipeline pipe = Pipeline.make(ENGINE);
        pipe.producerAcquire();
        MemcpyAsync.memcpyAsync(dst, channel, 0, 4096, pipe);
        Pipeline.producerCommit(pipe, barrier);         // not committed: only the copies are tied
        long token = barrier.arrive();                  // the only party arrives...
        assertFalse(barrier.tryWaitParity(false, Duration.ofMillis(50)), "...but the copy has not landed");
        gate.countDown();
        barrier.await(token);
        assertContent(dst, file, 0, 4096);
        assertEquals(1, barrier.expected(), "net zero: later phases expect what they did");
        pipe.producerCommit();
        pipe.consumerWait();
        pipe.consumerRelease();
    }

    @Test
    void barrierFlavourCopiesAreTiedToTheCurrentPhase() {
        int n = 1 << 20;                                    // above the shared engine's inline threshold
        byte[] source = pattern(n, 8);
        MemorySegment dst = Arena.ofAuto().allocate(n);
        Barrier barrier = new Barrier(1);
        assertEquals(AsyncContractFulfillment.ASYNC,
            MemcpyAsync.memcpyAsync(dst, MemorySegment.ofArray(source), n, barrier));
        barrier.arriveAndWait();
        assertContent(dst, source, n - 4096, n);
        assertEquals(1, barrier.expected());
    }

    @Test
    void unifiedPipelineWithCooperativeAsyncCopies() {
        int threads = 4;
        int perBatch = 64 * 1024;
        byte[] source = pattern(perBatch * 10, 6);
        MemorySegment src = MemorySegment.ofArray(source);
        MemorySegment[] stages = {Arena.ofAuto().allocate(perBatch), Arena.ofAuto().allocate(perBatch)};
        PipelineSharedState state = state(2);
        AtomicInteger verified = new AtomicInteger();
        Teams.run(threads, g -> {
            Pipeline pipe = Pipeline.make(g, state);
            for (int b = 0; b < 10; b++) {
                pipe.producerAcquire();
                MemcpyAsync.memcpyAsync(g, stages[b % 2], src.asSlice((long) perBatch * b), perBatch, pipe);
                pipe.producerCommit();
                pipe.consumerWait();
                assertContent(stages[b % 2].asSlice(perBatch - 16), source, perBatch * (b + 1) - 16,
                    perBatch * (b + 1));
                verified.incrementAndGet();
                pipe.consumerRelease();
            }
            pipe.quit();
        });
        assertEquals(threads * 10, verified.get());
    }
}
