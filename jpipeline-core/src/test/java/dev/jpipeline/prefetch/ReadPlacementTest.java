package dev.jpipeline.prefetch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.copy.CopyEngine;
import dev.jpipeline.internal.CopyWorkers;
import dev.jpipeline.prefetch.ReadPlacement.Place;
import java.io.EOFException;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Where a prefetch of a path reads (issue 25): ahead on the copy engine, or on the iterating thread when the loop
 * reaches a chunk, chosen by timing pairs of windows. The choice itself with a made-up clock; then the feed in
 * each place, with the engine's only worker held so that what runs where is observable.
 */
class ReadPlacementTest {

    private static final long MIB = 1 << 20;
    private static final int STAGES = 4;
    /** Windows of 1 MiB chunks hold 16 chunks (16 MiB). */
    private static final int WINDOW = 16;

    @BeforeEach
    @AfterEach
    void forget() {
        ReadPlacement.setRatio(0);
    }

    /** Advances {@code chunks} chunks of 1 MiB, each costing {@code nanosPerByte}, and returns the place after. */
    private static Place advance(ReadPlacement placement, long[] clock, int chunks, double nanosPerByte) {
        for (int i = 0; i < chunks; i++) {
            clock[0] += (long) (nanosPerByte * MIB);
            placement.advanced(MIB, clock[0]);
        }
        return placement.place();
    }

    @Test
    void withNoPairTimedAFeedStartsAheadAndTimesHereNext() {
        ReadPlacement placement = new ReadPlacement(STAGES, MIB);
        long[] clock = {1};
        assertEquals(Place.AHEAD, placement.place());
        assertEquals(Place.AHEAD, advance(placement, clock, STAGES, 1), "settling: the first chunks are not timed");
        assertEquals(Place.AHEAD, advance(placement, clock, WINDOW - 1, 1));
        assertEquals(Place.HERE, advance(placement, clock, 1, 1), "a full window ahead: here is timed next");
    }

    @Test
    void aPairOfWindowsSetsTheRatioWhichChoosesThePlaceOfTheNextFeed() {
        ReadPlacement placement = new ReadPlacement(STAGES, MIB);
        long[] clock = {1};
        advance(placement, clock, STAGES + WINDOW, 2.0);                 // ahead: 2 ns a byte
        assertEquals(Place.HERE, placement.place());
        advance(placement, clock, STAGES + WINDOW, 1.0);                 // here: 1 ns a byte
        assertEquals(0.5, ReadPlacement.ratio(), 1e-3);
        assertEquals(Place.HERE, placement.place(), "here is cheaper: it stays");
        assertEquals(Place.HERE, new ReadPlacement(STAGES, MIB).place(), "a new feed starts where it is cheaper");
        ReadPlacement.setRatio(1.5);
        assertEquals(Place.AHEAD, new ReadPlacement(STAGES, MIB).place());
    }

    @Test
    void everyEighthWindowIsTimedInThePlaceNotChosen() {
        ReadPlacement.setRatio(0.5);
        ReadPlacement placement = new ReadPlacement(STAGES, MIB);
        long[] clock = {1};
        advance(placement, clock, STAGES, 1.0);
        for (int w = 1; w < ReadPlacement.EXPLORE_EVERY; w++) {
            assertEquals(Place.HERE, advance(placement, clock, WINDOW, 1.0), "window " + w);
        }
        assertEquals(Place.AHEAD, advance(placement, clock, WINDOW, 1.0), "the eighth: explore");
        assertEquals(Place.HERE, advance(placement, clock, STAGES + WINDOW, 2.0), "ahead still costs more: back");
        assertEquals(0.5, ReadPlacement.ratio(), 1e-3);
    }

    @Test
    void aChangeOfLoadTurnsTheChoiceWithinAFewExplorations() {
        ReadPlacement.setRatio(0.5);                    // a busy machine was seen: here was cheaper
        ReadPlacement placement = new ReadPlacement(STAGES, MIB);
        long[] clock = {1};
        advance(placement, clock, STAGES, 1.0);
        int windows = 0;
        // the load ended: ahead now costs half what here does
        while (ReadPlacement.chosen() == Place.HERE && windows < 10 * ReadPlacement.EXPLORE_EVERY) {
            double cost = placement.place() == Place.HERE ? 1.0 : 0.5;
            advance(placement, clock, placement.place() == Place.HERE ? WINDOW : STAGES + WINDOW, cost);
            windows++;
        }
        assertEquals(Place.AHEAD, ReadPlacement.chosen(), "ratio " + ReadPlacement.ratio());
        assertTrue(windows <= 3 * ReadPlacement.EXPLORE_EVERY, windows + " windows");
    }

    @Test
    void theChunksThatSettleAfterAChangeAreNotTimed() {
        ReadPlacement placement = new ReadPlacement(STAGES, MIB);
        long[] clock = {1};
        advance(placement, clock, STAGES + WINDOW, 1.0);                 // ahead, then a change to here
        advance(placement, clock, STAGES, 1000.0);                       // settling: slow, not timed
        advance(placement, clock, WINDOW, 1.0);
        assertEquals(1.0, ReadPlacement.ratio(), 1e-3);
    }

    @Test
    void aWindowSpansSixteenMiBAndAtLeastFourChunks() {
        long[] clock = {1};
        ReadPlacement big = new ReadPlacement(2, 64 * MIB);
        for (int i = 0; i < 2 + 3; i++) {
            clock[0] += 1000;
            big.advanced(64 * MIB, clock[0]);
        }
        assertEquals(Place.AHEAD, big.place());
        big.advanced(64 * MIB, clock[0] + 1000);
        assertEquals(Place.HERE, big.place(), "four chunks of 64 MiB close a window");
        ReadPlacement small = new ReadPlacement(STAGES, MIB);
        assertEquals(Place.AHEAD, advance(small, clock, STAGES + WINDOW - 1, 1.0));
        assertEquals(Place.HERE, advance(small, clock, 1, 1.0), "sixteen chunks of 1 MiB close a window");
    }

    // ---------------------------------------------------------------------------------------------------------
    // The feed in each place

    private static byte[] content(int size) {
        byte[] data = new byte[size];
        for (int i = 0; i < size; i++) {
            data[i] = (byte) (i * 31 + (i >>> 12));
        }
        return data;
    }

    /** Holds the engine's only worker inside a copy's completion until the returned latch is counted down. */
    private static CountDownLatch holdTheWorker(CopyEngine engine) throws InterruptedException {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        MemorySegment src = Arena.ofAuto().allocate(engine.inlineThreshold() * 2);
        MemorySegment dst = Arena.ofAuto().allocate(engine.inlineThreshold() * 2);
        engine.copy(dst, src, failure -> {
            entered.countDown();
            try {
                release.await(20, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertTrue(entered.await(10, TimeUnit.SECONDS), "the worker never ran the holding copy");
        return release;
    }

    @Test
    void readingHereSubmitsNothingAndReadsEveryChunkOnTheIteratingThread(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("data");
        byte[] data = content((int) (3 * MIB + 77));
        Files.write(file, data);
        CRC32C expected = new CRC32C();
        expected.update(data);
        try (CopyEngine engine = CopyEngine.builder().workers(1).name("place-1").build()) {
            CountDownLatch release = holdTheWorker(engine);
            try {
                ReadPlacement.setRatio(0.5);
                int before = CopyWorkers.copiesInFlight();
                CRC32C crc = new CRC32C();
                try (var chunks = Prefetch.from(file).copyEngine(engine).chunk((int) MIB).stages(STAGES).open()) {
                    assertEquals(before, CopyWorkers.copiesInFlight(), "here: open() submitted no read");
                    for (MemorySegment chunk : chunks) {
                        crc.update(chunk.asByteBuffer());     // the only worker is held: the reads are this thread's
                    }
                }
                assertEquals(expected.getValue(), crc.getValue());

                ReadPlacement.setRatio(2.0);
                try (var chunks = Prefetch.from(file).copyEngine(engine).chunk((int) MIB).stages(STAGES).open()) {
                    assertTrue(CopyWorkers.copiesInFlight() > before, "ahead: open() submitted its reads");
                    crc.reset();
                    for (MemorySegment chunk : chunks) {
                        crc.update(chunk.asByteBuffer());     // the waits perform the queued reads
                    }
                }
                assertEquals(expected.getValue(), crc.getValue());
            } finally {
                release.countDown();
            }
        }
    }

    @Test
    void anInterruptInsideAReadHereFailsNothing(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("data");
        byte[] data = content((int) (8 * MIB));
        Files.write(file, data);
        CRC32C expected = new CRC32C();
        expected.update(data);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (CopyEngine engine = CopyEngine.builder().workers(1).name("place-2").build()) {
            for (int pass = 0; pass < 10; pass++) {           // the interrupts must meet reads: a few passes
                ReadPlacement.setRatio(0.5);
                AtomicBoolean done = new AtomicBoolean();
                CountDownLatch iterating = new CountDownLatch(1);
                Thread[] iterator = new Thread[1];
                Future<String> result = pool.submit(() -> {
                    iterator[0] = Thread.currentThread();
                    CRC32C crc = new CRC32C();
                    boolean interrupted;
                    try (var chunks = Prefetch.from(file).copyEngine(engine).chunk(64 << 10).stages(STAGES).open()) {
                        iterating.countDown();
                        for (MemorySegment chunk : chunks) {
                            crc.update(chunk.asByteBuffer());
                        }
                    } catch (RuntimeException e) {
                        return e.getClass().getSimpleName() + ": " + e.getCause();
                    } finally {
                        done.set(true);
                        interrupted = Thread.interrupted();
                    }
                    return crc.getValue() == expected.getValue() ? "intact" : "crc differs, interrupted " + interrupted;
                });
                assertTrue(iterating.await(10, TimeUnit.SECONDS));
                while (!done.get()) {
                    iterator[0].interrupt();
                    Thread.yield();
                }
                assertEquals("intact", result.get(20, TimeUnit.SECONDS), "pass " + pass);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aReadHereThatFailsFailsItsChunkAfterEveryEarlierOne(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("data");
        Files.write(file, content((int) (4 * MIB)));
        ReadPlacement.setRatio(0.5);
        int delivered = 0;
        try (var chunks = Prefetch.from(file).chunk((int) MIB).stages(STAGES).open()) {
            try (RandomAccessFile shrink = new RandomAccessFile(file.toFile(), "rw")) {
                shrink.setLength(2 * MIB + MIB / 2);        // after open(): the third chunk ends early
            }
            var it = chunks.iterator();
            for (int c = 0; c < 2; c++) {
                assertTrue(it.hasNext());
                assertEquals(MIB, it.next().byteSize());
                delivered++;
            }
            ChunkFailedException e = assertThrows(ChunkFailedException.class, it::hasNext);
            assertInstanceOf(EOFException.class, e.getCause(), String.valueOf(e.getCause()));
        }
        assertEquals(2, delivered);
    }

    @Test
    void aFeedOfTheUsersChannelNeverReadsHere(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("data");
        byte[] data = content((int) (2 * MIB));
        Files.write(file, data);
        ReadPlacement.setRatio(0.5);
        try (var channel = java.nio.channels.FileChannel.open(file);
             CopyEngine engine = CopyEngine.builder().workers(1).name("place-3").build()) {
            int before = CopyWorkers.copiesInFlight();
            CountDownLatch release;
            try {
                release = holdTheWorker(engine);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            try (var chunks = Prefetch.from(channel).copyEngine(engine).chunk((int) MIB).stages(STAGES).open()) {
                try {
                    assertTrue(CopyWorkers.copiesInFlight() > before + 1, "the user's channel: read on the engine");
                } finally {
                    release.countDown();            // before close(), which waits for the reads
                }
                assertEquals(2, java.util.stream.StreamSupport.stream(chunks.spliterator(), false).count());
            }
        }
    }
}
