package dev.jpipeline.copy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.Bounded;
import dev.jpipeline.ThreadStates;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class CopyEngineTest {

    private static MemorySegment filled(long bytes) {
        MemorySegment s = Arena.ofAuto().allocate(bytes, 8);
        for (long i = 0; i < bytes / 8; i++) {
            s.setAtIndex(ValueLayout.JAVA_LONG, i, i * 0x9E3779B97F4A7C15L);
        }
        return s;
    }

    @Test
    void aLargeCopyIsSplitOverTheWorkersAndCompletesOnce() throws Exception {
        try (CopyEngine engine = CopyEngine.builder().workers(4).minChunk(4096).name("split-test").build()) {
            MemorySegment src = filled(1 << 20);
            MemorySegment dst = Arena.ofAuto().allocate(1 << 20, 8);
            AtomicInteger completions = new AtomicInteger();
            Set<String> workers = ConcurrentHashMap.newKeySet();
            CountDownLatch done = new CountDownLatch(1);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            engine.copy(dst, src, f -> {
                completions.incrementAndGet();
                failure.set(f);
                workers.add(Thread.currentThread().getName());
                done.countDown();
            });
            assertTrue(done.await(10, TimeUnit.SECONDS));
            assertEquals(-1, dst.mismatch(src));
            assertNull(failure.get());
            engine.close();             // returns once every completion has been called: no late second one
            assertEquals(1, completions.get());
            assertTrue(workers.iterator().next().startsWith("split-test-"));
        }
    }

    @Test
    void manyConcurrentSubmissionsAllLand() throws Exception {
        try (CopyEngine engine = CopyEngine.builder().workers(3).minChunk(4096).build()) {
            int copies = 500;
            MemorySegment src = filled(64 * 1024);
            MemorySegment[] dst = new MemorySegment[copies];
            CountDownLatch done = new CountDownLatch(copies);
            Thread[] submitters = new Thread[4];
            for (int t = 0; t < submitters.length; t++) {
                int first = t;
                submitters[t] = Thread.ofPlatform().start(() -> {
                    for (int i = first; i < copies; i += submitters.length) {
                        dst[i] = Arena.ofAuto().allocate(src.byteSize(), 8);
                        engine.copy(dst[i], src, f -> done.countDown());
                    }
                });
            }
            for (Thread t : submitters) {
                t.join();
            }
            assertTrue(done.await(20, TimeUnit.SECONDS));
            for (MemorySegment d : dst) {
                assertEquals(-1, d.mismatch(src));
            }
        }
    }

    @Test
    void closeDrainsAndThenRefuses() throws Exception {
        CopyEngine engine = CopyEngine.builder().workers(1).build();
        MemorySegment src = filled(1 << 20);
        MemorySegment dst = Arena.ofAuto().allocate(1 << 20, 8);
        AtomicInteger landed = new AtomicInteger();
        for (int i = 0; i < 10; i++) {
            engine.copy(dst, src, f -> landed.incrementAndGet());
        }
        engine.close();
        assertEquals(10, landed.get(), "close waits for every submitted copy");
        IllegalStateException e = assertThrows(IllegalStateException.class,
            () -> engine.copy(dst, src, f -> { }));
        assertTrue(e.getMessage().contains("closed"));
        assertThrows(IllegalStateException.class, () -> CopyEngine.shared().close());
    }

    @Test
    void settingsAreValidated() {
        assertThrows(IllegalArgumentException.class, () -> CopyEngine.builder().workers(0));
        assertThrows(IllegalArgumentException.class, () -> CopyEngine.builder().inlineThreshold(-1));
        assertThrows(IllegalArgumentException.class, () -> CopyEngine.builder().minChunk(100));
        try (CopyEngine engine = CopyEngine.builder().inlineThreshold(100).build()) {
            assertEquals(100, engine.inlineThreshold());
            assertThrows(IllegalArgumentException.class,
                () -> engine.copy(Arena.ofAuto().allocate(8), Arena.ofAuto().allocate(16), f -> { }));
        }
    }

    /** Issue 8, promise 15: CopyEngine.close() from a copy's completion must not join the worker that runs it. */
    @Test
    void closeCalledFromACopysCompletionReturns() {
        CopyEngine engine = CopyEngine.builder().workers(1).name("p15-copy").build();
        String outcome = Bounded.outcome("p15", Duration.ofSeconds(5), () -> {
            long quickMillis = 2_000;
            CountDownLatch closed = new CountDownLatch(1);
            AtomicReference<String> result = new AtomicReference<>("completion not run");
            AtomicReference<Thread> worker = new AtomicReference<>();
            engine.copy(Arena.ofAuto().allocate(1 << 20), Arena.ofAuto().allocate(1 << 20), failure -> {
                worker.set(Thread.currentThread());
                try {
                    engine.close();
                    result.set("close returned");
                } catch (RuntimeException e) {
                    result.set("close threw " + Bounded.describe(e));
                } finally {
                    closed.countDown();
                }
            });
            if (!closed.await(quickMillis, TimeUnit.MILLISECONDS)) {
                Thread w = worker.get();
                return w == null ? "the copy did not complete within " + quickMillis + " ms"
                    : "close did not return within " + quickMillis + " ms: the worker is " + w.getState()
                        + " in " + ThreadStates.frames(w, 3);
            }
            return result.get();
        });
        assertEquals("close returned", outcome, "CopyEngine.close() called from a copy's completion must not join "
            + "the worker that runs it");
    }
}
