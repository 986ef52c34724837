package dev.jpipeline.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.AsyncContractFulfillment;
import dev.jpipeline.MemcpyAsync;
import dev.jpipeline.Pipeline;
import dev.jpipeline.copy.CopyEngine;
import dev.jpipeline.internal.copy.CopyWorkers;
import dev.jpipeline.internal.wait.Oversubscription;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * On a machine seen oversubscribed (issue 25), a read from a file that jpipeline opened runs on the issuing thread:
 * a worker would wait for a time slice while the thread that needs the data waits for it. A user's channel and
 * memory copies stay on the engine.
 */
class BusyMachineCopiesTest {

    private static final long MIB = 1 << 20;

    @BeforeEach
    @AfterEach
    void forget() {
        Oversubscription.reset();
    }

    private static void seenBusy() {
        Oversubscription.sawIdling(TimeUnit.MILLISECONDS.toNanos(2), System.nanoTime());
    }

    private static MemorySegment filled(long bytes) {
        MemorySegment s = Arena.ofAuto().allocate(bytes, 8);
        for (long i = 0; i < bytes; i += 8) {
            s.set(java.lang.foreign.ValueLayout.JAVA_LONG, i, i * 31);
        }
        return s;
    }

    @Test
    void aReadFromAFileJpipelineOpenedRunsOnTheIssuerWhileTheMachineIsBusy(@TempDir Path dir) throws Exception {
        // on a thread of its own: its first look at its run queue sees nothing, so the first read is "idle"
        java.util.concurrent.atomic.AtomicReference<Throwable> failure = new java.util.concurrent.atomic.AtomicReference<>();
        Thread t = Thread.ofPlatform().start(() -> {
            try {
                readsFromAFileJpipelineOpened(dir);
            } catch (Throwable e) {
                failure.set(e);
            }
        });
        t.join(TimeUnit.SECONDS.toMillis(20));
        assertTrue(!t.isAlive(), "the test body still runs after 20 s");
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
    }

    private static void readsFromAFileJpipelineOpened(Path dir) throws IOException {
        Path file = dir.resolve("data");
        byte[] bytes = new byte[(int) MIB];
        java.util.Arrays.fill(bytes, (byte) 3);
        Files.write(file, bytes);
        try (CopyEngine engine = CopyEngine.builder().workers(1).name("busy-1").build();
             FileChannel owned = FileChannel.open(file);
             FileChannel users = FileChannel.open(file);
             Pipeline pipe = Pipeline.make(engine)) {
            CopyWorkers.waitersMayRead(owned);              // as a prefetch of a path registers the file it opened
            MemorySegment dst = Arena.ofAuto().allocate(MIB, 4096);
            MemorySegment src = filled(4 * MIB);
            MemorySegment big = Arena.ofAuto().allocate(4 * MIB, 4096);
            // idle: on the engine, unless another thread of this JVM (an idle copy worker's spin, on a loaded
            // machine) saw the machine busy meanwhile: the mark is global, and then the read is rightly here
            String idle = readInto(pipe, dst, owned);
            assertTrue(idle.equals("ASYNC") || Oversubscription.busy(), "idle: on the engine, got " + idle);
            seenBusy();
            assertEquals("NONE", readInto(pipe, dst, owned), "busy: jpipeline's own file is read here");
            assertEquals(-1, dst.mismatch(MemorySegment.ofArray(bytes)));
            assertEquals("ASYNC", readInto(pipe, dst, users), "busy: a user's channel stays on the engine");
            assertTrue(users.isOpen());
            pipe.producerAcquire();
            assertEquals(AsyncContractFulfillment.ASYNC, MemcpyAsync.memcpyAsync(big, src, 4 * MIB, pipe),
                "busy: a memory copy still goes to the engine (the waiter may help)");
            pipe.producerCommit();
            pipe.consumerWait();
            pipe.consumerRelease();
            assertEquals(-1, big.mismatch(src));
        }
    }

    /** One batch that reads {@code channel} into {@code dst}: how memcpyAsync ran it. */
    private static String readInto(Pipeline pipe, MemorySegment dst, FileChannel channel) {
        pipe.producerAcquire();
        AsyncContractFulfillment how = MemcpyAsync.memcpyAsync(dst, channel, 0, dst.byteSize(), pipe);
        pipe.producerCommit();
        pipe.consumerWait();
        pipe.consumerRelease();
        return how.toString();
    }
}
