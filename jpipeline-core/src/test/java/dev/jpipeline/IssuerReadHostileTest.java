package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.copy.CopyEngine;
import dev.jpipeline.prefetch.ChunkFailedException;
import dev.jpipeline.prefetch.Prefetch;
import dev.jpipeline.trace.StageOperation;
import dev.jpipeline.trace.TraceEvent;
import dev.jpipeline.trace.Tracer;
import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hostile review of file reads on the issuing thread ({@link CopyPolicy#ON_ISSUING_THREAD}): failing reads in
 * every kind of pipeline, interrupts, a closed engine, tracing, checked mode, the pooled submissions.
 */
@Timeout(60)
class IssuerReadHostileTest {

    private static final int BYTES = 8192;
    private static final CopyEngine ENGINE = CopyEngine.builder().workers(2).inlineThreshold(4096)
        .name("issuer-read-hostile").build();

    @TempDir
    Path dir;

    @AfterAll
    static void closeEngine() {
        ENGINE.close();
    }

    private static PipelineSharedState onIssuer(int stages) {
        return PipelineSharedState.builder(ThreadScope.BLOCK, stages).copyEngine(ENGINE)
            .copyPolicy(CopyPolicy.ON_ISSUING_THREAD).build();
    }

    private static byte[] data(int n, long seed) {
        byte[] d = new byte[n];
        new Random(seed).nextBytes(d);
        return d;
    }

    /**
     * A channel whose positional read blocks, as a read of a slow device does, until its thread is interrupted:
     * like the JDK's FileChannel it is an interruptible channel (begin/end), so the interrupt closes it and the
     * read throws ClosedByInterruptException, the thread's interrupt status left set.
     */
    static final class BlockingChannel extends PositionalReadChannel {
        final CountDownLatch entered = new CountDownLatch(1);

        @Override
        public int read(ByteBuffer dst, long position) throws IOException {
            boolean completed = false;
            begin();
            try {
                entered.countDown();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (!Thread.currentThread().isInterrupted() && isOpen() && System.nanoTime() < deadline) {
                    LockSupport.parkNanos(this, 1_000_000);
                }
                if (isOpen() && !Thread.currentThread().isInterrupted()) {
                    throw new IOException("test channel: never interrupted");
                }
            } finally {
                end(completed);
            }
            return 0;
        }

        @Override
        public long size() {
            return BYTES;
        }
    }

    @Test
    void anInterruptThatArrivesDuringAReadOnTheIssuingThreadIsNotLost() throws Exception {
        BlockingChannel channel = new BlockingChannel();
        Thread me = Thread.currentThread();
        Thread interrupter = Thread.ofPlatform().start(() -> {
            try {
                if (channel.entered.await(20, TimeUnit.SECONDS)) {
                    me.interrupt();
                }
            } catch (InterruptedException ignored) {
                // the test fails on its own
            }
        });
        boolean kept;
        AsyncContractFulfillment returned;
        StageFailedException failed;
        try (Arena arena = Arena.ofShared()) {
            MemorySegment stage = arena.allocate(BYTES);
            Pipeline pipe = Pipeline.make(ThreadTeam.ofPlatform(1).member(0), onIssuer(1));
            pipe.producerAcquire();
            try {
                returned = MemcpyAsync.memcpyAsync(stage, channel, 0, BYTES, pipe);
            } finally {
                kept = Thread.interrupted();
            }
            pipe.producerCommit();
            failed = assertThrows(StageFailedException.class, pipe::consumerWait);
            pipe.consumerRelease();
            pipe.quit();
        } finally {
            interrupter.join(20_000);
            Thread.interrupted();
        }
        assertEquals(AsyncContractFulfillment.NONE, returned);
        assertInstanceOf(ClosedByInterruptException.class, failed.getCause(), "the read failed its stage loudly");
        assertFalse(channel.isOpen(), "the interrupt closed the channel (documented)");
        assertTrue(kept, "an interrupt that arrived during the read must stay the thread's: a producer that cancels "
            + "on interrupt (producerAcquireInterruptibly) would otherwise go on with a closed channel");
    }

    @Test
    void aCancelByInterruptDuringAReadReachesTheNextInterruptibleAcquire() throws Exception {
        BlockingChannel channel = new BlockingChannel();
        Map<String, Object> seen = new ConcurrentHashMap<>();
        PipelineSharedState state = onIssuer(2);
        try (Arena arena = Arena.ofShared()) {
            MemorySegment stages = arena.allocate(2L * BYTES);
            Teams.runSeeingPeers(2, (g, threads) -> {
                Pipeline pipe = Pipeline.make(g, state, 1);
                if (g.threadRank() == 0) {
                    try {
                        for (long b = 0; b < 4; b++) {
                            pipe.producerAcquireInterruptibly();
                            MemcpyAsync.memcpyAsync(stages.asSlice((b % 2) * BYTES, BYTES), channel, b * BYTES,
                                BYTES, pipe);
                            pipe.producerCommit();
                        }
                        seen.put("producer", "never cancelled");
                    } catch (InterruptedException e) {
                        seen.put("producer", "cancelled");
                    } finally {
                        Thread.interrupted();
                    }
                } else {
                    Teams.await(channel.entered, "the producer's read");
                    threads[0].interrupt();
                    try {
                        pipe.consumerWait();
                        seen.put("consumer", "no failure");
                    } catch (StageFailedException e) {
                        seen.put("consumer", e.getCause());
                    }
                    pipe.consumerRelease();
                    try {
                        for (int b = 1; b < 4; b++) {       // until the producer is gone (or every batch)
                            try {
                                pipe.consumerWait();
                            } catch (StageFailedException e) {
                                seen.merge("later failures", 1, (x, y) -> (Integer) x + 1);
                            }
                            pipe.consumerRelease();
                        }
                    } catch (IllegalStateException producerGone) {
                        seen.put("producer gone", true);
                    }
                }
                pipe.quit();
            });
        }
        assertInstanceOf(ClosedByInterruptException.class, seen.get("consumer"));
        assertEquals("cancelled", seen.get("producer"), seen.toString());
    }

    @Test
    void aReadFailureOfEveryKindFailsTheStageOnTheIssuingThread() throws IOException {
        // EOF: the file ends first
        GatedFileChannel shortFile = new GatedFileChannel(new byte[100]);
        assertInstanceOf(EOFException.class, readOneStageUnified(shortFile));
        // a channel that makes no progress
        PositionalReadChannel zero = new PositionalReadChannel() {
            @Override
            public int read(ByteBuffer dst, long position) {
                return 0;
            }

            @Override
            public long size() {
                return BYTES;
            }
        };
        Throwable stuck = readOneStageUnified(zero);
        assertInstanceOf(IOException.class, stuck);
        assertTrue(stuck.getMessage().contains("no progress"), stuck.getMessage());
        // a channel closed before the read
        FileChannel closed = FileChannel.open(java.nio.file.Files.write(dir.resolve("closed.bin"), new byte[BYTES]));
        closed.close();
        assertInstanceOf(ClosedChannelException.class, readOneStageUnified(closed));
        // a channel that throws an unchecked exception
        PositionalReadChannel buggy = new PositionalReadChannel() {
            @Override
            public int read(ByteBuffer dst, long position) {
                throw new UnsupportedOperationException("buggy channel");
            }

            @Override
            public long size() {
                return BYTES;
            }
        };
        assertInstanceOf(UnsupportedOperationException.class, readOneStageUnified(buggy));
    }

    /** One unified batch read from {@code channel} on the issuing thread; the stage's failure (null: none). */
    private static Throwable readOneStageUnified(FileChannel channel) {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment stage = arena.allocate(BYTES);
            Pipeline pipe = Pipeline.make(ThreadTeam.ofPlatform(1).member(0), onIssuer(1));
            Throwable failure = null;
            for (int b = 0; b < 3; b++) {          // the stage is reused after a failure
                pipe.producerAcquire();
                assertEquals(AsyncContractFulfillment.NONE, MemcpyAsync.memcpyAsync(stage, channel, 0, BYTES, pipe));
                pipe.producerCommit();
                try {
                    pipe.consumerWait();
                } catch (StageFailedException e) {
                    failure = e.getCause();
                }
                pipe.consumerRelease();
            }
            pipe.quit();
            return failure;
        }
    }

    @Test
    void aClosedEngineRefusesAReadOnTheIssuingThreadAndTheStageStillCompletes() {
        CopyEngine engine = CopyEngine.builder().workers(1).name("closed-first").build();
        PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 1).copyEngine(engine)
            .copyPolicy(CopyPolicy.ON_ISSUING_THREAD).build();
        engine.close();
        GatedFileChannel channel = new GatedFileChannel(new byte[BYTES]);
        try (Arena arena = Arena.ofShared()) {
            MemorySegment stage = arena.allocate(BYTES);
            Pipeline pipe = Pipeline.make(ThreadTeam.ofPlatform(1).member(0), state);
            pipe.producerAcquire();
            IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> MemcpyAsync.memcpyAsync(stage, channel, 0, BYTES, pipe));
            assertTrue(e.getMessage().contains("closed"), e.getMessage());
            assertEquals(null, channel.reader(0), "nothing was read");
            pipe.producerCommit();
            pipe.consumerWait();
            pipe.consumerRelease();
            pipe.quit();
        }
    }

    @Test
    void aTracedReadOnTheIssuingThreadIsACopyEventOfItsBatch() {
        Tracer tracer = Tracer.create();
        PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 2).copyEngine(ENGINE)
            .copyPolicy(CopyPolicy.ON_ISSUING_THREAD).tracer(tracer).build();
        byte[] bytes = data(3 * BYTES, 5);
        GatedFileChannel channel = new GatedFileChannel(bytes);
        channel.failFrom(2L * BYTES);
        try (Arena arena = Arena.ofShared()) {
            MemorySegment stages = arena.allocate(2L * BYTES);
            Pipeline pipe = Pipeline.make(ThreadTeam.ofPlatform(1).member(0), state);
            for (long b = 0; b < 3; b++) {
                MemorySegment stage = stages.asSlice((b % 2) * BYTES, BYTES);
                pipe.producerAcquire();
                MemcpyAsync.memcpyAsync(stage, channel, b * BYTES, BYTES, pipe);
                pipe.producerCommit();
                if (b < 2) {
                    pipe.consumerWait();
                    assertEquals(-1L, stage.mismatch(MemorySegment.ofArray(bytes).asSlice(b * BYTES, BYTES)));
                } else {
                    assertThrows(StageFailedException.class, pipe::consumerWait);
                }
                pipe.consumerRelease();
            }
            pipe.quit();
        }
        List<TraceEvent> copies = tracer.events().stream().filter(e -> e.operation() == StageOperation.COPY)
            .toList();
        assertEquals(List.of(0L, 1L, 2L), copies.stream().map(TraceEvent::batch).sorted().toList(), copies.toString());
        for (TraceEvent e : copies) {
            assertEquals(e.batch() % 2, e.stage());
            assertTrue(e.durationNanos() >= 0, e.toString());
        }
    }

    @Test
    void aCheckedPipelineReadsOnTheIssuingThreadAndFailsTheStage() {
        PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 2).copyEngine(ENGINE)
            .copyPolicy(CopyPolicy.ON_ISSUING_THREAD).checked(42).build();
        byte[] bytes = data(4 * BYTES, 6);
        GatedFileChannel channel = new GatedFileChannel(bytes);
        channel.failFrom(3L * BYTES);
        StringBuilder log = new StringBuilder();
        try (Arena arena = Arena.ofShared()) {
            MemorySegment stages = arena.allocate(2L * BYTES);
            Teams.run(2, g -> {
                Pipeline pipe = Pipeline.make(g, state, 1);
                for (long b = 0; b < 4; b++) {
                    MemorySegment stage = stages.asSlice((b % 2) * BYTES, BYTES);
                    if (g.threadRank() == 0) {
                        pipe.producerAcquire();
                        MemcpyAsync.memcpyAsync(stage, channel, b * BYTES, BYTES, pipe);
                        pipe.producerCommit();
                    } else {
                        try {
                            pipe.consumerWait();
                            log.append(stage.mismatch(MemorySegment.ofArray(bytes).asSlice(b * BYTES, BYTES)) == -1
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

    @Test
    void issuerReadsAndEngineReadsShareOneEngineWithoutMixingPooledSubmissions() throws Exception {
        // one engine, two pipelines at once: one reads on its producer (pooled submissions, performHere), the
        // other on the engine's workers (pooled submissions, queued): no submission may serve both at a time
        byte[] bytes = data(64 * 1024, 7);
        GatedFileChannel channel = new GatedFileChannel(bytes);
        PipelineSharedState engine = PipelineSharedState.builder(ThreadScope.BLOCK, 2).copyEngine(ENGINE)
            .copyPolicy(CopyPolicy.ON_COPY_ENGINE).build();
        Map<String, Long> bad = new ConcurrentHashMap<>();
        try (Arena arena = Arena.ofShared()) {
            MemorySegment issuerStages = arena.allocate(2L * 16 * 1024);
            MemorySegment engineStages = arena.allocate(2L * 16 * 1024);
            Thread other = Thread.ofPlatform().start(() -> ThreadTeam.ofPlatform(2).run(Teams.LIMIT,
                g -> runPair(g, engine, engineStages, channel, bytes, "engine", bad)));
            PipelineSharedState issuer = onIssuer(2);
            ThreadTeam.ofPlatform(2).run(Teams.LIMIT,
                g -> runPair(g, issuer, issuerStages, channel, bytes, "issuer", bad));
            other.join(Teams.LIMIT.toMillis());
            assertFalse(other.isAlive());
        }
        assertEquals(Map.of(), bad);
    }

    private static void runPair(Group g, PipelineSharedState state, MemorySegment stages, FileChannel channel,
                                byte[] bytes, String name, Map<String, Long> bad) {
        int piece = (int) (stages.byteSize() / 2);
        Pipeline pipe = Pipeline.make(g, state, 1);
        int pieces = bytes.length / piece;
        for (long b = 0; b < 2000; b++) {
            int p = (int) (b % pieces);
            MemorySegment stage = stages.asSlice((b % 2) * piece, piece);
            if (g.threadRank() == 0) {
                pipe.producerAcquire();
                MemcpyAsync.memcpyAsync(stage, channel, (long) p * piece, piece, pipe);
                pipe.producerCommit();
            } else {
                pipe.consumerWait();
                if (stage.mismatch(MemorySegment.ofArray(bytes).asSlice((long) p * piece, piece)) != -1) {
                    bad.put(name, b);
                }
                pipe.consumerRelease();
            }
        }
        pipe.quit();
    }

    @Test
    void aFailedIssuerReadInARegionLeavesNoCopyCountedSoTheNextMakeGoesOn() throws Exception {
        try (SharedRegion region = SharedRegion.create(dir.resolve("r"), 1 << 16, SharedRegion.Sharing.OWNER)) {
            MemorySegment stages = region.data().asSlice(PipelineSharedState.regionBytes(2, 2), 2L * 4096);
            GatedFileChannel channel = new GatedFileChannel(data(3 * 4096, 8));
            channel.failFrom(4096);
            Group alone = region.join(1, 0);
            for (int run = 0; run < 2; run++) {
                PipelineSharedState state = PipelineSharedState.builder(ThreadScope.SYSTEM, 2).in(region, 0)
                    .copyPolicy(CopyPolicy.ON_ISSUING_THREAD).build();
                Pipeline pipe = Pipeline.make(alone, state);
                StringBuilder log = new StringBuilder();
                for (int b = 0; b < 3; b++) {
                    pipe.producerAcquire();
                    assertEquals(AsyncContractFulfillment.NONE, MemcpyAsync.memcpyAsync(
                        stages.asSlice((b % 2) * 4096L, 4096), channel, 4096L * b, 4096, pipe));
                    pipe.producerCommit();
                    try {
                        pipe.consumerWait();
                        log.append("ok ");
                    } catch (StageFailedException e) {
                        log.append("failed ");
                    }
                    pipe.consumerRelease();
                }
                assertTrue(pipe.quit());
                assertEquals("ok failed failed ", log.toString());
            }
        }
    }

    @Test
    void aRegionStageFailsEvenWhenTheReadsExceptionCannotSayWhatItIs() throws Exception {
        // a user's channel whose exception throws from getMessage(): a region records failures as text
        PositionalReadChannel hostile = new PositionalReadChannel() {
            @Override
            public int read(ByteBuffer dst, long position) throws IOException {
                throw new IOException() {
                    @Override
                    public String getMessage() {
                        throw new IllegalStateException("hostile message");
                    }
                };
            }

            @Override
            public long size() {
                return 4096;
            }
        };
        // (on the engine the same record is written by the worker, which then also left the stage hanging; the
        // issuing thread's read is tested, which has landed when memcpyAsync returns)
        try (SharedRegion region = SharedRegion.create(dir.resolve("r"), 1 << 16, SharedRegion.Sharing.OWNER)) {
            MemorySegment stages = region.data().asSlice(PipelineSharedState.regionBytes(2, 2), 2L * 4096);
            Pipeline pipe = Pipeline.make(region.join(1, 0), PipelineSharedState.builder(ThreadScope.SYSTEM, 2)
                .in(region, 0).copyPolicy(CopyPolicy.ON_ISSUING_THREAD).build());
            pipe.producerAcquire();
            assertEquals(AsyncContractFulfillment.NONE,
                MemcpyAsync.memcpyAsync(stages.asSlice(0, 4096), hostile, 0, 4096, pipe), "must not throw");
            pipe.producerCommit();
            StageFailedException failed = assertThrows(StageFailedException.class,
                () -> pipe.consumerWaitFor(java.time.Duration.ofSeconds(20)), "the stage must fail, not hang");
            assertTrue(failed.getCause().getMessage().contains("its toString() threw"),
                failed.getCause().getMessage());
            pipe.consumerRelease();
            assertTrue(pipe.quit());
        }
    }

    @Test
    void theParallelFormWithManyConsumersAndAFailingReadNamesTheLowestChunk() {
        byte[] bytes = data(40 * 1000, 9);
        GatedFileChannel channel = new GatedFileChannel(bytes);
        channel.failFrom(17_000);
        try (CopyEngine engine = CopyEngine.builder().workers(1).name("pp-hostile").build()) {
            for (int consumers : new int[] {1, 3, 6}) {
                ChunkFailedException e = assertThrows(ChunkFailedException.class, () -> Prefetch.from(channel)
                    .chunk(1000).stages(2).copyEngine(engine).parallel(2, consumers)
                    .reduce(0L, s -> s.byteSize(), Long::sum));
                assertEquals(17, e.chunk(), e.toString());
                assertInstanceOf(IOException.class, e.getCause());
            }
        }
    }
}
