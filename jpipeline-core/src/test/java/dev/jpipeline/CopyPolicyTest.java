package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.copy.CopyEngine;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Where a pipeline's large copies and its file reads run ({@link CopyPolicy}), and that the data arrives (or a
 * failed read fails the stage) whichever it is.
 */
class CopyPolicyTest {

    /** Copies above 4 KiB go to the engine unless the policy says otherwise. */
    private static final CopyEngine ENGINE = CopyEngine.builder().workers(2).inlineThreshold(4096).minChunk(4096)
        .name("copy-policy-test").build();
    private static final int BYTES = 1 << 16;

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
}
