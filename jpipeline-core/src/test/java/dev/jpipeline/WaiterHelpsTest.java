package dev.jpipeline;

import static dev.jpipeline.TestSegments.pattern;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.copy.CopyEngine;
import dev.jpipeline.internal.copy.CopyWorkers;
import dev.jpipeline.prefetch.Prefetch;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.io.TempDir;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A waiting thread helps (issue 25): a thread that waits for a phase whose copy no worker has started performs the
 * copy itself, so that a busy machine (a worker that waits a time slice to run) never leaves the thread that needs
 * the data idle. Every test holds the engine's workers in gated reads that the test controls, observed to have
 * started, so that only the waiter can perform the copy: without helping, each wait would hang until the gates
 * open (the tests open them only after the wait, bounded).
 */
class WaiterHelpsTest {

    private static final long MIB = 1 << 20;

    @Test
    void aThreadScopeWaitPerformsTheCopyThatNoWorkerStarted() throws Exception {
        try (CopyEngine engine = CopyEngine.builder().workers(1).name("held-1").build();
             HeldWorkers _ = new HeldWorkers(engine)) {
            MemorySegment src = pattern(4 * MIB, 1);
            MemorySegment stage = Arena.ofShared().allocate(4 * MIB, 4096);
            AtomicReference<Thread> waiter = new AtomicReference<>();
            String outcome = Bounded.outcome("thread-scope wait", Duration.ofSeconds(10), () -> {
                waiter.set(Thread.currentThread());
                try (Pipeline pipe = Pipeline.make(engine)) {
                    pipe.producerAcquire();
                    AsyncContractFulfillment f = MemcpyAsync.memcpyAsync(stage, src, src.byteSize(), pipe);
                    pipe.producerCommit();
                    pipe.consumerWait();                    // the worker is held: only this thread can copy
                    pipe.consumerRelease();
                    return f + " " + stage.mismatch(src);
                }
            });
            assertEquals("ASYNC -1", outcome, "the copy was handed to the engine and landed intact");
        }
    }

    @Test
    void aWaiterSharesTheCopyThatTheOnlyWorkerStarted() throws Exception {
        // the worker reads the first half (gated); the waiting thread reads the second half itself
        byte[] data = new byte[(int) (2 * MIB)];
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) (i * 7 + (i >>> 9));
        }
        GatedFileChannel channel = new GatedFileChannel(data);
        CopyWorkers.waitersMayRead(channel);           // as a prefetch of a path registers the file it opened
        CountDownLatch firstHalf = channel.gate(0);
        try (CopyEngine engine = CopyEngine.builder().workers(1).minChunk(MIB).name("share-1").build()) {
            MemorySegment stage = Arena.ofShared().allocate(2 * MIB, 4096);
            Bounded.Run run = Bounded.start("sharing waiter", () -> {
                try (Pipeline pipe = Pipeline.make(engine)) {
                    // on a machine seen busy a read of jpipeline's own file runs when issued: wait that out (bounded)
                    long calm = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                    while (dev.jpipeline.internal.wait.Oversubscription.busy() && System.nanoTime() - calm < 0) {
                        Thread.onSpinWait();
                    }
                    pipe.producerAcquire();
                    MemcpyAsync.memcpyAsync(stage, channel, 0, 2 * MIB, pipe);
                    pipe.producerCommit();
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                    while (channel.reader(0) == null && System.nanoTime() - deadline < 0) {
                        Thread.onSpinWait();                // observed: the worker has started the first half
                    }
                    pipe.consumerWait();
                    pipe.consumerRelease();
                    return "landed, mismatch " + stage.mismatch(MemorySegment.ofArray(data));
                }
            });
            assertTrue(channel.served(MIB).await(10, TimeUnit.SECONDS), "nobody read the second half while the "
                + "only worker was held in the first");
            assertSame(run.thread(), channel.reader(MIB), "the waiting thread read the second half");
            firstHalf.countDown();
            assertEquals("landed, mismatch -1", run.result(Duration.ofSeconds(10)));
        }
    }

    @Test
    void aReadThatFailsInTheWaitersHandsFailsItsStageWithItsMessage() throws Exception {
        GatedFileChannel failing = new GatedFileChannel(new byte[(int) MIB]);
        failing.failFrom(0);
        CopyWorkers.waitersMayRead(failing);
        try (CopyEngine engine = CopyEngine.builder().workers(1).name("held-2").build();
             HeldWorkers _ = new HeldWorkers(engine)) {
            MemorySegment stage = Arena.ofShared().allocate(MIB, 4096);
            AtomicReference<Thread> waiter = new AtomicReference<>();
            String outcome = Bounded.outcome("failed read", Duration.ofSeconds(10), () -> {
                waiter.set(Thread.currentThread());
                try (Pipeline pipe = Pipeline.make(engine)) {
                    pipe.producerAcquire();
                    MemcpyAsync.memcpyAsync(stage, failing, 0, MIB, pipe);     // no exception here: the stage fails
                    pipe.producerCommit();
                    StageFailedException e = assertThrows(StageFailedException.class, pipe::consumerWait);
                    pipe.consumerRelease();
                    // the pipeline goes on: the next batch copies normally
                    pipe.producerAcquire();
                    MemorySegment src = pattern(MIB, 2);
                    MemcpyAsync.memcpyAsync(stage, src, MIB, pipe);
                    pipe.producerCommit();
                    pipe.consumerWait();
                    pipe.consumerRelease();
                    return e.getCause().getMessage() + "; next " + stage.mismatch(src)
                        + "; interrupted " + Thread.currentThread().isInterrupted();
                }
            });
            assertEquals("injected read error at position 0; next -1; interrupted false", outcome);
            assertSame(waiter.get(), failing.reader(0), "the waiting thread performed the failing read");
            assertTrue(failing.isOpen(), "a failed read never closes the user's channel");
        }
    }

    @Test
    void aWaiterKeepsItsInterruptStatusAndTheCopyStillLands() throws Exception {
        try (CopyEngine engine = CopyEngine.builder().workers(1).name("held-3").build();
             HeldWorkers _ = new HeldWorkers(engine)) {
            byte[] data = new byte[(int) MIB];
            java.util.Arrays.fill(data, (byte) 5);
            GatedFileChannel channel = new GatedFileChannel(data);
            CopyWorkers.waitersMayRead(channel);
            MemorySegment stage = Arena.ofShared().allocate(MIB, 4096);
            String outcome = Bounded.outcome("interrupted waiter", Duration.ofSeconds(10), () -> {
                try (Pipeline pipe = Pipeline.make(engine)) {
                    pipe.producerAcquire();
                    MemcpyAsync.memcpyAsync(stage, channel, 0, MIB, pipe);
                    pipe.producerCommit();
                    Thread.currentThread().interrupt();
                    pipe.consumerWait();                    // uninterruptible: performs the read, keeps the status
                    pipe.consumerRelease();
                    return "interrupted " + Thread.interrupted() + ", mismatch "
                        + stage.mismatch(MemorySegment.ofArray(data)) + ", channel open " + channel.isOpen();
                }
            });
            assertEquals("interrupted true, mismatch -1, channel open true", outcome);
        }
    }

    @Test
    void aReadFromTheUsersOwnChannelStaysWithTheWorkers() throws Exception {
        // an interrupt of a waiter inside a read would close the channel: a user's channel is read by workers only
        byte[] data = new byte[(int) MIB];
        java.util.Arrays.fill(data, (byte) 9);
        GatedFileChannel users = new GatedFileChannel(data);
        try (CopyEngine engine = CopyEngine.builder().workers(1).name("held-5").build()) {
            MemorySegment stage = Arena.ofShared().allocate(MIB, 4096);
            String outcome;
            try (HeldWorkers held = new HeldWorkers(engine)) {
                Bounded.Run run = Bounded.start("user channel", () -> {
                    try (Pipeline pipe = Pipeline.make(engine)) {
                        pipe.producerAcquire();
                        MemcpyAsync.memcpyAsync(stage, users, 0, MIB, pipe);
                        pipe.producerCommit();
                        pipe.consumerWait();
                        pipe.consumerRelease();
                        return "mismatch " + stage.mismatch(MemorySegment.ofArray(data));
                    }
                });
                ThreadStates.awaitWaitingIn(run.thread(), "consumerWait");
                assertEquals(null, users.reader(0), "the waiter did not read the user's channel");
                held.close();                               // the worker is free: it reads
                outcome = run.result(Duration.ofSeconds(10));
            }
            assertEquals("mismatch -1", outcome);
            assertTrue(users.reader(0).getName().startsWith("held-5"), users.reader(0).getName());
        }
    }

    @Test
    void aPrefetchOfAPathCompletesWhileEveryWorkerIsHeld(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("data");
        byte[] bytes = new byte[(int) (3 * MIB + 77)];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) (i * 13 + (i >>> 10));
        }
        Files.write(file, bytes);
        CRC32C expected = new CRC32C();
        expected.update(bytes);
        try (CopyEngine engine = CopyEngine.builder().workers(2).name("held-6").build();
             HeldWorkers _ = new HeldWorkers(engine)) {
            String outcome = Bounded.outcome("prefetch", Duration.ofSeconds(10), () -> {
                CRC32C crc = new CRC32C();
                try (var chunks = Prefetch.from(file).copyEngine(engine).chunk(1 << 20).stages(4).open()) {
                    for (MemorySegment chunk : chunks) {
                        crc.update(chunk.asByteBuffer());
                    }
                }
                return Long.toHexString(crc.getValue());
            });
            assertEquals(Long.toHexString(expected.getValue()), outcome);
        }
    }

    @Test
    void aPartitionedConsumerPerformsItsProducersCopy() throws Exception {
        try (CopyEngine engine = CopyEngine.builder().workers(1).name("held-4").build();
             HeldWorkers _ = new HeldWorkers(engine)) {
            PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 2).copyEngine(engine)
                .copyPolicy(CopyPolicy.ON_COPY_ENGINE).build();
            MemorySegment src = pattern(4 * MIB, 3);
            MemorySegment stage = Arena.ofShared().allocate(4 * MIB, 4096);
            long[] mismatch = {Long.MIN_VALUE};
            String outcome = Bounded.outcome("partitioned", Duration.ofSeconds(10), () -> {
                ThreadTeam.ofPlatform(2).run(Duration.ofSeconds(10), group -> {
                    try (Pipeline pipe = Pipeline.make(group, state, 1)) {
                        if (group.threadRank() == 0) {
                            pipe.producerAcquire();
                            MemcpyAsync.memcpyAsync(stage, src, src.byteSize(), pipe);
                            pipe.producerCommit();
                        } else {
                            pipe.consumerWait();            // the worker is held: the consumer copies
                            mismatch[0] = stage.mismatch(src);
                            pipe.consumerRelease();
                        }
                    }
                });
                return "mismatch " + mismatch[0];
            });
            assertEquals("mismatch -1", outcome);
        }
    }

    @Test
    void aBarrierWaitPerformsTheCopiesTiedToItsPhase() throws Exception {
        CopyEngine shared = CopyEngine.shared();
        try (HeldWorkers _ = new HeldWorkers(shared)) {
            MemorySegment src = pattern(4 * MIB, 4);
            MemorySegment dst = Arena.ofShared().allocate(4 * MIB, 4096);
            String outcome = Bounded.outcome("barrier", Duration.ofSeconds(10), () -> {
                Barrier barrier = new Barrier(1);
                AsyncContractFulfillment f = MemcpyAsync.memcpyAsync(dst, src, src.byteSize(), barrier);
                barrier.arriveAndWait();
                return f + " " + dst.mismatch(src);
            });
            assertEquals("ASYNC -1", outcome);
        }
        assertFalse(shared.isClosed());
    }
}
