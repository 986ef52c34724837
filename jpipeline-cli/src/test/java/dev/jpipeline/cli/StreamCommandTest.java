package dev.jpipeline.cli;

import static java.util.stream.Collectors.toSet;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.jpipeline.CopyPolicy;
import dev.jpipeline.WaitStrategy;
import dev.jpipeline.trace.Tracer;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(300)
class StreamCommandTest {

    static String result(String output) {
        Matcher m = Pattern.compile("result +\\w+ (\\S+)").matcher(output);
        assertTrue(m.find(), output);
        return m.group(1);
    }

    private static String crc32cOf(MemorySegment data) {
        CRC32C crc = new CRC32C();
        crc.update(data.asByteBuffer());
        return String.format("0x%08x", crc.getValue());
    }

    @Test
    void syntheticResultsMatchTheJdk() throws Exception {
        long size = 5L * 1024 * 1024 + 123;                // a partial last chunk and a partial last word
        MemorySegment data = StreamJob.synthetic(size).data();
        String[] crc = Cli.run("stream", "--synthetic", String.valueOf(size), "--op", "crc32c", "--consumers", "3",
            "--chunk", "256k");
        assertEquals("0", crc[0], crc[2]);
        assertEquals(crc32cOf(data), result(crc[1]));
        String[] sha = Cli.run("stream", "--synthetic", String.valueOf(size), "--op", "sha256", "--producers", "3");
        MessageDigest digest = MessageDigest.getInstance("SHA-256");
        digest.update(data.asByteBuffer());
        assertEquals(HexFormat.of().formatHex(digest.digest()), result(sha[1]));
        String[] sum = Cli.run("stream", "--synthetic", String.valueOf(size), "--op", "sum", "--wait", "block");
        assertEquals(String.format("0x%016x", StreamJob.sumWords(data)), result(sum[1]));
        assertTrue(sum[1].contains("stalls    producers waited"), sum[1]);
        assertTrue(sum[1].contains("reading   "), sum[1]);
    }

    @Test
    void aOneGibFileGivesTheJdksChecksums(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("one-gib.bin");
        MemorySegment block = StreamJob.synthetic(16L << 20).data();
        CRC32C expected = new CRC32C();
        try (FileChannel out = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            for (int i = 0; i < 64; i++) {
                block.set(ValueLayout.JAVA_LONG, 0, i);          // no two blocks alike
                ByteBuffer buffer = block.asByteBuffer();
                expected.update(buffer.duplicate());
                while (buffer.hasRemaining()) {
                    out.write(buffer);
                }
            }
        }
        String[] crc = Cli.run("stream", file.toString(), "--op", "crc32c", "--stages", "4", "--chunk", "4m");
        assertEquals("0", crc[0], crc[2]);
        assertEquals(String.format("0x%08x", expected.getValue()), result(crc[1]));
        assertTrue(crc[1].contains("(1 GiB)"), crc[1]);
    }

    @Test
    void theTraceHoldsEventsForEveryThread(@TempDir Path dir) throws Exception {
        Path trace = dir.resolve("trace.json");
        String[] out = Cli.run("stream", "--synthetic", "8m", "--producers", "2", "--consumers", "3", "--trace",
            trace.toString());
        assertEquals("0", out[0], out[2]);
        JsonNode root = new ObjectMapper().readTree(trace.toFile());
        Set<String> lanes = new HashSet<>();
        Set<Integer> tidsWithEvents = new HashSet<>();
        for (JsonNode e : root.get("traceEvents")) {
            if (e.get("ph").asText().equals("M")) {
                lanes.add(e.get("args").get("name").asText());
            } else {
                tidsWithEvents.add(e.get("tid").asInt());
            }
        }
        assertEquals(5, lanes.stream().filter(l -> !l.startsWith("copies of ")).count(), "5 threads: " + lanes);
        assertEquals(Set.of("copies of producer 0", "copies of producer 1"), lanes.stream()
            .filter(l -> l.startsWith("copies of ")).map(l -> l.substring(0, l.indexOf(','))).collect(toSet()),
            "2 producers' copies, a track per copy in flight: " + lanes);
        assertEquals(lanes.size(), tidsWithEvents.size());
        assertTracksNest(root);
    }

    /**
     * Loads a trace the way Perfetto does: per track (pid, tid), complete events nest (no partial overlap, which
     * Perfetto drops as slice_drop_overlapping_complete_event).
     */
    static void assertTracksNest(JsonNode root) {
        Map<String, List<long[]>> tracks = new HashMap<>();
        for (JsonNode e : root.get("traceEvents")) {
            if (e.get("ph").asText().equals("X")) {       // in nanoseconds, as Perfetto converts them
                long ts = Math.round(e.get("ts").asDouble() * 1000);
                tracks.computeIfAbsent(e.get("pid").asText() + "/" + e.get("tid").asText(), t -> new ArrayList<>())
                    .add(new long[] {ts, ts + Math.round(e.get("dur").asDouble() * 1000)});
            }
        }
        tracks.forEach((track, slices) -> {
            slices.sort(Comparator.<long[]>comparingLong(x -> x[0]).thenComparingLong(x -> -x[1]));
            Deque<Long> ends = new ArrayDeque<>();
            for (long[] x : slices) {
                while (!ends.isEmpty() && ends.peek() <= x[0]) {
                    ends.pop();
                }
                assertTrue(ends.isEmpty() || x[1] <= ends.peek(), "track " + track + ": a slice from " + x[0]
                    + " to " + x[1] + " partly overlaps one ending at " + ends.peek());
                ends.push(x[1]);
            }
        });
    }

    @Test
    void aRunLongerThanTheTracerKeepsIsReportedOverTheNewestEventsWithTheDroppedCount(@TempDir Path dir)
        throws Exception {
        Path trace = dir.resolve("trace.json");
        // 16 MiB in 256 KiB chunks: 64 batches, 128 events per thread and 64 copies per producer (128 KiB each,
        // on the copy engine), of which the tracer keeps 16
        String[] out = Cli.run("stream", "--synthetic", "16m", "--chunk", "256k", "--trace-events", "16",
            "--copy-policy", "engine", "--trace", trace.toString());
        assertEquals("0", out[0], out[2]);
        assertTrue(out[1].contains("window    the tracer kept each thread's newest 16 events ("), out[1]);
        assertTrue(out[1].contains("stalls    producers waited"), out[1]);
        JsonNode root = new ObjectMapper().readTree(trace.toFile());
        long dropped = root.get("otherData").get("droppedEvents").asLong();
        long kept = 0;
        for (JsonNode e : root.get("traceEvents")) {
            kept += e.get("ph").asText().equals("X") && !e.get("name").asText().equals("compute") ? 1 : 0;
        }
        assertEquals(6 * 16, kept, "4 threads and 2 producers' copies, 16 events each");
        assertEquals(64L * (2 * 2 + 2 * 1 + 2 * 2) - kept, dropped, "all the others, counted");
        assertTrue(out[1].contains("(" + kept + " events, the newest; " + dropped + " dropped)"), out[1]);
    }

    @Test
    void aFileReadByAnEngineOfOneOrThreeCopyWorkersGivesTheJdksChecksum(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("data.bin");
        MemorySegment data = StreamJob.synthetic((4 << 20) + 77).data();
        Files.write(file, data.toArray(ValueLayout.JAVA_BYTE));
        for (String workers : new String[] {"1", "3"}) {
            String[] out = Cli.run("stream", file.toString(), "--copy-workers", workers, "--chunk", "512k");
            assertEquals("0", out[0], out[2]);
            assertEquals(crc32cOf(data), result(out[1]));
        }
    }

    @Test
    void theTracerStaysWithinItsBudgetAndSaysSo(@TempDir Path dir) throws Exception {
        Path trace = dir.resolve("trace.json");
        String[] out = Cli.run("stream", "--synthetic", "1m", "--trace-events",
            String.valueOf(Tracer.MAX_EVENTS_PER_LANE), "--trace", trace.toString());
        assertEquals("0", out[0], out[2]);
        long perLane = StreamCommand.EVENT_BUDGET / (2 * 4);
        assertTrue(out[1].contains("memory    the tracer keeps " + perLane + " events per thread, not the "
            + Tracer.MAX_EVENTS_PER_LANE + " asked for: at most " + StreamCommand.EVENT_BUDGET
            + " over all 4 threads and their copies (8 lanes)"),
            out[1]);
        JsonNode written = new ObjectMapper().readTree(trace.toFile());
        assertEquals(perLane, written.get("otherData").get("eventsPerLane").asLong());
    }

    @Test
    void everyCopyPolicyStreamsTheSameResult() {
        String expected = null;
        for (String policy : new String[] {"auto", "producer", "engine"}) {
            String[] out = Cli.run("stream", "--synthetic", "8m", "--chunk", "512k", "--op", "sum", "--copy-policy",
                policy);
            assertEquals("0", out[0], policy + ": " + out[2]);
            String result = out[1].lines().filter(l -> l.strip().startsWith("result")).findFirst().orElseThrow();
            if (expected == null) {
                expected = result;
            }
            assertEquals(expected, result, policy);
        }
    }

    @Test
    void badArgumentsGiveOneLineAndExitCode2(@TempDir Path dir) {
        String[][] cases = {
            {"stream", "--op", "md5"},
            {"stream", "--stages", "0"},
            {"stream", dir.resolve("missing.bin").toString()},
            {"stream", "--producers", "0"},
            {"stream", "--consumers", "0"},
            {"stream", "--chunk", "-3"},
            {"stream", "--wait", "sleepy"},
            {"stream", "--copy-policy", "gpu"},
            {"stream", "--trace-events", "8"},
            {"stream", "--copy-workers", "0"},
            {"stream", "--op", "sum", "--chunk", "12"},
            {"stream", "--chunk", "1.5"},
        };
        for (String[] args : cases) {
            String[] r = Cli.run(args);
            assertEquals("2", r[0], String.join(" ", args) + ": " + r[2]);
            assertEquals(1, r[2].strip().lines().count(), "one line: " + r[2]);
            assertTrue(r[2].startsWith("jpipeline: "), r[2]);
        }
    }

    @Test
    void anIoErrorStopsCleanlyWithTheFileAndOffset(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("data.bin");
        Files.write(file, new byte[3 << 20]);
        FileChannel channel = FileChannel.open(file, StandardOpenOption.READ);
        long size = channel.size();
        channel.close();                                   // every read now fails with ClosedChannelException
        StreamJob.Result result = StreamJob.run(new StreamSource.File(file.toString(), channel, size),
            new StreamJob.Options(2, 1, 1, 1 << 20, StreamOp.CRC32C, WaitStrategy.ADAPTIVE, CopyPolicy.AUTO, null),
            Tracer.create(), new AtomicLong());
        assertTrue(result.failure() != null, "the failure is reported");
        assertTrue(result.failure().startsWith("I/O error reading " + file + " at offset 0"), result.failure());
        assertTrue(result.failure().contains("ClosedChannelException"), result.failure());
    }

    @Test
    void crc32cCombineMatchesTheWholeChecksum() {
        byte[] data = new byte[10_000];
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) (i * 7 + 3);
        }
        CRC32C whole = new CRC32C();
        whole.update(data);
        CRC32C a = new CRC32C();
        a.update(data, 0, 3333);
        CRC32C b = new CRC32C();
        b.update(data, 3333, data.length - 3333);
        assertEquals(whole.getValue(), dev.jpipeline.prefetch.Crc32cPart.combine(a.getValue(), b.getValue(), data.length - 3333));
    }

    @Test
    void syntheticDataTooLargeForMemoryIsOneLineAndExitTwo() {
        String[] r = Cli.run("stream", "--synthetic", "1024g");
        assertEquals("2", r[0], r[2]);
        assertTrue(r[2].startsWith("jpipeline: --synthetic (the data is generated in memory) needs 1024 GiB of memory, "
            + "more than this JVM may allocate"), r[2]);
        assertEquals(1, r[2].strip().lines().count(), r[2]);
    }

    @Test
    void stageBuffersBeyondMemoryAreRefusedBeforeAnyIsAllocated() {
        String[] r = Cli.run("stream", "--synthetic", "1m", "--chunk", "2047m", "--stages", "255");
        assertEquals("2", r[0], r[2]);
        assertTrue(r[2].startsWith("jpipeline: --stages 255 x --chunk 2047.0 MiB = "), r[2]);
        assertTrue(r[2].contains("of stage buffers, more than this JVM may allocate"), r[2]);
    }

    @Test
    void aFileThatCannotBeOpenedIsOneLine() {
        assumeTrue(java.nio.file.Files.exists(java.nio.file.Path.of("/proc/1/mem")), "no /proc/1/mem here");
        String[] r = Cli.run("stream", "/proc/1/mem");
        assertTrue(r[0].equals("2") || r[0].equals("1"), r[0] + " " + r[2]);
        assertEquals(1, r[2].strip().lines().count(), r[2]);
        assertTrue(r[2].startsWith("jpipeline: "), r[2]);
    }

    @Test
    void sumIsThePlainSumOfTheWordsAndItsHelpSaysSo(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("words.bin");
        ByteBuffer words = ByteBuffer.allocate(8 * 4096 + 3).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        long expected = 0;
        for (long i = 1; i <= 4096; i++) {
            words.putLong(i * 0x0101_0101_0101L);
            expected += i * 0x0101_0101_0101L;
        }
        words.put((byte) 1).put((byte) 2).put((byte) 3);
        expected += 0x030201L;                              // the last word, zero-padded
        Files.write(file, words.array());
        String[] sum = Cli.run("stream", file.toString(), "--op", "sum", "--chunk", "8k");
        assertEquals("0", sum[0], sum[2]);
        assertEquals(String.format("0x%016x", expected), result(sum[1]));
        String help = String.join(" ", Cli.run("stream", "--help")[1].split("\\s+"));
        assertTrue(help.contains("sum is the plain 64-bit wrapping sum of the little-endian 8-byte words"), help);
        assertTrue(help.contains("crc32c and sha256 are the JDK's CRC32C and SHA-256 MessageDigest."), help);
    }

    @Test
    void syntheticDataReportsTheTimeToGenerateIt() {
        String[] out = Cli.run("stream", "--synthetic", "4m", "--op", "crc32c");
        assertEquals("0", out[0], out[2]);
        assertTrue(out[1].matches("(?s).*\\n  set-up    generated 4\\.0 MiB in \\d+\\.\\d{3} s, before the run.*"),
            out[1]);
    }
}
