package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.copy.CopyEngine;
import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Where a pipeline's large copies and its file reads run ({@link CopyPolicy}), and that the data arrives (or a
 * failed read fails the stage) whichever it is; and the hostile review of reads on the issuing thread
 * ({@link CopyPolicy#ON_ISSUING_THREAD}): failing reads of every kind, interrupts, a closed engine, the pooled
 * submissions shared with the engine's own reads.
 */
class CopyPolicyTest {

    /** Copies above 4 KiB go to the engine unless the policy says otherwise. */
    private static final CopyEngine ENGINE = CopyEngine.builder().workers(2).inlineThreshold(4096).minChunk(4096)
        .name("copy-policy-test").build();
    private static final int BYTES = 1 << 16;
    /** What the hostile cases of reads on the issuing thread read a stage at a time. */
    private static final int READ_BYTES = 8192;

    @AfterAll
    static void closeEngine() {
        ENGINE.close();
    }

    /**
     * Rank 0 copies a 64 KiB stage with {@code memcpyAsync} and commits; every consuming rank checks the data.
     * @return what memcpyAsync returned to each rank that copied
     */
    private static Map<Integer, AsyncContractFulfillment> copyOneStage(CopyPolicy policy, boolean unified) {
        return copyOneStage(policy, unified, null, new Thread[1]);
    }

    /**
     * {@link #copyOneStage(CopyPolicy, boolean)}, reading the stage from {@code file} (which holds the same bytes)
     * when it is not null; rank 0's thread goes to {@code copier}.
     */
    private static Map<Integer, AsyncContractFulfillment> copyOneStage(CopyPolicy policy, boolean unified,
                                                                       FileChannel file, Thread[] copier) {
        PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 2).copyEngine(ENGINE)
            .copyPolicy(policy).build();
        Map<Integer, AsyncContractFulfillment> results = new ConcurrentHashMap<>();
        try (Arena arena = Arena.ofShared()) {
            MemorySegment src = arena.allocate(BYTES);
            for (int i = 0; i < BYTES; i++) {
                src.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 7 + 3));
            }
            MemorySegment stage = arena.allocate(BYTES);
            Teams.run(2, g -> {
                Pipeline pipe = unified ? Pipeline.make(g, state) : Pipeline.make(g, state, 1);
                boolean copies = g.threadRank() == 0;
                if (copies || unified) {
                    pipe.producerAcquire();
                    if (copies) {
                        copier[0] = Thread.currentThread();
                        results.put(g.threadRank(), file == null ? MemcpyAsync.memcpyAsync(stage, src, BYTES, pipe)
                            : MemcpyAsync.memcpyAsync(stage, file, 0, BYTES, pipe));
                    }
                    pipe.producerCommit();
                }
                if (!copies || unified) {
                    pipe.consumerWait();
                    assertEquals(-1L, stage.mismatch(src), "the stage holds the copy");
                    pipe.consumerRelease();
                }
                pipe.quit();
            });
        }
        return results;
    }

    @Test
    void onTheIssuingThreadTheCopyHasLandedWhenMemcpyAsyncReturns() {
        assertEquals(AsyncContractFulfillment.NONE, copyOneStage(CopyPolicy.ON_ISSUING_THREAD, false).get(0));
        assertEquals(AsyncContractFulfillment.NONE, copyOneStage(CopyPolicy.ON_ISSUING_THREAD, true).get(0));
    }

    @Test
    void onTheCopyEngineALargeCopyIsHandedOff() {
        assertEquals(AsyncContractFulfillment.ASYNC, copyOneStage(CopyPolicy.ON_COPY_ENGINE, false).get(0));
        assertEquals(AsyncContractFulfillment.ASYNC, copyOneStage(CopyPolicy.ON_COPY_ENGINE, true).get(0));
    }

    @Test
    void autoCopiesOnAProducerOnlyThreadWhenNoCoreIsSpare() {
        boolean fewCores = Runtime.getRuntime().availableProcessors() <= 4;     // twice the pipeline's 2 threads
        assertEquals(fewCores ? AsyncContractFulfillment.NONE : AsyncContractFulfillment.ASYNC,
            copyOneStage(CopyPolicy.AUTO, false).get(0), "a partitioned pipeline's producer");
        assertEquals(AsyncContractFulfillment.ASYNC, copyOneStage(CopyPolicy.AUTO, true).get(0),
            "a unified thread computes too: its copies go to the engine whatever the cores");
    }

    /** A file of the bytes {@link #copyOneStage} copies. */
    private static GatedFileChannel file() {
        byte[] data = new byte[BYTES];
        for (int i = 0; i < BYTES; i++) {
            data[i] = (byte) (i * 7 + 3);
        }
        return new GatedFileChannel(data);
    }

    @Test
    void fileReadsFollowThePolicyToo() {
        Thread[] copier = new Thread[1];
        GatedFileChannel onIssuer = file();
        assertEquals(AsyncContractFulfillment.NONE,
            copyOneStage(CopyPolicy.ON_ISSUING_THREAD, false, onIssuer, copier).get(0));
        assertSame(copier[0], onIssuer.reader(0), "the producer read the file itself");
        GatedFileChannel onEngine = file();
        assertEquals(AsyncContractFulfillment.ASYNC,
            copyOneStage(CopyPolicy.ON_COPY_ENGINE, false, onEngine, copier).get(0));
        assertNotSame(copier[0], onEngine.reader(0));
        assertTrue(onEngine.reader(0).getName().startsWith("copy-policy-test"), onEngine.reader(0).getName());
        assertEquals(AsyncContractFulfillment.ASYNC, copyOneStage(CopyPolicy.AUTO, false, file(), copier).get(0),
            "AUTO keeps reads on the engine, whatever the cores: a read may wait on a device");
    }

    @Test
    void aReadThatFailsOnTheIssuingThreadFailsItsStageNotTheCall() {
        PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 2).copyEngine(ENGINE)
            .copyPolicy(CopyPolicy.ON_ISSUING_THREAD).build();
        GatedFileChannel failing = file();
        failing.failFrom(0);
        Map<String, Object> seen = new ConcurrentHashMap<>();
        try (Arena arena = Arena.ofShared()) {
            MemorySegment stage = arena.allocate(BYTES);
            Teams.run(2, g -> {
                Pipeline pipe = Pipeline.make(g, state, 1);
                if (g.threadRank() == 0) {
                    pipe.producerAcquire();
                    seen.put("returned", MemcpyAsync.memcpyAsync(stage, failing, 0, BYTES, pipe));
                    pipe.producerCommit();
                } else {
                    seen.put("consumer", assertThrows(StageFailedException.class, pipe::consumerWait));
                    pipe.consumerRelease();
                }
                pipe.quit();
            });
        }
        assertEquals(AsyncContractFulfillment.NONE, seen.get("returned"), "the read ran, and failed, on return");
        Throwable cause = ((StageFailedException) seen.get("consumer")).getCause();
        assertInstanceOf(IOException.class, cause);
        assertTrue(cause.getMessage().contains("injected read error at position 0"), cause.getMessage());
    }

    @Test
    void aPendingInterruptNeitherClosesTheChannelNorIsLostOnARead(@TempDir Path dir) throws IOException {
        byte[] data = new byte[BYTES];
        new java.util.Random(3).nextBytes(data);
        Path path = Files.write(dir.resolve("data.bin"), data);
        PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 1).copyEngine(ENGINE)
            .copyPolicy(CopyPolicy.ON_ISSUING_THREAD).build();
        try (FileChannel channel = FileChannel.open(path); Arena arena = Arena.ofShared()) {
            MemorySegment stage = arena.allocate(BYTES);
            Pipeline pipe = Pipeline.make(ThreadTeam.ofPlatform(1).member(0), state);
            pipe.producerAcquire();
            Thread.currentThread().interrupt();
            try {
                assertEquals(AsyncContractFulfillment.NONE, MemcpyAsync.memcpyAsync(stage, channel, 0, BYTES, pipe));
            } finally {
                assertTrue(Thread.interrupted(), "the interrupt status is kept");
            }
            assertTrue(channel.isOpen(), "an interrupt pending before the read must not close the user's channel");
            assertEquals(-1L, stage.mismatch(MemorySegment.ofArray(data)), "the read landed on return");
            pipe.producerCommit();
            pipe.quit();
        }
    }

    @Test
    void aSmallCopyRunsInlineWhateverThePolicy() {
        PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 1).copyEngine(ENGINE)
            .copyPolicy(CopyPolicy.ON_COPY_ENGINE).build();
        try (Arena arena = Arena.ofShared()) {
            MemorySegment src = arena.allocate(64).fill((byte) 7);
            MemorySegment dst = arena.allocate(64);
            Pipeline pipe = Pipeline.make(ThreadTeam.ofPlatform(1).member(0), state);
            pipe.producerAcquire();
            assertEquals(AsyncContractFulfillment.NONE, MemcpyAsync.memcpyAsync(dst, src, 64, pipe),
                "64 bytes, below the engine's 4 KiB inline threshold");
            assertEquals(-1L, dst.mismatch(src), "landed on return");
            pipe.producerCommit();
            pipe.quit();
        }
    }

    @Test
    void confinedSegmentsAreRefusedBeforeAnyPolicyApplies() {
        PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 1).copyEngine(ENGINE)
            .copyPolicy(CopyPolicy.ON_ISSUING_THREAD).build();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment src = arena.allocate(64);
            MemorySegment dst = arena.allocate(64);
            Pipeline pipe = Pipeline.make(ThreadTeam.ofPlatform(1).member(0), state);
            pipe.producerAcquire();
            // even where the issuing thread would copy itself: the rule does not depend on who copies
            assertThrows(IllegalArgumentException.class, () -> MemcpyAsync.memcpyAsync(dst, src, 64, pipe));
            pipe.quit();
        }
    }

    @Test
    void thePolicyIsRequired() {
        assertThrows(NullPointerException.class,
            () -> PipelineSharedState.builder(ThreadScope.BLOCK, 1).copyPolicy(null));
        assertEquals(CopyPolicy.AUTO, PipelineSharedState.create(ThreadScope.BLOCK, 1).copyPolicy());
    }

    /**
     * A channel whose positional read blocks, as a read of a slow device does, until its thread is interrupted:
     * like the JDK's FileChannel it is an interruptible channel (begin/end), so the interrupt closes it and the
     * read throws ClosedByInterruptException, the thread's interrupt status left set.
     */
    private static final class BlockingChannel extends PositionalReadChannel {
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
            return READ_BYTES;
        }
    }

    @Test
    @Timeout(60)
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
            MemorySegment stage = arena.allocate(READ_BYTES);
            Pipeline pipe = Pipeline.make(ThreadTeam.ofPlatform(1).member(0), onIssuer(1));
            pipe.producerAcquire();
            try {
                returned = MemcpyAsync.memcpyAsync(stage, channel, 0, READ_BYTES, pipe);
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
    @Timeout(60)
    void aCancelByInterruptDuringAReadReachesTheNextInterruptibleAcquire() throws Exception {
        BlockingChannel channel = new BlockingChannel();
        Map<String, Object> seen = new ConcurrentHashMap<>();
        PipelineSharedState state = onIssuer(2);
        try (Arena arena = Arena.ofShared()) {
            MemorySegment stages = arena.allocate(2L * READ_BYTES);
            Teams.runSeeingPeers(2, (g, threads) -> {
                Pipeline pipe = Pipeline.make(g, state, 1);
                if (g.threadRank() == 0) {
                    try {
                        for (long b = 0; b < 4; b++) {
                            pipe.producerAcquireInterruptibly();
                            MemcpyAsync.memcpyAsync(stages.asSlice((b % 2) * READ_BYTES, READ_BYTES), channel,
                                b * READ_BYTES, READ_BYTES, pipe);
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
    @Timeout(60)
    void aReadFailureOfEveryKindFailsTheStageOnTheIssuingThread(@TempDir Path dir) throws IOException {
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
                return READ_BYTES;
            }
        };
        Throwable stuck = readOneStageUnified(zero);
        assertInstanceOf(IOException.class, stuck);
        assertTrue(stuck.getMessage().contains("no progress"), stuck.getMessage());
        // a channel closed before the read
        FileChannel closed = FileChannel.open(Files.write(dir.resolve("closed.bin"), new byte[READ_BYTES]));
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
                return READ_BYTES;
            }
        };
        assertInstanceOf(UnsupportedOperationException.class, readOneStageUnified(buggy));
    }

    /** One unified batch read from {@code channel} on the issuing thread; the stage's failure (null: none). */
    private static Throwable readOneStageUnified(FileChannel channel) {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment stage = arena.allocate(READ_BYTES);
            Pipeline pipe = Pipeline.make(ThreadTeam.ofPlatform(1).member(0), onIssuer(1));
            Throwable failure = null;
            for (int b = 0; b < 3; b++) {          // the stage is reused after a failure
                pipe.producerAcquire();
                assertEquals(AsyncContractFulfillment.NONE,
                    MemcpyAsync.memcpyAsync(stage, channel, 0, READ_BYTES, pipe));
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
    @Timeout(60)
    void aClosedEngineRefusesAReadOnTheIssuingThreadAndTheStageStillCompletes() {
        CopyEngine engine = CopyEngine.builder().workers(1).name("closed-first").build();
        PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 1).copyEngine(engine)
            .copyPolicy(CopyPolicy.ON_ISSUING_THREAD).build();
        engine.close();
        GatedFileChannel channel = new GatedFileChannel(new byte[READ_BYTES]);
        try (Arena arena = Arena.ofShared()) {
            MemorySegment stage = arena.allocate(READ_BYTES);
            Pipeline pipe = Pipeline.make(ThreadTeam.ofPlatform(1).member(0), state);
            pipe.producerAcquire();
            IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> MemcpyAsync.memcpyAsync(stage, channel, 0, READ_BYTES, pipe));
            assertTrue(e.getMessage().contains("closed"), e.getMessage());
            assertEquals(null, channel.reader(0), "nothing was read");
            pipe.producerCommit();
            pipe.consumerWait();
            pipe.consumerRelease();
            pipe.quit();
        }
    }

    @Test
    @Timeout(60)
    void issuerReadsAndEngineReadsShareOneEngineWithoutMixingPooledSubmissions() throws Exception {
        // one engine, two pipelines at once: one reads on its producer (pooled submissions, performHere), the
        // other on the engine's workers (pooled submissions, queued): no submission may serve both at a time
        byte[] bytes = TestSegments.randomBytes(64 * 1024, 7);
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

    private static PipelineSharedState onIssuer(int stages) {
        return PipelineSharedState.builder(ThreadScope.BLOCK, stages).copyEngine(ENGINE)
            .copyPolicy(CopyPolicy.ON_ISSUING_THREAD).build();
    }
}
