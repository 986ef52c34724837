package dev.jpipeline.prefetch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The stage buffer pool: reuse across iterations, never shared by two live ones, bounded, freed when idle. */
class StageBufferPoolTest {

    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

    @Test
    void aBufferGivenBackIsTakenAgainWithoutAnAllocation() {
        StageBufferPool pool = new StageBufferPool(64 << 20, 60 * SECOND);
        StageBufferPool.Buffer first = pool.take(1 << 20);
        pool.give(first);
        StageBufferPool.Buffer second = pool.take(1 << 20);
        assertEquals(first.memory().address(), second.memory().address());
        assertEquals(1, pool.allocations());
        assertTrue(second.memory().scope().isAlive());
        assertEquals(0, second.memory().address() % StageBufferPool.ALIGNMENT, "page-aligned");
        // a smaller request within a factor of two reuses it too; a much smaller one does not hold it
        pool.give(second);
        assertEquals(first.memory().address(), pool.take(600_000).memory().address());
        assertEquals(1, pool.allocations());
    }

    @Test
    void twoLiveIterationsNeverShareABuffer() {
        StageBufferPool pool = new StageBufferPool(64 << 20, 60 * SECOND);
        StageBufferPool.Buffer a = pool.take(1 << 20);
        StageBufferPool.Buffer b = pool.take(1 << 20);
        assertNotEquals(a.memory().address(), b.memory().address());
        pool.give(a);
        StageBufferPool.Buffer c = pool.take(1 << 20);
        assertEquals(a.memory().address(), c.memory().address());
        assertNotEquals(b.memory().address(), pool.take(1 << 20).memory().address());
        assertEquals(3, pool.allocations());
    }

    @Test
    void idleMemoryIsBoundedAndTheOldestIsFreedFirst() {
        StageBufferPool pool = new StageBufferPool(2 << 20, 60 * SECOND);
        StageBufferPool.Buffer a = pool.take(1 << 20);
        StageBufferPool.Buffer b = pool.take(1 << 20);
        StageBufferPool.Buffer c = pool.take(1 << 20);
        pool.give(a);
        pool.give(b);
        pool.give(c);
        assertEquals(2 << 20, pool.idleBytes());
        assertFalse(a.memory().scope().isAlive(), "the oldest idle buffer is freed once the bound is passed");
        assertTrue(b.memory().scope().isAlive());
        StageBufferPool.Buffer huge = pool.take(3 << 20);
        pool.give(huge);
        assertFalse(huge.memory().scope().isAlive(), "a buffer larger than the bound is freed at once");
        StageBufferPool off = new StageBufferPool(0, 60 * SECOND);
        StageBufferPool.Buffer d = off.take(4096);
        off.give(d);
        assertFalse(d.memory().scope().isAlive(), "a bound of 0 keeps nothing");
    }

    @Test
    void idleBuffersAreFreedAfterTheIdleTime() {
        StageBufferPool pool = new StageBufferPool(64 << 20, TimeUnit.MILLISECONDS.toNanos(20));
        StageBufferPool.Buffer a = pool.take(1 << 20);
        pool.give(a);
        long deadline = System.nanoTime() + 10 * SECOND;
        while (a.memory().scope().isAlive() && System.nanoTime() - deadline < 0) {
            Thread.onSpinWait();        // observed, bounded: the reaper frees it about 20 ms after the return
        }
        assertFalse(a.memory().scope().isAlive(), "an idle buffer is freed by the reaper");
        assertEquals(0, pool.idleBytes());
    }

    @Test
    void refusesANegativeBound() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new StageBufferPool(-1, 0));
        assertTrue(e.getMessage().contains("-1 bytes"), e.getMessage());
    }

    @Test
    void aPrefetchOpenedOncePerPassAllocatesItsBuffersOnce(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("data");
        byte[] bytes = new byte[(4 << 20) + 123];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) (i * 31 + (i >>> 11));
        }
        Files.write(file, bytes);
        CRC32C expected = new CRC32C();
        expected.update(bytes);
        long before = StageBufferPool.SHARED.allocations();
        for (int pass = 0; pass < 10; pass++) {
            CRC32C crc = new CRC32C();
            try (var chunks = Prefetch.from(file).chunk(1 << 20).stages(4).open()) {
                for (MemorySegment chunk : chunks) {
                    crc.update(chunk.asByteBuffer());
                }
            }
            assertEquals(expected.getValue(), crc.getValue(), "pass " + pass);
        }
        // other tests may open concurrently in this JVM: at most one pass's worth of new buffers is ours
        assertTrue(StageBufferPool.SHARED.allocations() - before <= 4,
            "10 passes of 4 stages allocated " + (StageBufferPool.SHARED.allocations() - before) + " buffers");
    }

    @Test
    void aReusedBufferIsCutToItsChunkAndGivenBackOnce() {
        StageBufferPool pool = new StageBufferPool(64 << 20, 60 * SECOND);
        StageBuffers first = new StageBuffers(1, 1 << 20, null, pool);
        first.stage(0).fill((byte) 1);
        first.free();
        StageBuffers second = new StageBuffers(1, 600_000, null, pool);
        assertEquals(600_000, second.stage(0).byteSize(), "a stage is exactly its chunk's size");
        assertEquals(1, second.stage(0).get(ValueLayout.JAVA_BYTE, 0));     // not zeroed, never seen past a chunk
        second.free();
        second.free();                                                       // a second free does nothing
        assertEquals(1 << 20, pool.idleBytes());
        assertEquals(1, pool.allocations());
    }

    @Test
    void noPoolSettingKeepsPrefetchFromWorking(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("data");
        byte[] bytes = new byte[300_000];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) (i * 7);
        }
        Files.write(file, bytes);
        CRC32C expected = new CRC32C();
        expected.update(bytes);
        String crc = "crc " + Long.toHexString(expected.getValue());
        for (String[] settings : new String[][] {
            {"-Djpipeline.prefetch.pooledBytes=-1", "-Djpipeline.prefetch.idleMillis=9223372036854775807"},
            {"-Djpipeline.prefetch.pooledBytes=lots", "-Djpipeline.prefetch.idleMillis=-5"}}) {
            java.util.List<String> command = dev.jpipeline.internal.ChildJvm.command(PoolSettingsChild.class,
                file.toString());
            command.addAll(1, java.util.List.of(settings));
            Process child = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out = new String(child.getInputStream().readAllBytes());
            assertTrue(child.waitFor(60, TimeUnit.SECONDS), "the child JVM ended");
            assertEquals(crc + "\n" + crc + "\n", out, String.join(" ", settings));
        }
    }
}
