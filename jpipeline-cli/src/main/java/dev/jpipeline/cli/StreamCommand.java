package dev.jpipeline.cli;

import dev.jpipeline.copy.CopyEngine;
import dev.jpipeline.trace.TraceEvent;
import dev.jpipeline.trace.Tracer;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.ToLongFunction;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code jpipeline stream}: streams a file (or built-in synthetic data) through a partitioned pipeline with
 * asynchronous reads into the stage buffers, and reports the result, the throughput, the overlap of copies and
 * computation, and where the time went. The pipeline's threads run in this JVM ({@link StreamJob}) or, with
 * {@code --processes}, in two child JVMs ({@link StreamProcesses}), whose result is then verified.
 */
@Command(name = "stream", mixinStandardHelpOptions = true, versionProvider = BuildVersion.class,
    description = "Stream a file (or synthetic data) through a partitioned pipeline and report how it went.")
final class StreamCommand implements Callable<Integer> {

    /** Events per thread kept for the stall figures when no trace is written: the newest, a window of the run. */
    static final int SUMMARY_EVENTS = 16384;
    /** Most events the tracer keeps over all threads (about 80 MiB, and as much again for the snapshot). */
    static final long EVENT_BUDGET = 1L << 21;
    /** Below this, a stage's hand-off between threads outweighs the work on its data. */
    static final long SMALL_CHUNK = 16 << 10;

    @Spec
    private CommandSpec spec;

    @Parameters(arity = "0..1", paramLabel = "FILE", description = "The file to stream, - for stdin (default: "
        + "synthetic data). A pipe, FIFO or file of unknown size (such as /proc/cpuinfo) is read to its end.")
    private Path file;

    @Option(names = "--synthetic", paramLabel = "SIZE", converter = ByteSize.class,
        description = "Stream SIZE bytes of built-in synthetic data (default 256m when no FILE is given); sizes: "
            + ByteSize.FORMS + ".")
    private Long synthetic;

    @Option(names = "--stages", defaultValue = "4", paramLabel = "N",
        description = "Stages in flight, 1..255 (default ${DEFAULT-VALUE}).")
    private int stages;

    @Option(names = "--producers", defaultValue = "2", paramLabel = "N",
        description = "Producer threads (default ${DEFAULT-VALUE}); a FILE of unknown size is read by one.")
    private int producers;

    @Option(names = "--consumers", defaultValue = "2", paramLabel = "N",
        description = "Consumer threads (default ${DEFAULT-VALUE}).")
    private int consumers;

    @Option(names = "--chunk", defaultValue = "1m", converter = ByteSize.class, paramLabel = "SIZE",
        description = "Bytes per stage (default ${DEFAULT-VALUE}).")
    private long chunk;

    @Option(names = "--op", defaultValue = "crc32c", paramLabel = "OP",
        description = "What to compute: ${COMPLETION-CANDIDATES} (default ${DEFAULT-VALUE}). sum is the plain "
            + "64-bit wrapping sum of the little-endian 8-byte words, the last zero-padded (blind to reordering); "
            + "crc32c and sha256 are the JDK's CRC32C and SHA-256 MessageDigest.")
    private StreamOp op;

    @Option(names = "--wait", defaultValue = "adaptive", paramLabel = "STRATEGY",
        description = "How threads wait: ${COMPLETION-CANDIDATES} (default ${DEFAULT-VALUE}).")
    private WaitOption wait;

    @Option(names = "--copy-policy", defaultValue = "auto", paramLabel = "POLICY",
        description = "Where producers' copies run: ${COMPLETION-CANDIDATES}; auto: on the producer when no core "
            + "is spare, else the copy engine (default ${DEFAULT-VALUE}). Reads from a FILE of known size use the "
            + "engine unless the policy is producer.")
    private CopyPolicyOption copyPolicy;

    /** The time to generate the --synthetic data before the run (not in the run's time); -1 for a FILE. */
    private long setUpNanos = -1;

    /** The room for more threads, read before the run: the advice suggests none where no core is free. */
    private StallReport.CoreRoom room = StallReport.CoreRoom.SPARE;

    @Option(names = "--trace", paramLabel = "FILE",
        description = "Write a Chrome/Perfetto trace-event file (JSON) to FILE.")
    private Path trace;

    @Option(names = "--timeline", paramLabel = "FILE",
        description = "Write a self-contained timeline page (HTML) to FILE.")
    private Path timeline;

    @Option(names = "--trace-events", defaultValue = "65536", paramLabel = "N",
        description = "Events the tracer keeps per thread for --trace and --timeline, the newest (default "
            + "${DEFAULT-VALUE}; at most " + EVENT_BUDGET + " over all threads); a longer run is reported over the "
            + "span they cover. Without --trace or --timeline, " + SUMMARY_EVENTS + ".")
    private int traceEvents;

    @Option(names = "--copy-workers", paramLabel = "N", description = "Copy-engine threads for this run, 1..256 "
        + "(default: the shared engine's, a quarter of the processors, 1 to 8).")
    private Integer copyWorkers;

    @Option(names = "--processes", description = "Run the producers and the consumers in two child JVMs, on a "
        + "system-scope pipeline in a shared memory file (under /dev/shm when it has room), and verify the result "
        + "with a direct pass; for a FILE of known size or --synthetic, without --trace, --timeline or --wait.")
    private boolean processes;

    @Option(names = "--test-crash-producers-at", hidden = true, paramLabel = "BATCH", description = "A test hook: "
        + "with --processes, the producers' JVM halts once every producer holds batch BATCH's stage.")
    private Long crashAt;

    @Override
    public Integer call() throws IOException {
        validate();
        checkOutputsDistinct();
        for (Path output : new Path[] {trace, timeline}) {
            String problem = output == null ? null : OutputFile.problem(output);
            if (problem != null) {
                throw bad("cannot write " + (output == trace ? "--trace" : "--timeline") + " " + output + ": "
                    + problem);
            }
        }
        if (chunk < SMALL_CHUNK) {
            spec.commandLine().getErr().printf(Locale.ROOT, "jpipeline: warning: --chunk %s is below %s: each "
                + "stage's hand-off between threads (microseconds) will outweigh the work on its data, and the run "
                + "will be slow; try --chunk 1m, or more --stages%n", ByteSize.format(chunk),
                ByteSize.format(SMALL_CHUNK));
            spec.commandLine().getErr().flush();
        }
        try {
            return stream();
        } catch (StreamJob.TooLargeException e) {
            throw bad(e.getMessage());
        }
    }

    private int stream() throws IOException {
        if (file == null) {
            long started = System.nanoTime();
            StreamSource.Memory data = StreamJob.synthetic(synthetic == null ? 256L << 20 : synthetic);
            setUpNanos = System.nanoTime() - started;
            return run(data);
        }
        if (file.toString().equals("-")) {
            return run(new StreamSource.Sequential("stdin", Channels.newChannel(System.in)));
        }
        if (!Files.isReadable(file) || Files.isDirectory(file)) {
            throw bad("cannot read " + file + " (" + file.toAbsolutePath() + (Files.isDirectory(file)
                ? " is a directory)" : Files.exists(file) ? " is not readable)" : ": no such file)"));
        }
        FileChannel opened;
        try {
            opened = FileChannel.open(file, StandardOpenOption.READ);
        } catch (IOException | SecurityException e) {
            throw bad("cannot open " + file + " (" + OutputFile.reason(e) + ")");
        }
        try (FileChannel channel = opened) {
            long stated = Files.isRegularFile(file) ? channel.size() : 0;
            long size = sizeHolds(channel, stated) ? stated : 0;
            if (processes && size == 0) {
                throw bad("--processes needs a FILE whose size is known before it is read, but " + file + " is "
                    + (!Files.isRegularFile(file)
                    ? "not a regular file (a pipe or FIFO is read in order to its end, by one producer)"
                    : stated > 0 ? "a file that holds fewer bytes than its size (" + stated + " bytes stated, "
                    + "as /sys files state 4096; it is read in order to its real end, by one producer)"
                    : "empty (or, like /proc files, sized only at its end)"));
            }
            // a size of 0 may mean "unknown" (/proc), and a stated size may be more than the file holds (/sys):
            // such files are read to their end, like pipes and FIFOs
            return run(size > 0 ? new StreamSource.File(file.toString(), channel, size)
                : new StreamSource.Sequential(file.toString(), channel));
        }
    }

    /**
     * Whether a file of {@code size} bytes by its own account holds them: its byte {@code size - 1} can be read
     * (one positional read of one byte). A {@code /sys} attribute states 4096 bytes and holds a few: positional
     * reads of its stated size fail at its first batch, where {@code cat} reads it; it is read to its real end
     * instead. A read that fails leaves the size as stated (the run's read of that batch reports it). The same look
     * as the library's {@code Prefetch} (docs/prefetch.md, "Files that hold fewer bytes than their size").
     */
    static boolean sizeHolds(FileChannel channel, long size) {
        if (size <= 0) {
            return false;
        }
        try {
            return channel.read(ByteBuffer.allocate(1), size - 1) >= 0;
        } catch (IOException e) {
            return true;
        }
    }

    /** The outputs must not overwrite the input or each other. */
    private void checkOutputsDistinct() {
        if (trace != null && timeline != null && sameFile(trace, timeline)) {
            throw bad("--trace and --timeline name the same file, " + trace + ": one would overwrite the other");
        }
        for (Path output : new Path[] {trace, timeline}) {
            if (output != null && file != null && !file.toString().equals("-") && sameFile(output, file)) {
                throw bad((output == trace ? "--trace " : "--timeline ") + output + " is the input file: writing "
                    + "it would destroy the data being streamed");
            }
        }
    }

    /** "1 stage", "4 stages". */
    private static String count(int n, String noun) {
        return n + " " + noun + (n == 1 ? "" : "s");
    }

    /** Whether {@code a} and {@code b} are one file (the same path, or links to one existing file). */
    private static boolean sameFile(Path a, Path b) {
        if (a.toAbsolutePath().normalize().equals(b.toAbsolutePath().normalize())) {
            return true;
        }
        try {
            return Files.exists(a) && Files.exists(b) && Files.isSameFile(a, b);
        } catch (IOException e) {
            return false;
        }
    }

    private void validate() {
        if (stages < 1 || stages > 255) {
            throw bad("--stages must be in 1..255, got " + stages);
        }
        if (producers < 1 || consumers < 1) {
            throw bad("a partitioned pipeline needs at least one producer and one consumer (--producers "
                + producers + ", --consumers " + consumers + ")");
        }
        if (producers + consumers > 1024) {
            throw bad("at most 1024 threads in all, got " + (producers + consumers));
        }
        if (chunk < 1 || chunk > Integer.MAX_VALUE) {
            throw bad("--chunk must be 1 byte to below 2 GiB, got " + chunk);
        }
        if (op == StreamOp.SUM && chunk % 8 != 0) {
            throw bad("--op sum adds 8-byte words, so --chunk must be a multiple of 8, got " + chunk);
        }
        if (traceEvents < Tracer.MIN_EVENTS_PER_LANE || traceEvents > Tracer.MAX_EVENTS_PER_LANE) {
            throw bad("--trace-events must be in " + Tracer.MIN_EVENTS_PER_LANE + ".." + Tracer.MAX_EVENTS_PER_LANE
                + ", got " + traceEvents);
        }
        long stageBytes = (long) stages * chunk;
        if (stageBytes > Runtime.getRuntime().maxMemory()) {
            throw bad("--stages " + stages + " x --chunk " + ByteSize.format(chunk) + " = "
                + ByteSize.format(stageBytes)
                + " of stage buffers, more than this JVM may allocate (" + ByteSize.format(Runtime.getRuntime()
                .maxMemory()) + "); use fewer stages or smaller chunks");
        }
        if (copyWorkers != null && (copyWorkers < 1 || copyWorkers > 256)) {
            throw bad("--copy-workers must be in 1..256, got " + copyWorkers);
        }
        if (file != null && synthetic != null) {
            throw bad("give either FILE or --synthetic, not both");
        }
        if (processes) {
            validateProcesses();
        } else if (crashAt != null) {
            throw bad("--test-crash-producers-at crashes the producers' JVM of a --processes run: give --processes");
        }
    }

    /** What --processes does not take: a stream of unknown size, and the options of threads of one JVM. */
    private void validateProcesses() {
        if (file != null && file.toString().equals("-")) {
            throw bad("--processes cannot stream stdin: the producers' JVM reads the FILE itself, at its offsets; "
                + "give a file of known size or --synthetic");
        }
        if (trace != null || timeline != null) {
            throw bad("--processes cannot write " + (trace != null ? "--trace" : "--timeline") + ": the events are "
                + "recorded in the child JVMs; run without --processes to trace");
        }
        if (spec.commandLine().getParseResult().hasMatchedOption("--wait")) {
            throw bad("--wait does not apply with --processes: threads of different processes wait for each other "
                + "by spinning, yielding, then sleeping in a futex");
        }
    }

    /** Events per thread the tracer keeps: what was asked, within {@link #EVENT_BUDGET} over all lanes. */
    private int eventsPerLane(int threads) {
        int wanted = recording() ? traceEvents : Math.min(traceEvents, SUMMARY_EVENTS);
        long affordable = EVENT_BUDGET / (2L * threads);    // each thread's lane and its copies' lane
        return (int) Math.max(Tracer.MIN_EVENTS_PER_LANE, Math.min(wanted, affordable));
    }

    /** Whether the run's events are recorded for a file, or only summarised in the stall figures. */
    private boolean recording() {
        return trace != null || timeline != null;
    }

    private int run(StreamSource source) {
        int readers = source.size() < 0 ? 1 : producers;    // a stream of unknown size is read in order by one
        int perLane = eventsPerLane(readers + consumers);
        if (processes) {
            return runInChildren(source, new StreamJob.Options(stages, readers, consumers, chunk, op,
                wait.strategy(), copyPolicy.policy(), null), perLane);
        }
        try (CopyEngine engine = copyWorkers == null ? null
            : CopyEngine.builder().workers(copyWorkers).name("jpipeline-stream-copy").build()) {
            StreamJob.Options options = new StreamJob.Options(stages, readers, consumers, chunk, op,
                wait.strategy(), copyPolicy.policy(), engine);
            return runHere(source, options, Tracer.create(perLane),
                engine == null ? CopyEngine.shared().workers() : engine.workers());
        }
    }

    /** Streams on threads of this JVM, reports, and writes the trace and timeline asked for. */
    private int runHere(StreamSource source, StreamJob.Options o, Tracer tracer, int engineWorkers) {
        room = roomFor(o, engineWorkers);
        AtomicLong progress = new AtomicLong();
        Thread bar = progressBar(progress, source);
        StreamJob.Result result;
        try {
            result = StreamJob.run(source, o, tracer, progress);
        } finally {
            if (bar != null) {
                bar.interrupt();
            }
        }
        if (result.failure() != null) {
            return fail(result.failure());
        }
        report(source, o, result, engineWorkers, null);
        // what a copy moved: its producer's share of its batch's chunk (the last chunk may be short)
        long total = result.bytes();
        ToLongFunction<TraceEvent> copyBytes = e -> StreamJob.share(Math.min(chunk, total - e.batch() * chunk),
            o.producers(), e.rank(), 1)[1];
        return writeOutputs(tracer, result.events(), copyBytes, source.name() + ", " + count(stages, "stage") + ", "
            + count(o.producers(), "producer") + ", " + count(o.consumers(), "consumer"));
    }

    /**
     * Streams with the producers and the consumers in two child JVMs, reports, and verifies the result with a
     * direct pass over the source in this JVM ({@link StreamDigest#direct}, read ahead); a pass that cannot read the
     * source fails the run with one line naming it.
     */
    private int runInChildren(StreamSource source, StreamJob.Options o, int perLane) {
        room = roomFor(o, copyWorkers != null ? copyWorkers : CopyEngine.shared().workers());
        StreamJob.Result result;
        try (ChildProcesses children = ChildProcesses.create(StageArea.dataBytes(stages,
            o.producers() + o.consumers(), chunk))) {
            Thread bar = progressBar(children.progress(), source);
            try {
                result = StreamProcesses.run(children, source, o, copyWorkers, perLane,
                    crashAt == null ? -1 : crashAt);
            } finally {
                if (bar != null) {
                    bar.interrupt();
                }
            }
            report(source, o, result, copyWorkers != null ? copyWorkers : CopyEngine.shared().workers(),
                children.describe() + "; they met in " + children.region());
        } catch (ChildProcesses.Failure e) {
            return fail(e.getMessage());
        }
        String direct;
        try {
            direct = StreamDigest.direct(source, op);
        } catch (IOException e) {
            return fail(e.getMessage());
        }
        PrintWriter out = spec.commandLine().getOut();
        if (direct.equals(result.value())) {
            out.printf(Locale.ROOT, "  verified  a direct pass over %s in this JVM gives the same %s%n",
                source.name(), op);
            out.flush();
            return 0;
        }
        out.printf(Locale.ROOT, "  verified  MISMATCH: a direct pass over %s in this JVM gives %s %s%n",
            source.name(), op, direct);
        out.flush();
        return fail("the children's " + op + " " + result.value() + " differs from a direct pass's, " + direct);
    }

    /** A progress bar of {@code progress} on the terminal, for a source of known size; null without either. */
    private static Thread progressBar(AtomicLong progress, StreamSource source) {
        return System.console() != null && source.size() > 0
            ? ProgressBar.start(progress, source.size(), System.err) : null;
    }

    /**
     * The room the run leaves for more threads, read before it starts (the load average is the machine's other work):
     * its producers and consumers, and the engine's workers where its copies may run there.
     */
    private StallReport.CoreRoom roomFor(StreamJob.Options o, int engineWorkers) {
        int threads = o.producers() + o.consumers() + (copyPolicy == CopyPolicyOption.PRODUCER ? 0 : engineWorkers);
        return StallReport.CoreRoom.now(threads);
    }

    /**
     * Prints the report of a run of {@code o} over {@code source}: the result, the time, and what the traced events
     * say; {@code children}: where a run in child JVMs ran, null for a run in this JVM.
     */
    private void report(StreamSource source, StreamJob.Options o, StreamJob.Result result, int engineWorkers,
                        String children) {
        PrintWriter out = spec.commandLine().getOut();
        List<TraceEvent> events = result.events();
        long dropped = result.dropped();
        // A run longer than the tracer keeps is measured over the span in which every lane has all its events.
        List<TraceEvent> measured = dropped == 0 ? events : StallReport.completeWindow(events);
        long measuredNanos = dropped == 0 ? result.nanos() : StallReport.span(measured);
        StallReport stalls = StallReport.of(measured, o.producers(), measuredNanos, result.batches());
        double seconds = result.nanos() / 1e9;
        out.printf(Locale.ROOT, "jpipeline stream: %s (%s), %s, %s, %s, chunks of %s, %s, %s%n",
            source.name(), ByteSize.format(result.bytes()) + (source.size() < 0
                ? ", size unknown until read to its end" : ""), count(stages, "stage"),
            count(o.producers(), "producer"), count(o.consumers(), "consumer"), ByteSize.format(chunk), op,
            children == null ? wait + " waiting" : "futex waiting across processes");
        if (children != null) {
            out.printf(Locale.ROOT, "  processes %s%n", children);
        }
        if (o.producers() != producers && spec.commandLine().getParseResult().hasMatchedOption("--producers")) {
            out.printf(Locale.ROOT, "  note      a stream of unknown size is read in order by one producer "
                + "(--producers %d does not apply)%n", producers);
        }
        out.printf(Locale.ROOT, "  result    %s %s%n", op, result.value());
        if (setUpNanos >= 0) {
            out.printf(Locale.ROOT, "  set-up    generated %s in %.3f s, before the run (not in its time)%n",
                ByteSize.format(result.bytes()), setUpNanos / 1e9);
        }
        out.printf(Locale.ROOT, "  time      %.3f s, %.1f MiB/s, %.0f chunks/s%n", seconds,
            result.bytes() / seconds / (1 << 20), result.batches() / seconds);
        if (recording() && result.eventsPerLane() < traceEvents) {
            out.printf(Locale.ROOT, "  memory    the tracer keeps %d events per thread, not the %d asked for: at "
                + "most %d over all %d threads and their copies (%d lanes)%n", result.eventsPerLane(), traceEvents,
                EVENT_BUDGET,
                o.producers() + o.consumers(), 2 * (o.producers() + o.consumers()));
        }
        if (dropped > 0) {
            out.printf(Locale.ROOT, "  window    the tracer kept each thread's newest %d events (%d older ones "
                + "dropped): overlap and stalls cover the last %.3f s%n", result.eventsPerLane(), dropped,
                measuredNanos / 1e9);
        }
        out.printf(Locale.ROOT, "  overlap   efficiency %.2f (copies in flight %.3f s, busiest consumer computing "
            + "%.3f s, of %.3f s)%n", stalls.overlapEfficiency(), stalls.copyNanos() / 1e9,
            stalls.computeNanos() / 1e9, measuredNanos / 1e9);
        out.printf(Locale.ROOT, "  stalls    producers waited %.0f%% of the run for free stages, the busiest "
            + "consumer %.0f%% for data%n", 100 * stalls.producerWaitShare(), 100 * stalls.consumerWaitShare());
        StallReport.Remedies remedies = StallReport.Remedies.of(source, copyPolicy, op, engineWorkers, room);
        out.printf(Locale.ROOT, "  reading   %s%n", stalls.reading(remedies));
        out.flush();
    }

    /** Writes the trace and the timeline, where asked for; a failure is one line and exit code 1. */
    private int writeOutputs(Tracer tracer, List<TraceEvent> events, ToLongFunction<TraceEvent> copyBytes,
                             String title) {
        PrintWriter out = spec.commandLine().getOut();
        if (trace != null) {
            try {
                OutputFile.write(trace, tracer::writeChromeTrace);
            } catch (IOException e) {
                return fail("cannot write the trace to " + trace + ": " + OutputFile.reason(e));
            }
            long dropped = tracer.dropped();
            out.printf(Locale.ROOT, "  trace     %s (%d events%s)%n", trace, events.size(),
                dropped == 0 ? "" : ", the newest; " + dropped + " dropped");
            out.flush();
        }
        if (timeline != null) {
            try {
                OutputFile.write(timeline, file -> TimelinePage.write(file, events, stages, copyBytes, title));
            } catch (IOException e) {
                return fail("cannot write the timeline to " + timeline + ": " + OutputFile.reason(e));
            }
            out.printf(Locale.ROOT, "  timeline  %s%n", timeline);
            out.flush();
        }
        return 0;
    }

    private int fail(String message) {
        spec.commandLine().getErr().println("jpipeline: " + message);
        spec.commandLine().getErr().flush();
        return 1;
    }

    private ParameterException bad(String message) {
        return new ParameterException(spec.commandLine(), message);
    }
}
