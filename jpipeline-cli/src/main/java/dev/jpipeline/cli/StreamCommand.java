package dev.jpipeline.cli;

import dev.jpipeline.trace.TraceEvent;
import dev.jpipeline.trace.Tracer;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code jpipeline stream}: streams a file (or built-in synthetic data) through a partitioned pipeline with
 * asynchronous reads into the stage buffers, and reports the result, the throughput, the overlap of copies and
 * computation, and where the time went.
 */
@Command(name = "stream", mixinStandardHelpOptions = true,
    description = "Stream a file (or synthetic data) through a partitioned pipeline and report how it went.")
final class StreamCommand implements Callable<Integer> {

    @Spec
    private CommandSpec spec;

    @Parameters(arity = "0..1", paramLabel = "FILE", description = "The file to stream (default: synthetic data).")
    private Path file;

    @Option(names = "--synthetic", paramLabel = "SIZE", converter = ByteSize.class,
        description = "Stream SIZE bytes of built-in synthetic data (default 256m when no FILE is given); sizes: "
            + ByteSize.FORMS + ".")
    private Long synthetic;

    @Option(names = "--stages", defaultValue = "4", description = "Stages in flight, 1..255 (default ${DEFAULT-VALUE}).")
    private int stages;

    @Option(names = "--producers", defaultValue = "2", description = "Producer threads (default ${DEFAULT-VALUE}).")
    private int producers;

    @Option(names = "--consumers", defaultValue = "2", description = "Consumer threads (default ${DEFAULT-VALUE}).")
    private int consumers;

    @Option(names = "--chunk", defaultValue = "1m", converter = ByteSize.class, paramLabel = "SIZE",
        description = "Bytes per stage (default ${DEFAULT-VALUE}).")
    private long chunk;

    @Option(names = "--op", defaultValue = "crc32c", paramLabel = "OP",
        description = "What to compute: ${COMPLETION-CANDIDATES} (default ${DEFAULT-VALUE}).")
    private StreamOp op;

    @Option(names = "--wait", defaultValue = "adaptive", paramLabel = "STRATEGY",
        description = "How threads wait: ${COMPLETION-CANDIDATES} (default ${DEFAULT-VALUE}).")
    private WaitOption wait;

    @Option(names = "--copy-policy", defaultValue = "auto", paramLabel = "POLICY",
        description = "Where producers' copies run: ${COMPLETION-CANDIDATES}; auto: on the producer when no core "
            + "is spare, else the copy engine (default ${DEFAULT-VALUE}). Reads from a FILE always use the engine.")
    private CopyPolicyOption copyPolicy;

    @Option(names = "--trace", paramLabel = "FILE.json", description = "Write a Chrome/Perfetto trace-event file.")
    private Path trace;

    @Option(names = "--timeline", paramLabel = "FILE.html", description = "Write a self-contained timeline page.")
    private Path timeline;

    @Option(names = "--trace-events", defaultValue = "65536", paramLabel = "N",
        description = "Events the tracer keeps per thread, the newest (default ${DEFAULT-VALUE}); a longer run is "
            + "reported over the span they cover.")
    private int traceEvents;

    @Override
    public Integer call() throws IOException {
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
        if (traceEvents < Tracer.MIN_EVENTS_PER_LANE || traceEvents > Tracer.MAX_EVENTS_PER_LANE) {
            throw bad("--trace-events must be in " + Tracer.MIN_EVENTS_PER_LANE + ".." + Tracer.MAX_EVENTS_PER_LANE
                + ", got " + traceEvents);
        }
        if (file != null && synthetic != null) {
            throw bad("give either FILE or --synthetic, not both");
        }
        StreamJob.Options options = new StreamJob.Options(stages, producers, consumers, chunk, op, wait.strategy(),
            copyPolicy.policy(), traceEvents);
        PrintWriter out = spec.commandLine().getOut();
        if (file == null) {
            return report(out, StreamJob.synthetic(synthetic == null ? 256L << 20 : synthetic), options, op);
        }
        if (!Files.isReadable(file) || Files.isDirectory(file)) {
            throw bad("cannot read " + file + (Files.exists(file) ? " (not a readable file)" : " (no such file)"));
        }
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            return report(out, new StreamJob.Source(file.toString(), channel, null, channel.size()), options, op);
        }
    }

    private int report(PrintWriter out, StreamJob.Source source, StreamJob.Options options, StreamOp streamOp)
        throws IOException {
        AtomicLong progress = new AtomicLong();
        Thread bar = System.console() != null ? ProgressBar.start(progress, source.size(), System.err) : null;
        StreamJob.Result result;
        try {
            result = StreamJob.run(source, options, progress);
        } finally {
            if (bar != null) {
                bar.interrupt();
            }
        }
        if (result.failure() != null) {
            spec.commandLine().getErr().println("jpipeline: " + result.failure());
            spec.commandLine().getErr().flush();
            return 1;
        }
        Tracer tracer = result.tracer();
        List<TraceEvent> events = tracer.events();
        long dropped = tracer.dropped();
        // A run longer than the tracer keeps is measured over the span in which every lane has all its events.
        List<TraceEvent> measured = dropped == 0 ? events : StallReport.completeWindow(events);
        long measuredNanos = dropped == 0 ? result.nanos() : StallReport.span(measured);
        StallReport stalls = StallReport.of(measured, producers, consumers, measuredNanos);
        double seconds = result.nanos() / 1e9;
        long batches = (source.size() + chunk - 1) / chunk;
        out.printf(Locale.ROOT, "jpipeline stream: %s (%s), %d stages, %d producers, %d consumers, chunks of %s, %s, "
            + "%s waiting%n", source.name(), ByteSize.format(source.size()), stages, producers, consumers,
            ByteSize.format(chunk), streamOp, wait);
        out.printf(Locale.ROOT, "  result    %s %s%n", streamOp, result.value());
        out.printf(Locale.ROOT, "  time      %.3f s, %.1f MiB/s, %.0f stages/s%n", seconds,
            source.size() / seconds / (1 << 20), batches / seconds);
        if (dropped > 0) {
            out.printf(Locale.ROOT, "  window    the tracer kept each thread's newest %d events (%d older ones "
                + "dropped): overlap and stalls cover the last %.3f s%n", tracer.eventsPerLane(), dropped,
                measuredNanos / 1e9);
        }
        out.printf(Locale.ROOT, "  overlap   efficiency %.2f (copies in flight %.3f s, busiest consumer computing "
            + "%.3f s, of %.3f s)%n", stalls.overlapEfficiency(), stalls.copyNanos() / 1e9,
            stalls.computeNanos() / 1e9, measuredNanos / 1e9);
        out.printf(Locale.ROOT, "  stalls    producers waited %.0f%% of the run for free stages, consumers waited "
            + "%.0f%% for data%n", 100 * stalls.producerWaitShare(), 100 * stalls.consumerWaitShare());
        out.printf(Locale.ROOT, "  reading   %s%n", stalls.reading());
        if (trace != null) {
            result.tracer().writeChromeTrace(trace);
            out.printf(Locale.ROOT, "  trace     %s (%d events%s)%n", trace, events.size(),
                dropped == 0 ? "" : ", the newest; " + dropped + " dropped");
        }
        if (timeline != null) {
            TimelinePage.write(timeline, events, stages, source.name() + ", " + stages + " stages, " + producers
                + " producers, " + consumers + " consumers");
            out.printf(Locale.ROOT, "  timeline  %s%n", timeline);
        }
        out.flush();
        return 0;
    }

    private ParameterException bad(String message) {
        return new ParameterException(spec.commandLine(), message);
    }
}
