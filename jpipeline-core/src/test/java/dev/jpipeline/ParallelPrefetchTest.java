package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.copy.CopyEngine;
import dev.jpipeline.prefetch.ChunkFailedException;
import dev.jpipeline.prefetch.Crc32cPart;
import dev.jpipeline.prefetch.ParallelPrefetch;
import dev.jpipeline.prefetch.Prefetch;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The parallel form ({@link ParallelPrefetch}): for every source kind, random producer and consumer counts, whole
 * chunks and shares, the results combine in source order (a byte-concatenating and a CRC-32C reduction, neither
 * commutative); failures of a read, the mapper and the combiner stop every thread and name their chunk. Seeded:
 * the seed is printed, and {@code -Djpipeline.prefetch.seed=S} replays it.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ParallelPrefetchTest {

    @TempDir
    Path dir;

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] both = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, both, a.length, b.length);
        return both;
    }

    private static long crc(byte[] data) {
        CRC32C crc = new CRC32C();
        crc.update(data);
        return crc.getValue();
    }

    @Test
    void resultsCombineInSourceOrderForEverySourceKindAndSplit() throws IOException {
        long seed = Long.getLong("jpipeline.prefetch.seed", System.nanoTime());
        System.out.println("ParallelPrefetchTest seed " + seed + " (replay: -Djpipeline.prefetch.seed=" + seed + ")");
        Random random = new Random(seed);
        for (int round = 0; round < 24; round++) {
            int kind = round % 4;
            int chunk = random.nextInt(1, 40_000);
            int length = random.nextInt(3) == 0 ? chunk * random.nextInt(0, 4) : random.nextInt(0, 300_000);
            byte[] data = new byte[length];
            random.nextBytes(data);
            Prefetch prefetch = switch (kind) {
                case 0 -> Prefetch.from(Files.write(dir.resolve("f" + round), data));
                case 1 -> Prefetch.from(MemorySegment.ofArray(data));
                case 2 -> Prefetch.from(List.of(MemorySegment.ofArray(data).asSlice(0, length / 3),
                    MemorySegment.ofArray(data).asSlice(length / 3)));
                default -> Prefetch.from(new ByteArrayInputStream(data));
            };
            int producers = kind < 2 ? random.nextInt(1, 4) : 1;
            int consumers = random.nextInt(1, 5);
            int stages = random.nextInt(1, 6);
            boolean shares = random.nextBoolean();
            ParallelPrefetch parallel = prefetch.chunk(chunk).stages(stages).parallel(producers, consumers);
            if (shares) {
                parallel.shares(random.nextInt(1, 9));
            }
            String what = parallel + ", " + length + " bytes, seed " + seed;
            assertArrayEquals(data, parallel.reduce(new byte[0], s -> s.toArray(ValueLayout.JAVA_BYTE),
                ParallelPrefetchTest::concat), what);
            if (kind < 2) {          // a source with positions can be read again
                Crc32cPart crc = parallel.reduce(Crc32cPart.EMPTY, Crc32cPart::of, Crc32cPart::then);
                assertEquals(new Crc32cPart(crc(data), length), crc, what);
            }
        }
    }

    @Test
    void crcPartsCombineIntoTheCrcOfTheWhole() {
        byte[] data = new byte[100_000];
        new Random(5).nextBytes(data);
        MemorySegment all = MemorySegment.ofArray(data);
        for (int cut : new int[] {0, 1, 4096, 99_999, 100_000}) {
            Crc32cPart a = Crc32cPart.of(all.asSlice(0, cut));
            Crc32cPart b = Crc32cPart.of(all.asSlice(cut));
            assertEquals(new Crc32cPart(crc(data), data.length), a.then(b), "cut at " + cut);
            assertEquals(a, a.then(Crc32cPart.EMPTY));
            assertEquals(b, Crc32cPart.EMPTY.then(b));
        }
        assertThrows(IllegalArgumentException.class, () -> new Crc32cPart(-1, 0));
        assertThrows(IllegalArgumentException.class, () -> new Crc32cPart(0, -1));
    }

    @Test
    void aFailedReadStopsEveryThreadAndNamesItsChunk() {
        byte[] data = new byte[20 * 1000];
        GatedFileChannel channel = new GatedFileChannel(data);
        channel.failFrom(7 * 1000);
        ChunkFailedException e = assertThrows(ChunkFailedException.class, () -> Prefetch.from(channel).chunk(1000)
            .stages(3).parallel(2, 3).reduce(0L, s -> s.byteSize(), Long::sum));
        assertEquals(7, e.chunk());
        assertEquals(7000, e.position());
        assertInstanceOf(IOException.class, e.getCause());
        assertTrue(e.getMessage().startsWith("reading chunk 7 (from byte 7000)"), e.getMessage());
        assertNoTeamThreadLeft();
    }

    @Test
    void withNoCoreToSpareTheProducersReadTheFileThemselves() {
        int consumers = Math.max(1, Runtime.getRuntime().availableProcessors() / 2);    // twice the threads >= cores
        byte[] data = new byte[12 * 1000];
        new Random(11).nextBytes(data);
        GatedFileChannel channel = new GatedFileChannel(data);
        try (CopyEngine engine = CopyEngine.builder().workers(1).name("pp-engine").build()) {
            long sum = Prefetch.from(channel).chunk(1000).stages(2).copyEngine(engine).parallel(2, consumers)
                .reduce(0L, ParallelPrefetchTest::byteSum, Long::sum);
            assertEquals(byteSum(MemorySegment.ofArray(data)), sum);
        }
        for (long position = 0; position < data.length; position += 500) {        // two producers' shares
            Thread reader = channel.reader(position);
            assertTrue(reader != null && !reader.getName().startsWith("pp-engine"), "the read at " + position
                + " ran on " + reader + ", not on a producer");
        }
        assertNoTeamThreadLeft();
    }

    private static long byteSum(MemorySegment s) {
        long sum = 0;
        for (long i = 0; i < s.byteSize(); i++) {
            sum += s.get(ValueLayout.JAVA_BYTE, i);
        }
        return sum;
    }

    @Test
    void aMapperOrCombinerThatThrowsStopsTheRunAtTheLowestChunk() {
        MemorySegment data = MemorySegment.ofArray(new byte[50 * 100]);
        IllegalArgumentException planted = new IllegalArgumentException("the mapper refuses this chunk");
        ChunkFailedException e = assertThrows(ChunkFailedException.class, () -> Prefetch.from(data).chunk(100)
            .stages(4).parallel(1, 3).reduce(0L, s -> {
                if (s.address() == data.asSlice(0).address() + 1) {
                    throw new AssertionError("views are of the stage buffers, not of the source");
                }
                return s.byteSize();
            }, (a, b) -> {
                if (a == 100 * 11) {
                    throw planted;
                }
                return a + b;
            }));
        assertEquals(11, e.chunk(), "the sum reached 11 chunks when chunk 11's result was folded");
        assertSame(planted, e.getCause());
        assertTrue(e.getMessage().startsWith("combining the result of chunk 11 (from byte 1100)"), e.getMessage());
        long[] calls = new long[1];
        e = assertThrows(ChunkFailedException.class, () -> Prefetch.from(data).chunk(100).stages(4).parallel(2, 4)
            .shares(8).reduce(0L, s -> {
                synchronized (calls) {
                    calls[0]++;
                }
                if (s.get(ValueLayout.JAVA_BYTE, 0) == 0 && s.byteSize() == 24) {
                    throw planted;      // a share of 24 bytes: the last consumer's share of every chunk
                }
                return 0L;
            }, Long::sum));
        assertEquals(0, e.chunk());
        assertTrue(e.getMessage().startsWith("computing on chunk 0"), e.getMessage());
        assertTrue(calls[0] < 50 * 4, "the run stopped early, after " + calls[0] + " calls");
        assertNoTeamThreadLeft();
    }

    @Test
    void aSegmentKeptPastItsCallFailsLoudly() {
        AtomicReference<MemorySegment> kept = new AtomicReference<>();
        List<Throwable> later = new ArrayList<>();      // touched by the one consumer thread only
        long total = Prefetch.from(MemorySegment.ofArray(new byte[3000])).chunk(1000).parallel(1, 1)
            .reduce(0L, s -> {
                MemorySegment before = kept.getAndSet(s);
                if (before != null) {
                    try {
                        before.get(ValueLayout.JAVA_BYTE, 0);
                    } catch (IllegalStateException e) {
                        later.add(e);
                    }
                }
                return s.byteSize();
            }, Long::sum);
        assertEquals(3000, total);
        assertEquals(2, later.size(), "each earlier chunk's view was closed when its call returned: " + later);
        assertThrows(WrongThreadException.class, () -> kept.get().get(ValueLayout.JAVA_BYTE, 0),
            "a view is confined to the consumer thread");
    }

    @Test
    void emptySourcesGiveTheIdentityAndBadArgumentsAreRefused() {
        assertEquals(7L, Prefetch.from(MemorySegment.ofArray(new byte[0])).parallel(2, 2)
            .reduce(7L, MemorySegment::byteSize, Long::sum));
        assertEquals(7L, Prefetch.from(new ByteArrayInputStream(new byte[0])).parallel(1, 2)
            .reduce(7L, MemorySegment::byteSize, Long::sum));
        Prefetch p = Prefetch.from(MemorySegment.ofArray(new byte[10])).chunk(100);
        assertTrue(assertThrows(IllegalArgumentException.class, () -> p.parallel(0, 1)).getMessage()
            .contains("got 0 producers and 1 consumers"));
        assertThrows(IllegalArgumentException.class, () -> p.parallel(1, 0));
        assertThrows(IllegalArgumentException.class, () -> p.parallel(600, 600));
        IllegalArgumentException stream = assertThrows(IllegalArgumentException.class,
            () -> Prefetch.from(new ByteArrayInputStream(new byte[1])).parallel(2, 1));
        assertTrue(stream.getMessage().contains("read in order by one producer, not 2"), stream.getMessage());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> p.parallel(1, 1).shares(101)).getMessage()
            .contains("1 to the chunk size 100, got 101"));
        assertThrows(NullPointerException.class, () -> p.parallel(1, 1).reduce(0L, null, Long::sum));
    }

    /** Every team thread of a run has ended once reduce returned or threw. */
    private static void assertNoTeamThreadLeft() {
        List<String> left = new ArrayList<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("jpipeline-team-") && t.isAlive()) {
                left.add(t.getName() + " " + t.getState());
            }
        }
        assertFalse(left.size() > 0 && !waitForEnd(), "team threads still running: " + left);
    }

    private static boolean waitForEnd() {
        Teams.awaitTrue("the team threads end", () -> Thread.getAllStackTraces().keySet().stream()
            .noneMatch(t -> t.getName().startsWith("jpipeline-team-") && t.isAlive()));
        return true;
    }

    @Test
    void theParallelFormWithManyConsumersAndAFailingReadNamesTheLowestChunk() {
        byte[] bytes = TestSegments.randomBytes(40 * 1000, 9);
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
