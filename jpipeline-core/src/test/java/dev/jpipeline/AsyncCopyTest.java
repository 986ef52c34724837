package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.jpipeline.copy.CopyEngine;
import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
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

    /**
     * Issue 8, promise 3: a copy whose shared Arena is closed before or during the copy fails its own stage only;
     * the worker is not left interrupted, and a later read on the engine and the user's channel are unharmed.
     */
    @Test
    void aSharedArenaClosedBeforeOrDuringACopyFailsThatStageOnly(@TempDir Path dir) throws IOException {
        Path path = dir.resolve("after.bin");
        byte[] content = new byte[8192];
        for (int i = 0; i < content.length; i++) {
            content[i] = (byte) (i * 13 + 1);
        }
        Files.write(path, content);
        CopyEngine engine = CopyEngine.builder().workers(1).inlineThreshold(0).name("p03-copy").build();
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            String outcome = Bounded.outcome("p03", Duration.ofSeconds(20), () -> {
                Pipeline pipe = Pipeline.make(engine);
                long size = 16 << 20;
                MemorySegment dst = Arena.ofAuto().allocate(size);
                // first, for certain: the arena closes while the one worker is held in a landing, before the copy
                Arena early = Arena.ofShared();
                MemorySegment earlySrc = early.allocate(size);
                CountDownLatch holding = new CountDownLatch(1);
                CountDownLatch closed = new CountDownLatch(1);
                engine.copy(Arena.ofAuto().allocate(64), Arena.ofAuto().allocate(64), f -> {
                    holding.countDown();
                    Teams.await(closed, "the early arena's close");
                });
                pipe.producerAcquire();
                MemcpyAsync.memcpyAsync(dst, earlySrc, size, pipe);
                pipe.producerCommit();
                Teams.await(holding, "the worker held in a landing");
                early.close();
                closed.countDown();
                try {
                    pipe.consumerWait();
                    return "a copy from an arena closed before it ran did not fail its stage";
                } catch (StageFailedException expected) {
                    pipe.consumerRelease();
                }
                // then mid-copy, as far as the JDK lets a close land there: a close during a single large copy may
                // also wait for it to end (the copy then landed whole, and its stage completes)
                for (int attempt = 0; attempt < 100; attempt++) {
                    Arena arena = Arena.ofShared();
                    byte mark = (byte) (attempt + 1);           // this attempt's bytes: not 0, not the last's
                    MemorySegment src = arena.allocate(size).fill(mark);
                    CountDownLatch next = new CountDownLatch(1);
                    // the one worker runs this small copy, then goes straight on to the large one
                    engine.copy(Arena.ofAuto().allocate(64), Arena.ofAuto().allocate(64), f -> next.countDown());
                    pipe.producerAcquire();
                    MemcpyAsync.memcpyAsync(dst, src, size, pipe);
                    pipe.producerCommit();
                    if (!next.await(5, TimeUnit.SECONDS)) {
                        return "the copy engine did not run a copy within 5 s";
                    }
                    // observed, not timed: close once the copy's first bytes have landed, at a different point of
                    // the copy each time
                    long started = System.nanoTime();
                    while (dst.get(ValueLayout.JAVA_BYTE, 0) != mark && System.nanoTime() - started < 5e9) {
                        Thread.onSpinWait();
                    }
                    for (int spin = 0; spin < (attempt % 10) * 2_000; spin++) {
                        Thread.onSpinWait();
                    }
                    arena.close();
                    try {
                        pipe.consumerWait();
                        for (long at : new long[] {0, size / 2, size - 1}) {    // the source is freed: its mark
                            if (dst.get(ValueLayout.JAVA_BYTE, at) != mark) {
                                return "attempt " + attempt + ": a stage completed with a copy that did not land "
                                    + "whole (byte " + at + ")";
                            }
                        }
                    } catch (StageFailedException e) {
                        // closed while the copy ran: its stage failed
                    }
                    pipe.consumerRelease();
                }
                AtomicReference<Boolean> workerInterrupted = new AtomicReference<>();
                CountDownLatch asked = new CountDownLatch(1);
                engine.copy(Arena.ofAuto().allocate(64), Arena.ofAuto().allocate(64), f -> {
                    workerInterrupted.set(Thread.currentThread().isInterrupted());
                    asked.countDown();
                });
                asked.await(5, TimeUnit.SECONDS);
                MemorySegment fileDst = Arena.ofAuto().allocate(8192);
                pipe.producerAcquire();
                MemcpyAsync.memcpyAsync(fileDst, channel, 0, 8192, pipe);
                pipe.producerCommit();
                String read;
                try {
                    pipe.consumerWait();
                    read = MemorySegment.ofArray(content).mismatch(fileDst) == -1 ? "ok" : "wrong bytes";
                } catch (StageFailedException e) {
                    read = "failed with " + e.getCause().getClass().getSimpleName();
                }
                pipe.consumerRelease();
                return "worker interrupted: " + workerInterrupted.get() + "; later file read " + read
                    + "; channel open: " + channel.isOpen();
            });
            assertEquals("worker interrupted: false; later file read ok; channel open: true", outcome,
                "closing a shared Arena during copies from it fails those stages only: the worker must not stay "
                    + "interrupted, a later file read on the engine must succeed, the user's channel stay open");
        } finally {
            engine.close();
        }
    }

    /** Issue 8, promise 4: a source that makes no progress fails its stage (as one that ends early does). */
    @Test
    void aReadThatMakesNoProgressFailsItsStageNamingTheChannelAndPosition() {
        List<String> outcomes = new ArrayList<>();
        CopyEngine eofEngine = CopyEngine.builder().workers(1).name("p04-eof-copy").build();
        try {
            PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 2).copyEngine(eofEngine)
                .build();
            GatedFileChannel shortFile = new GatedFileChannel(new byte[1000]);
            outcomes.add("file ends early: " + Bounded.outcome("p04-eof", Duration.ofSeconds(8), () ->
                readIntoStage(state, shortFile, 0, cause -> cause instanceof EOFException ? "EOFException" : null)));
        } finally {
            eofEngine.close();
        }
        CopyEngine engine = CopyEngine.builder().workers(1).name("p04-copy").build();
        ZeroProgressChannel stalled = new ZeroProgressChannel();
        try {
            PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 2).copyEngine(engine).build();
            outcomes.add("reads returning 0: " + Bounded.outcome("p04-zero", Duration.ofSeconds(8),
                () -> readIntoStage(state, stalled, 4096, cause -> cause instanceof IOException
                    && String.valueOf(cause.getMessage()).contains(stalled.toString())
                    && cause.getMessage().contains("4096") ? "IOException naming the channel and position" : null)));
        } finally {
            stalled.giveUp();                       // ends the worker's reads whatever happened
            engine.close();
        }
        assertEquals(List.of("file ends early: StageFailedException(EOFException)",
                "reads returning 0: StageFailedException(IOException naming the channel and position)"), outcomes,
            "a read without progress must fail its stage after a bounded number of tries; EOF still fails");
    }

    /** Reads 4096 bytes at {@code position} into a solo unified pipeline's stage and waits up to 5 s for it. */
    private static String readIntoStage(PipelineSharedState state, FileChannel channel, long position,
                                        Function<Throwable, String> expectedCause) {
        Pipeline pipe = Pipeline.make(Teams.soloGroup(), state);
        pipe.producerAcquire();
        MemcpyAsync.memcpyAsync(Arena.ofAuto().allocate(4096), channel, position, 4096, pipe);
        pipe.producerCommit();
        try {
            return pipe.consumerWaitFor(Duration.ofSeconds(5)) ? "stage completed" : "no failure within 5 s";
        } catch (StageFailedException e) {
            String cause = expectedCause.apply(e.getCause());
            return "StageFailedException(" + (cause != null ? cause : Bounded.describe(e.getCause())) + ")";
        }
    }

    /** A channel whose positional reads return 0 (no progress, not EOF) until the test gives up. */
    private static final class ZeroProgressChannel extends PositionalReadChannel {
        private volatile boolean givenUp;

        void giveUp() {
            givenUp = true;
        }

        @Override
        public int read(ByteBuffer dst, long position) throws IOException {
            if (givenUp) {
                throw new IOException("the test gave up on this channel");
            }
            return 0;
        }

        @Override
        public String toString() {
            return "ZeroProgressChannel[p04]";
        }

        @Override
        public long size() {
            return 1 << 20;
        }
    }

    /** Issue 8, promise 16: a closed engine rejects copies of every size, inline-sized ones too. */
    @Test
    void aClosedEngineRejectsCopiesOfEverySize() {
        CopyEngine engine = CopyEngine.builder().workers(1).name("p16-copy").build();
        Pipeline threadScope = Pipeline.make(engine);
        Pipeline shared = Pipeline.make(Teams.soloGroup(),
            PipelineSharedState.builder(ThreadScope.BLOCK, 2).copyEngine(engine).build());
        engine.close();
        List<String> outcomes = new ArrayList<>();
        for (long size : new long[] {64, 1 << 20}) {
            MemorySegment src = Arena.ofAuto().allocate(size);
            MemorySegment dst = Arena.ofAuto().allocate(size);
            outcomes.add("thread scope, " + size + " B: " + closedOutcome(threadScope, dst, src, size));
            outcomes.add("shared state, " + size + " B: " + closedOutcome(shared, dst, src, size));
        }
        String rejected = "IllegalStateException 'closed'";
        assertEquals(List.of("thread scope, 64 B: " + rejected, "shared state, 64 B: " + rejected,
                "thread scope, 1048576 B: " + rejected, "shared state, 1048576 B: " + rejected), outcomes,
            "a closed copy engine must reject copies of every size, inline-sized ones too");
    }

    private static String closedOutcome(Pipeline pipe, MemorySegment dst, MemorySegment src, long size) {
        pipe.producerAcquire();
        try {
            MemcpyAsync.memcpyAsync(dst, src, size, pipe);
            return "accepted";
        } catch (IllegalStateException e) {
            return String.valueOf(e.getMessage()).contains("closed") ? "IllegalStateException 'closed'"
                : "IllegalStateException: " + e.getMessage();
        }
    }

    /**
     * Hostile review of issue 8: CopySubmission.copyChunk wrapped the whole chunk with asByteBuffer(), which refuses
     * segments over 2 GiB. With one worker (the shared engine on machines with fewer than 8 cores) a chunk is the
     * whole read, so reading a 2 GiB + 4 KiB file region failed: StageFailedException caused by "Segment is too large
     * to wrap as ByteBuffer".
     * (The destination is a sparse mapped file and the channel only advances the buffer: nothing is touched.)
     */
    @Test
    void aFileReadLargerThan2GiBSucceeds() throws IOException {
        long size = (1L << 31) + 4096;
        Path file = Files.createTempFile("hostile-big", ".bin");
        try (Arena arena = Arena.ofShared();
             FileChannel backing = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE,
                 StandardOpenOption.SPARSE);
             CopyEngine engine = CopyEngine.builder().workers(1).build()) {
            MemorySegment dst = backing.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
            assertTimeoutPreemptively(Teams.LIMIT, () -> {
                Pipeline pipe = Pipeline.make(engine);
                pipe.producerAcquire();
                MemcpyAsync.memcpyAsync(dst, new SkippingChannel(size), 0, size, pipe);
                pipe.producerCommit();
                try {
                    pipe.consumerWait();
                } catch (StageFailedException e) {
                    fail("a valid 2 GiB + 4 KiB read failed: " + e.getCause(), e);
                }
                pipe.consumerRelease();
            });
        } finally {
            Files.deleteIfExists(file);
        }
    }

    /** A "file" of {@code size} bytes whose positional reads fill the buffer without touching it. */
    private static final class SkippingChannel extends PositionalReadChannel {
        private final long size;

        SkippingChannel(long size) {
            this.size = size;
        }

        @Override
        public int read(ByteBuffer dst, long position) {
            if (position >= size) {
                return -1;
            }
            int n = (int) Math.min(dst.remaining(), size - position);
            dst.position(dst.position() + n);
            return n;
        }

        @Override
        public long size() {
            return size;
        }
    }
}
