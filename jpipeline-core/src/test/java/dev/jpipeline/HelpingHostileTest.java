package dev.jpipeline;

import static dev.jpipeline.TestSegments.pattern;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.copy.CopyEngine;
import dev.jpipeline.internal.copy.CopyWorkers;
import dev.jpipeline.internal.wait.Oversubscription;
import dev.jpipeline.prefetch.Prefetch;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hostile review of issue 25's helping waiters and pooled stage buffers: interrupts that reach a helper, an engine
 * closed while a helper copies, waits that must not help, small stage buffers, concurrent iterations, and helpers
 * and workers sharing recycled submissions, the busy machine's reads on the issuing thread. Threads are ordered by
 * observation (latches, thread states), never by sleeping; every wait is bounded. An interrupt of the iterating
 * thread of a prefetch of a path, inside a read that thread performs, closes the file: the chunk is read again from
 * the reopened file (Source.FileRange#readAgain).
 */
@Timeout(120)
class HelpingHostileTest {

    private static final long KIB = 1 << 10;
    private static final long MIB = 1 << 20;

    private static byte[] bytes(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 31 + seed + (i >>> 9));
        }
        return b;
    }

    /** Polls until {@code condition} holds, at most 10 s. */
    private static void await(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() - deadline < 0, "never observed: " + what);
            Thread.onSpinWait();
        }
    }

    /**
     * A file jpipeline may let waiters read (as a prefetch of a path registers its own): the read at position 0
     * waits for a gate, without giving up on an interrupt (its status stays set, as a positional read that was
     * not interrupted by its channel would leave it); every read is recorded with its thread.
     */
    private static final class SlowFirstRead extends PositionalReadChannel {
        final byte[] data;
        final CountDownLatch gate = new CountDownLatch(1);
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch firstReturned = new CountDownLatch(1);
        final Map<Long, Thread> readers = new ConcurrentHashMap<>();
        /** Whether the read at position 0 ran inside CopyWorkers.helpWith; written before {@link #entered}. */
        volatile boolean viaHelper;

        SlowFirstRead(byte[] data) {
            this.data = data;
            CopyWorkers.waitersMayRead(this);
        }

        @Override
        public int read(ByteBuffer dst, long position) throws IOException {
            readers.put(position, Thread.currentThread());
            if (position == 0) {
                viaHelper = insideHelpWith();
                entered.countDown();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                boolean interrupted = false;
                try {
                    while (true) {
                        try {
                            if (!gate.await(deadline - System.nanoTime(), TimeUnit.NANOSECONDS)) {
                                throw new IOException("test gate never opened");
                            }
                            break;
                        } catch (InterruptedException e) {
                            interrupted = true;
                        }
                    }
                } finally {
                    if (interrupted) {
                        Thread.currentThread().interrupt();
                    }
                }
            }
            if (position >= data.length) {
                return -1;
            }
            int n = (int) Math.min(dst.remaining(), data.length - position);
            dst.put(data, (int) position, n);
            if (position == 0) {
                firstReturned.countDown();
            }
            return n;
        }

        @Override
        public long size() {
            return data.length;
        }
    }

    /**
     * Like the JDK's FileChannel, an interruptible channel (begin/end): a read blocks until its thread is
     * interrupted, which closes the channel and makes the read throw ClosedByInterruptException with the thread's
     * interrupt status set. Registered as a channel jpipeline opened, so that a waiter may read it.
     */
    private static final class InterruptibleRead extends PositionalReadChannel {
        final CountDownLatch entered = new CountDownLatch(1);
        volatile Thread reader;
        /** Whether the read ran inside CopyWorkers.helpWith; written before {@link #entered}. */
        volatile boolean viaHelper;

        InterruptibleRead() {
            CopyWorkers.waitersMayRead(this);
        }

        @Override
        public int read(ByteBuffer dst, long position) throws IOException {
            begin();
            try {
                reader = Thread.currentThread();
                viaHelper = insideHelpWith();
                entered.countDown();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (!Thread.currentThread().isInterrupted() && isOpen() && System.nanoTime() - deadline < 0) {
                    LockSupport.parkNanos(this, 1_000_000);
                }
                if (isOpen() && !Thread.currentThread().isInterrupted()) {
                    throw new IOException("test channel: never interrupted");
                }
            } finally {
                end(false);
            }
            return 0;
        }

        @Override
        public long size() {
            return 1 << 16;
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // Interrupts that reach a helper

    /** An attempt at a scenario: whether the read it observed was a helper's (else the machine was seen busy). */
    @FunctionalInterface
    private interface Attempt {
        boolean ranOnAHelper() throws Exception;
    }

    /**
     * Runs {@code attempt} until it observes its read performed by a waiter that helps: while the machine is seen
     * oversubscribed (this 2-core machine may well be), a read of a file jpipeline opened runs on the issuing
     * thread inside memcpyAsync instead, which is not the path under test. Each attempt first waits (bounded) for
     * the busy mark to expire.
     */
    private static void onAHelper(Attempt attempt) throws Exception {
        for (int tries = 0; tries < 10; tries++) {
            await("the busy mark expires", () -> !Oversubscription.busy());
            if (attempt.ranOnAHelper()) {
                return;
            }
        }
        throw new AssertionError("the machine was seen busy at each of 10 attempts: no read ran on a helper");
    }

    /** Whether the calling thread is inside CopyWorkers.helpWith (a waiter performing a copy). */
    private static boolean insideHelpWith() {
        return StackWalker.getInstance().walk(frames -> frames.anyMatch(f -> f.getMethodName().equals("helpWith")
            && f.getClassName().equals(CopyWorkers.class.getName())));
    }

    /**
     * A waiter that helps performs a read of a file jpipeline opened; an interrupt reaches it in the read and
     * closes the file (as the JDK's FileChannel does). The read fails the batch, and the wait, which is
     * uninterruptible, must return with the interrupt status set: found lost, because CopySubmission.work()
     * clears the interrupt after a failed chunk and helpWith never gave it back.
     */
    @Test
    void anInterruptThatFailsAHelpersReadStaysTheWaitersInterrupt() throws Exception {
        onAHelper(() -> {
            InterruptibleRead channel = new InterruptibleRead();
            try (CopyEngine engine = CopyEngine.builder().workers(1).name("hh-int-1").build();
                 HeldWorkers _ = new HeldWorkers(engine)) {
                MemorySegment stage = Arena.ofShared().allocate(4096, 4096);
                Bounded.Run run = Bounded.start("helper interrupted in a failing read", () -> {
                    try (Pipeline pipe = Pipeline.make(engine)) {
                        pipe.producerAcquire();
                        MemcpyAsync.memcpyAsync(stage, channel, 0, 4096, pipe);
                        pipe.producerCommit();
                        StageFailedException e = assertThrows(StageFailedException.class, pipe::consumerWait);
                        pipe.consumerRelease();
                        return e.getCause().getClass().getSimpleName() + ", interrupted " + Thread.interrupted();
                    }
                });
                assertTrue(channel.entered.await(10, TimeUnit.SECONDS), "nobody read the file");
                assertSame(run.thread(), channel.reader, "the waiter performs the read (the only worker is held)");
                run.thread().interrupt();
                assertEquals("ClosedByInterruptException, interrupted true", run.result(Duration.ofSeconds(10)));
                return channel.viaHelper;
            }
        });
    }

    /**
     * The same with a read that succeeds: an interrupt that reaches a helper inside the first of two chunks must
     * survive the second chunk (which clears the thread's interrupt before it reads, so that the read does not
     * close the file) and be the waiter's again when its uninterruptible wait returns.
     */
    @Test
    void anInterruptThatReachesAHelperBetweenChunksStaysTheWaitersInterrupt() throws Exception {
        byte[] data = bytes((int) (128 * KIB), 3);
        onAHelper(() -> {
            SlowFirstRead channel = new SlowFirstRead(data);
            try (CopyEngine engine = CopyEngine.builder().workers(1).minChunk(64 * KIB).name("hh-int-2").build();
                 HeldWorkers _ = new HeldWorkers(engine)) {
                MemorySegment stage = Arena.ofShared().allocate(128 * KIB, 4096);
                Bounded.Run run = Bounded.start("helper interrupted between chunks", () -> {
                    try (Pipeline pipe = Pipeline.make(engine)) {
                        pipe.producerAcquire();
                        MemcpyAsync.memcpyAsync(stage, channel, 0, 128 * KIB, pipe);     // two chunks of 64 KiB
                        pipe.producerCommit();
                        pipe.consumerWait();
                        pipe.consumerRelease();
                        return "mismatch " + stage.mismatch(MemorySegment.ofArray(data))
                            + ", interrupted " + Thread.interrupted();
                    }
                });
                assertTrue(channel.entered.await(10, TimeUnit.SECONDS), "nobody read the first chunk");
                assertSame(run.thread(), channel.readers.get(0L), "the waiter reads the first chunk");
                run.thread().interrupt();
                channel.gate.countDown();
                assertEquals("mismatch -1, interrupted true", run.result(Duration.ofSeconds(10)));
                if (!channel.viaHelper) {
                    return false;               // read whole on the issuing thread: no second chunk
                }
                assertSame(run.thread(), channel.readers.get(64 * KIB), "the waiter reads the second chunk too");
                return true;
            }
        });
    }

    /**
     * docs/prefetch.md: the waits of hasNext() and next() are uninterruptible, "an interrupt does not end them",
     * and "interrupting [the iterating thread] cannot close a FileChannel in the middle of a read". A prefetch of a
     * path lets its iterating thread read the file it opened (a waiter that helps; on a machine seen busy, the
     * issue itself): an interrupt that reaches the thread inside such a read closes the file, and the iteration
     * fails with a ChunkFailedException (ClosedByInterruptException). Here every worker is held, so that the
     * iterating thread performs every read, and another thread interrupts it while it iterates. It fails as well
     * with the shared engine and no worker held (pass 0 or 1 on the 2-core machine), and passed all 20 passes at
     * 1d4395a, before waiters helped.
     */
    @Test
    void anInterruptOfTheIteratingThreadDoesNotFailAPrefetchOfAPath(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("data");
        byte[] data = bytes((int) (8 * MIB), 11);
        Files.write(file, data);
        CRC32C expected = new CRC32C();
        expected.update(data);
        try (CopyEngine engine = CopyEngine.builder().workers(1).name("hh-prefetch-int").build();
             HeldWorkers _ = new HeldWorkers(engine)) {
            for (int pass = 0; pass < 20; pass++) {           // the interrupt must meet a read: try a few passes
                AtomicBoolean done = new AtomicBoolean();
                CountDownLatch iterating = new CountDownLatch(1);
                Bounded.Run run = Bounded.start("interrupted iteration", () -> {
                    CRC32C crc = new CRC32C();
                    try (var chunks = Prefetch.from(file).copyEngine(engine).chunk(16 * KIB).stages(4).open()) {
                        iterating.countDown();
                        for (MemorySegment chunk : chunks) {
                            crc.update(chunk.asByteBuffer());
                        }
                    } catch (RuntimeException e) {
                        return e.getClass().getSimpleName() + ": " + e.getCause();
                    } finally {
                        done.set(true);
                        Thread.interrupted();
                    }
                    return crc.getValue() == expected.getValue() ? "intact" : "crc differs";
                });
                assertTrue(iterating.await(10, TimeUnit.SECONDS));
                while (!done.get()) {
                    run.thread().interrupt();
                    Thread.yield();
                }
                assertEquals("intact", run.result(Duration.ofSeconds(10)), "pass " + pass);
            }
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // close() while a helper copies

    /**
     * CopyEngine.close() promises that every submitted copy has been performed and its completion called before
     * it returns. A copy taken from the queue by a waiting thread is no worker's: found returning while the
     * helper was still inside the copy, once the workers had ended.
     */
    @Test
    void closeWaitsForTheCopyThatAWaiterTookFromTheQueue() throws Exception {
        byte[] data = bytes(4096, 5);
        onAHelper(() -> {
            SlowFirstRead channel = new SlowFirstRead(data);
            CopyEngine engine = CopyEngine.builder().workers(1).name("hh-close").build();
            HeldWorkers held = new HeldWorkers(engine);
            MemorySegment stage = Arena.ofShared().allocate(4096, 4096);
            Bounded.Run waiter = Bounded.start("helper during close", () -> {
                try (Pipeline pipe = Pipeline.make(engine)) {
                    pipe.producerAcquire();
                    MemcpyAsync.memcpyAsync(stage, channel, 0, 4096, pipe);
                    pipe.producerCommit();
                    pipe.consumerWait();
                    pipe.consumerRelease();
                    return "mismatch " + stage.mismatch(MemorySegment.ofArray(data));
                }
            });
            assertTrue(channel.entered.await(10, TimeUnit.SECONDS), "nobody read the file");
            assertSame(waiter.thread(), channel.readers.get(0L), "the waiter took the copy (the only worker is held)");
            if (!channel.viaHelper) {           // read on the issuing thread: no copy of the engine's in flight
                channel.gate.countDown();
                assertEquals("mismatch -1", waiter.result(Duration.ofSeconds(10)));
                held.close();
                engine.close();
                return false;
            }
            held.close();                       // the worker lands its read and goes idle: the queue is empty
            Bounded.Run closer = Bounded.start("closer", () -> {
                engine.close();
                return "closed; the helper's read " + (channel.firstReturned.getCount() == 0 ? "had returned"
                    : "was still running");
            });
            // either close() returns at once (the bug), or it waits for the helper: then let the read finish
            await("close() ended or waiting for the helper",
                () -> !closer.thread().isAlive() || ThreadStates.isWaitingIn(closer.thread(), "awaitHelpers"));
            channel.gate.countDown();
            assertEquals("closed; the helper's read had returned", closer.result(Duration.ofSeconds(10)));
            assertEquals("mismatch -1", waiter.result(Duration.ofSeconds(10)));
            return true;
        });
    }

    // ---------------------------------------------------------------------------------------------------------
    // Waits that must not help

    /** A timed wait and an interruptible wait never perform a copy: their outcome must not outlast them. */
    @Test
    void timedAndInterruptibleWaitsNeverPerformACopy() throws Exception {
        try (CopyEngine engine = CopyEngine.builder().workers(1).name("hh-nohelp").build()) {
            MemorySegment src = pattern(MIB, 7);
            MemorySegment stage = Arena.ofShared().allocate(MIB, 4096);
            MemorySegment zeros = Arena.ofAuto().allocate(MIB);
            HeldWorkers held = new HeldWorkers(engine);
            Bounded.Run run = Bounded.start("no helping", () -> {
                try (Pipeline pipe = Pipeline.make(engine)) {
                    pipe.producerAcquire();
                    MemcpyAsync.memcpyAsync(stage, src, MIB, pipe);
                    pipe.producerCommit();
                    boolean timed = pipe.consumerWaitFor(Duration.ofMillis(30));
                    long afterTimed = stage.mismatch(zeros);
                    String interruptible;
                    try {
                        pipe.consumerWaitInterruptibly();
                        interruptible = "returned";
                    } catch (InterruptedException e) {
                        interruptible = "interrupted";
                    }
                    long afterInterruptible = stage.mismatch(zeros);
                    pipe.consumerWait();                    // untimed: helps (or the released worker copies)
                    pipe.consumerRelease();
                    return "timed " + timed + " untouched " + (afterTimed == -1) + "; " + interruptible
                        + " untouched " + (afterInterruptible == -1) + "; then " + stage.mismatch(src);
                }
            });
            ThreadStates.awaitWaitingIn(run.thread(), "consumerWaitInterruptibly");
            run.thread().interrupt();
            String outcome = run.result(Duration.ofSeconds(10));
            held.close();
            assertEquals("timed false untouched true; interrupted untouched true; then -1", outcome);
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // Pooled stage buffers

    /**
     * The README's pattern, one Prefetch per file, over small files: each pass must reuse the pooled buffer.
     * Found allocating a fresh buffer on every open for a stage under 2 KiB (a buffer is a page, 4 KiB, which the
     * pool offered only to requests of at least half its size), each kept idle up to the 256 MiB bound: 8000
     * opens of a 100-byte file allocated 8000 shared arenas.
     */
    @Test
    void eightThousandOpensOfASmallFileReuseOneBuffer(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("small");
        byte[] data = bytes(100, 9);
        Files.write(file, data);
        Set<Long> addresses = new HashSet<>();
        for (int pass = 0; pass < 8000; pass++) {
            try (var chunks = Prefetch.from(file).chunk(64 * KIB).stages(4).open()) {
                int n = 0;
                for (MemorySegment chunk : chunks) {
                    n++;
                    addresses.add(chunk.address());
                    if (pass % 1000 == 0) {
                        assertEquals(-1, chunk.mismatch(MemorySegment.ofArray(data)), "pass " + pass);
                    }
                }
                assertEquals(1, n);
            }
        }
        assertTrue(addresses.size() <= 2, "8000 opens of a 100-byte file used " + addresses.size()
            + " different stage buffers");
    }

    /**
     * Many threads open iterations at once: while they are all open, no two share a stage buffer, and every chunk
     * holds its own source's bytes; rounds reuse the pool.
     */
    @Test
    void iterationsOpenAtOnceOnManyThreadsNeverShareABuffer() throws Exception {
        int threads = 6;
        long chunk = 128 * KIB;                         // above the inline threshold: copies go to the engine
        MemorySegment[] sources = new MemorySegment[threads];
        for (int t = 0; t < threads; t++) {
            sources[t] = pattern(4 * chunk, 100 + t);
        }
        for (int round = 0; round < 20; round++) {
            CountDownLatch allOpen = new CountDownLatch(threads);
            long[][] ranges = new long[threads][];
            List<Bounded.Run> runs = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int me = t;
                runs.add(Bounded.start("opener-" + t, () -> {
                    List<Long> mine = new ArrayList<>();
                    try (var chunks = Prefetch.from(sources[me]).chunk(chunk).stages(4).open()) {
                        long offset = 0;
                        for (MemorySegment c : chunks) {
                            long m = c.mismatch(sources[me].asSlice(offset, c.byteSize()));
                            if (m != -1) {
                                return "chunk at " + offset + " differs at " + m;
                            }
                            mine.add(c.address());
                            mine.add(c.address() + c.byteSize());
                            offset += c.byteSize();
                        }
                        ranges[me] = mine.stream().mapToLong(Long::longValue).toArray();
                        allOpen.countDown();
                        if (!allOpen.await(20, TimeUnit.SECONDS)) {
                            return "the others never opened";
                        }
                    }
                    return "ok";
                }));
            }
            for (Bounded.Run r : runs) {
                assertEquals("ok", r.result(Duration.ofSeconds(30)), "round " + round);
            }
            for (int a = 0; a < threads; a++) {
                for (int b = a + 1; b < threads; b++) {
                    for (int i = 0; i < ranges[a].length; i += 2) {
                        for (int j = 0; j < ranges[b].length; j += 2) {
                            boolean overlap = ranges[a][i] < ranges[b][j + 1] && ranges[b][j] < ranges[a][i + 1];
                            assertFalse(overlap, "round " + round + ": iterations " + a + " and " + b
                                + " open at once share a stage buffer");
                        }
                    }
                }
            }
        }
    }

    /**
     * A chunk kept past its iteration's close must fail, never show the bytes of the next iteration that reuses
     * its pooled buffer.
     */
    @Test
    void aChunkKeptPastCloseFailsEvenWhenItsBufferIsReused() {
        MemorySegment first = pattern(256 * KIB, 21);
        MemorySegment second = pattern(256 * KIB, 22);
        MemorySegment kept;
        long address;
        try (var chunks = Prefetch.from(first).chunk(256 * KIB).stages(1).open()) {
            kept = chunks.iterator().next();
            address = kept.address();
        }
        try (var chunks = Prefetch.from(second).chunk(256 * KIB).stages(1).open()) {
            MemorySegment now = chunks.iterator().next();
            assertEquals(-1, now.mismatch(second));
            assertEquals(address, now.address(), "the pooled buffer is reused (this test's premise)");
            assertThrows(IllegalStateException.class, () -> kept.get(ValueLayout.JAVA_BYTE, 0));
            assertThrows(IllegalStateException.class, () -> kept.asByteBuffer().get(0));
        }
    }

    /** A virtual thread that waits helps too (it parks at once, but performs the copy no worker has started). */
    @Test
    void aVirtualThreadWaiterPerformsTheCopy() throws Exception {
        try (CopyEngine engine = CopyEngine.builder().workers(1).name("hh-virtual").build();
             HeldWorkers _ = new HeldWorkers(engine)) {
            MemorySegment src = pattern(2 * MIB, 31);
            MemorySegment stage = Arena.ofShared().allocate(2 * MIB, 4096);
            AtomicReference<String> outcome = new AtomicReference<>();
            Thread t = Thread.ofVirtual().start(() -> {
                try (Pipeline pipe = Pipeline.make(engine)) {
                    pipe.producerAcquire();
                    MemcpyAsync.memcpyAsync(stage, src, 2 * MIB, pipe);
                    pipe.producerCommit();
                    pipe.consumerWait();
                    pipe.consumerRelease();
                    outcome.set("mismatch " + stage.mismatch(src));
                } catch (Throwable e) {
                    outcome.set(e.toString());
                }
            });
            assertTrue(t.join(Duration.ofSeconds(10)), "the virtual waiter is still waiting");
            assertEquals("mismatch -1", outcome.get());
        }
    }

    /**
     * A Barrier's completion action may now run on a waiting thread (the helper that lands the phase's last copy):
     * it runs once per phase, sees the copy's bytes, and when it throws, the waiter gets the failure as it would
     * from a worker's landing (never through the waiter's uncaught-exception handler).
     */
    @Test
    void aBarrierCompletionRunOnAHelperRunsOnceSeesTheBytesAndFailsThePhaseOnly() throws Exception {
        MemorySegment src = pattern(2 * MIB, 41);
        MemorySegment dst = Arena.ofShared().allocate(2 * MIB, 4096);
        List<String> runs = Collections.synchronizedList(new ArrayList<>());
        List<Throwable> uncaught = Collections.synchronizedList(new ArrayList<>());
        try (HeldWorkers _ = new HeldWorkers(CopyEngine.shared())) {
            String outcome = Bounded.outcome("barrier helper", Duration.ofSeconds(10), () -> {
                Thread.currentThread().setUncaughtExceptionHandler((t, e) -> uncaught.add(e));
                Barrier ok = new Barrier(1, () -> runs.add(Thread.currentThread().getName() + " mismatch "
                    + dst.mismatch(src)));
                MemcpyAsync.memcpyAsync(dst, src, src.byteSize(), ok);
                ok.arriveAndWait();
                dst.fill((byte) 0);
                Barrier failing = new Barrier(1, () -> {
                    throw new IllegalArgumentException("completion fails");
                });
                MemcpyAsync.memcpyAsync(dst, src, src.byteSize(), failing);
                String second;
                try {
                    failing.arriveAndWait();
                    second = "no failure";
                } catch (RuntimeException e) {
                    Throwable root = e;
                    while (root.getCause() != null && root != root.getCause()) {
                        root = root.getCause();
                    }
                    second = e.getClass().getSimpleName() + " caused by " + root.getMessage();
                }
                return "first ok; then " + second + "; next phase " + failing.phase();
            });
            assertEquals("first ok; then IllegalStateException caused by completion fails; next phase 1", outcome);
        }
        assertEquals(List.of("barrier helper mismatch -1"), runs, "ran once, on the waiter, after the copy");
        assertEquals(List.of(), uncaught);
    }

    // ---------------------------------------------------------------------------------------------------------
    // Helpers and workers share recycled submissions

    /**
     * Several threads, each with its own thread-scope pipelines (own barriers), on one engine of two workers whose
     * copies split in two: waiters take queue entries and join copies that workers started, while submissions are
     * recycled between the threads' barriers. Every batch lands exactly once with its own bytes, nothing hangs,
     * and the count of copies in flight comes back down.
     */
    @Test
    void helpersAndWorkersShareRecycledSubmissionsWithoutLossOrDrift() throws Exception {
        int threads = 4;
        int batches = 1500;
        long bytes = 32 * KIB;
        int baseline = CopyWorkers.copiesInFlight();
        try (CopyEngine engine = CopyEngine.builder().workers(2).minChunk(4096).inlineThreshold(0)
            .name("hh-stress").build()) {
            List<Bounded.Run> runs = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int me = t;
                runs.add(Bounded.start("stress-" + t, () -> {
                    MemorySegment[] srcs = {pattern(bytes, me * 10), pattern(bytes, me * 10 + 1),
                        pattern(bytes, me * 10 + 2)};
                    MemorySegment[] dsts = new MemorySegment[3];
                    Arena arena = Arena.ofShared();
                    for (int s = 0; s < 3; s++) {
                        dsts[s] = arena.allocate(bytes, 64);
                    }
                    try (Pipeline pipe = Pipeline.make(engine)) {
                        for (int b = 0; b < batches + 2; b++) {
                            if (b < batches) {
                                int s = b % 3;
                                pipe.producerAcquire();
                                dsts[s].fill((byte) 0);
                                MemcpyAsync.memcpyAsync(dsts[s], srcs[(b / 3 + me) % 3], bytes, pipe);
                                pipe.producerCommit();
                            }
                            if (b >= 2) {
                                int k = b - 2;
                                pipe.consumerWait();
                                long m = dsts[k % 3].mismatch(srcs[(k / 3 + me) % 3]);
                                pipe.consumerRelease();
                                if (m != -1) {
                                    return "batch " + k + " differs at byte " + m;
                                }
                            }
                        }
                    } finally {
                        arena.close();
                    }
                    return "ok";
                }));
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            for (Bounded.Run r : runs) {
                assertEquals("ok", r.resultBy(deadline));
            }
        }
        await("copies in flight back to " + baseline + " (now " + CopyWorkers.copiesInFlight() + ")",
            () -> CopyWorkers.copiesInFlight() <= baseline);
    }
}
