package dev.jpipeline.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.trace.StageOperation;
import dev.jpipeline.trace.TraceEvent;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code stream --processes} and {@code demo --processes}: the producers and the consumers in two child JVMs, the
 * report and the verified result from the parent (this JVM), the options refused, and a child that dies mid-run.
 */
@Timeout(120)
class ProcessesTest {

    /** Region files this JVM's runs left behind: none, ever. */
    private static List<Path> leftRegions() throws IOException {
        String prefix = "jpipeline-" + ProcessHandle.current().pid() + "-";
        List<Path> left = new java.util.ArrayList<>();
        for (String dir : new String[] {"/dev/shm", System.getProperty("java.io.tmpdir")}) {
            if (Files.isDirectory(Path.of(dir))) {
                try (Stream<Path> files = Files.list(Path.of(dir))) {
                    files.filter(f -> f.getFileName().toString().startsWith(prefix)).forEach(left::add);
                }
            }
        }
        return left;
    }

    @Test
    void aFileStreamedByChildJvmsGivesTheResultOfOneJvmVerified(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("data.bin");
        MemorySegment data = StreamJob.synthetic((3 << 20) + 4321).data();        // a partial last chunk and word
        Files.write(file, data.toArray(ValueLayout.JAVA_BYTE));
        CRC32C crc = new CRC32C();
        crc.update(data.asByteBuffer());
        String[] here = Cli.run("stream", file.toString(), "--chunk", "256k", "--consumers", "3");
        String[] children = Cli.run("stream", file.toString(), "--chunk", "256k", "--consumers", "3", "--processes");
        assertEquals("0", children[0], children[1] + children[2]);
        assertEquals(String.format("0x%08x", crc.getValue()), StreamCommandTest.result(children[1]));
        assertEquals(StreamCommandTest.result(here[1]), StreamCommandTest.result(children[1]));
        String out = children[1];
        assertTrue(out.startsWith("jpipeline stream: " + file + " (3.0 MiB), 4 stages, 2 producers, 3 consumers, "
            + "chunks of 256.0 KiB, crc32c, futex waiting across processes"), out);
        assertTrue(out.matches("(?s).*\n  processes producers in pid \\d+, consumers in pid \\d+; they met in .*"),
            out);
        assertTrue(out.contains("\n  time      ") && out.contains("\n  overlap   efficiency ")
            && out.contains("\n  stalls    producers waited ") && out.contains("\n  reading   "), out);
        assertTrue(out.contains("\n  verified  a direct pass over " + file + " in this JVM gives the same crc32c"),
            out);
        assertEquals(List.of(), leftRegions());
    }

    @Test
    void syntheticDataSummedByChildJvmsMatchesTheDirectSum() {
        long size = (2L << 20) + 24;
        // the copies on the producers' JVM's engine: the last ones land before that JVM closes what they touch
        String[] r = Cli.run("stream", "--synthetic", Long.toString(size), "--op", "sum", "--producers", "1",
            "--chunk", "128k", "--copy-policy", "engine", "--copy-workers", "1", "--processes");
        assertEquals("0", r[0], r[1] + r[2]);
        assertEquals(String.format("0x%016x", StreamJob.sumWords(StreamJob.synthetic(size).data())),
            StreamCommandTest.result(r[1]));
        assertTrue(r[1].contains("1 producer, 2 consumers"), r[1]);
        assertTrue(r[1].contains("verified  a direct pass over synthetic in this JVM gives the same sum"), r[1]);
    }

    @Test
    void theDemoInChildJvmsVerifies() throws Exception {
        String[] r = Cli.run("demo", "--size", "4MiB", "--chunk", "64k", "--processes");
        assertEquals("0", r[0], r[1] + r[2]);
        assertTrue(r[1].startsWith("jpipeline demo: 2 producer threads copy chunks into 4 stage buffers while 2 "
            + "consumer threads checksum them\n  a partitioned pipeline, system scope (cuda::thread_scope_system): "
            + "producers and consumers in two JVMs, one memory file\n"
            + "  processes producers in pid "), r[1]);
        assertTrue(r[1].contains("streamed 4.0 MiB as 64 chunks of 64.0 KiB"), r[1]);
        assertTrue(r[1].contains(": verified"), r[1]);
        assertEquals(List.of(), leftRegions());
    }

    @Test
    void whatChildJvmsCannotDoIsRefusedInOneLine(@TempDir Path dir) throws Exception {
        Path empty = Files.createFile(dir.resolve("empty.bin"));
        String[][] cases = {
            {"stream", "-", "--processes"},
            {"stream", "--processes", "--trace", dir.resolve("t.json").toString()},
            {"stream", "--processes", "--timeline", dir.resolve("t.html").toString()},
            {"stream", "--processes", "--wait", "spin"},
            {"stream", empty.toString(), "--processes"},
            {"stream", "--synthetic", "1m", "--test-crash-producers-at", "3"},
        };
        String[] expected = {
            "--processes cannot stream stdin",
            "--processes cannot write --trace",
            "--processes cannot write --timeline",
            "--wait does not apply with --processes",
            "--processes needs a FILE whose size is known before it is read, but " + empty + " is empty",
            "--test-crash-producers-at crashes the producers' JVM of a --processes run: give --processes",
        };
        for (int i = 0; i < cases.length; i++) {
            String[] r = Cli.run(cases[i]);
            assertEquals("2", r[0], String.join(" ", cases[i]) + ": " + r[2]);
            assertEquals(1, r[2].strip().lines().count(), r[2]);
            assertTrue(r[2].startsWith("jpipeline: " + expected[i]), r[2]);
        }
    }

    /**
     * When the producers' JVM (a child of this one: the command runs here) was seen to end, in
     * {@code System.nanoTime()}; 0 until then, and for good where it cannot be told from the consumers' (no
     * /proc). Watches this JVM's children for the producers' side of a {@code stream --processes} run until it has
     * ended, or until {@code done}.
     */
    private static AtomicLong watchProducersEnd(AtomicBoolean done) {
        AtomicLong ended = new AtomicLong();
        Thread.ofPlatform().daemon().name("producers-jvm-watcher").start(() -> {
            while (!done.get()) {
                Optional<ProcessHandle> producers = ProcessHandle.current().children()
                    .filter(ProcessesTest::isProducersJvm).findFirst();
                if (producers.isPresent()) {
                    producers.get().onExit().thenRun(() -> ended.compareAndSet(0, System.nanoTime()));
                    return;
                }
                LockSupport.parkNanos(1_000_000);
            }
        });
        return ended;
    }

    /**
     * Whether {@code child} runs the producers' side of a stream run: its command line, read whole from /proc
     * (ProcessHandle.Info cuts it at 4 KiB, before a long class path ends), has {@code stream-child --side
     * producers}.
     */
    private static boolean isProducersJvm(ProcessHandle child) {
        try {
            String command = Files.readString(Path.of("/proc", Long.toString(child.pid()), "cmdline"),
                StandardCharsets.ISO_8859_1);
            return command.contains("\0stream-child\0--side\0producers\0");
        } catch (IOException | RuntimeException gone) {
            return false;       // no /proc, or the child has ended meanwhile
        }
    }

    @Test
    @Timeout(60)
    void aProducersJvmThatDiesHoldingAStageFailsTheRunNamingIt() throws Exception {
        long start = System.nanoTime();
        AtomicBoolean done = new AtomicBoolean();
        AtomicLong producersEnded = watchProducersEnd(done);
        // copies on the producers' threads: every batch before 5 has landed when the producers' JVM halts
        String[] r = Cli.run("stream", "--synthetic", "16m", "--chunk", "256k", "--copy-policy", "producer",
            "--processes", "--test-crash-producers-at", "5");
        long end = System.nanoTime();
        done.set(true);
        // from the producers' death to the run's end (from the start when the watcher missed the producers' JVM):
        // the two JVMs' start and the batches before the crash take what the machine gives them, not the grace
        long seconds = (end - (producersEnded.get() != 0 ? producersEnded.get() : start)) / 1_000_000_000L;
        assertEquals("1", r[0], r[1] + r[2]);
        assertEquals(1, r[2].strip().lines().count(), r[2]);
        assertTrue(r[2].matches("jpipeline: the producers' JVM \\(pid \\d+\\) exited with status "
            + StreamProcesses.CRASHED + " and printed no message; the consumers' JVM \\(pid \\d+\\) exited with "
            + "status 1: reading synthetic failed at offset 1310720 \\(batch 5\\): .*producer rank [01] \\(pid \\d+.* "
            + "died after acquiring stage 1 \\(batch 5\\) without committing it.*\n"), r[2]);
        assertTrue(seconds < ChildProcesses.GRACE.toSeconds(), "the consumers heard of it at once, not after the "
            + "grace period: the run ended " + seconds + " s after " + (producersEnded.get() != 0
            ? "the producers' JVM" : "its start"));
        assertEquals(List.of(), leftRegions());
    }

    /**
     * Issue 26: a SIGKILL of the whole process group of a run left its region file in /dev/shm for good, because
     * the file was deleted only at the run's end. Now its name is unlinked as soon as both children have mapped it
     * (a child reported its pipeline made): the test sees the file gone while the producers' JVM still runs, the
     * moment from which a SIGKILL of every process leaves nothing behind.
     */
    @Test
    @Timeout(60)
    void theRegionFileIsUnlinkedWhileTheChildrenStillRun() throws Exception {
        AtomicBoolean done = new AtomicBoolean();
        java.util.concurrent.CompletableFuture<String[]> run = java.util.concurrent.CompletableFuture.supplyAsync(
            () -> Cli.run("stream", "--synthetic", "512m", "--chunk", "1m", "--processes"),
            task -> Thread.ofPlatform().start(task));
        boolean seen = false;
        while (!run.isDone() && !seen) {
            for (ProcessHandle child : ProcessHandle.current().children().filter(ProcessesTest::isProducersJvm)
                .toList()) {
                Path region = regionOf(child);
                seen |= region != null && !Files.exists(region) && child.isAlive() && isProducersJvm(child);
            }
            LockSupport.parkNanos(2_000_000);
        }
        done.set(true);
        String[] r = run.get(50, java.util.concurrent.TimeUnit.SECONDS);
        assertEquals("0", r[0], r[1] + r[2]);
        assertTrue(seen, "the region file existed as long as the producers' JVM ran");
        assertEquals(List.of(), leftRegions());
    }

    /** The region a child JVM of a --processes run was given ({@code --region PATH}), or null. */
    private static Path regionOf(ProcessHandle child) {
        try {
            String[] words = Files.readString(Path.of("/proc", Long.toString(child.pid()), "cmdline"),
                StandardCharsets.ISO_8859_1).split("\0");
            for (int i = 0; i + 1 < words.length; i++) {
                if (words[i].equals("--region")) {
                    return Path.of(words[i + 1]);
                }
            }
        } catch (IOException | RuntimeException gone) {
            // ended meanwhile
        }
        return null;
    }

    @Test
    void aChildsReportReadsBackAndAStrangeLineIsNamed() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        TraceEvent event = new TraceEvent("jpipeline-rank-2", 2, "consumer", StageOperation.WAIT, 5, 7, 1, 9);
        ChildReport.printEvents(out, List.of(event), 1000);
        ChildReport.print(out, ChildReport.VALUE, "0x1234");
        ChildReport.print(out, ChildReport.FAILURE, "first\nline");
        ChildReport.print(out, ChildReport.FAILURE, "second");
        ChildReport report = new ChildReport();
        bytes.toString(StandardCharsets.UTF_8).lines().forEach(report::accept);
        assertEquals(List.of(new TraceEvent("jpipeline-rank-2", 2, "consumer", StageOperation.WAIT, 1005, 7, 1, 9)),
            report.events());
        assertEquals("0x1234", report.text(ChildReport.VALUE));
        assertEquals("first line", report.text(ChildReport.FAILURE));
        assertEquals(-1, report.number(ChildReport.BYTES, -1));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> report.accept("Exception in thread main"));
        assertEquals("a line that is not a child's report (no such key): Exception in thread main", e.getMessage());
    }
}
