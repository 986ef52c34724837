package dev.jpipeline.cli;

import dev.jpipeline.CopyPolicy;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.SharedRegion;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.copy.CopyEngine;
import dev.jpipeline.trace.TraceEvent;
import dev.jpipeline.trace.Tracer;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code jpipeline stream --processes}: the stream job with its producers in one child JVM and its consumers in
 * another, on a system-scope pipeline in a shared region ({@link StageArea}). {@link #run} is the parent's side:
 * it starts the children and combines their reports into the figures of a run in one JVM. The hidden command
 * {@code stream-child} is a child's side: its threads join the region's group with their ranks, make the pipeline
 * by role, and do the same {@link StreamWork} as the threads of a run in one JVM, the producers' reads landing in
 * the region's stage buffers; then it reports ({@link ChildReport}): the consumers the result, both their traced
 * events.
 */
@Command(name = "stream-child", hidden = true,
    description = "Internal: one side of stream --processes, in a child JVM started by the parent.")
final class StreamProcesses implements Callable<Integer> {

    /** The exit status of a producers' JVM halted by the crash hook ({@code --crash-at}). */
    static final int CRASHED = 3;

    /** How long the crash hook waits for every producer to hold the crash batch's stage before halting anyway. */
    private static final Duration CRASH_GATHERING = Duration.ofSeconds(10);

    @Mixin
    private ChildOptions child;

    @Option(names = "--name", required = true, description = "The stream's name in messages.")
    private String name;

    @Option(names = "--size", required = true, description = "The stream's size in bytes.")
    private long size;

    @Option(names = "--file", description = "The file the producers read (default: synthetic data of --size).")
    private Path file;

    @Option(names = "--stages", required = true)
    private int stages;

    @Option(names = "--producers", required = true)
    private int producers;

    @Option(names = "--consumers", required = true)
    private int consumers;

    @Option(names = "--chunk", required = true)
    private long chunk;

    @Option(names = "--op", required = true)
    private StreamOp op;

    @Option(names = "--copy-policy", required = true)
    private CopyPolicy copyPolicy;

    @Option(names = "--copy-workers", description = "The producers' copy engine's threads (default: the shared "
        + "engine).")
    private Integer copyWorkers;

    @Option(names = "--trace-events", required = true)
    private int traceEvents;

    @Option(names = "--crash-at", defaultValue = "-1", paramLabel = "BATCH", description = "A test hook: the "
        + "producers' JVM halts (status " + CRASHED + ") once every producer holds batch BATCH's stage.")
    private long crashAt;

    /**
     * Streams {@code source} (a file of known size, or the synthetic data, which the producers' JVM generates
     * again) with the producers and the consumers of {@code o} in two child JVMs meeting in {@code children}'s
     * region, and returns the run's figures. Times count from when the pipeline was first made.
     *
     * @param copyWorkers the producers' copy engine's threads, or null for the shared engine
     * @param traceEvents events each child's tracer keeps per lane
     * @param crashAt     the batch at which the producers' JVM halts (a test hook), or -1
     * @throws ChildProcesses.Failure when a child fails or dies (the message names it)
     */
    static StreamJob.Result run(ChildProcesses children, StreamSource source, StreamJob.Options o,
                                Integer copyWorkers, int traceEvents, long crashAt) throws ChildProcesses.Failure {
        List<String> common = List.of("--name", source.name(), "--size", Long.toString(source.size()), "--stages",
            Integer.toString(o.stages()), "--producers", Integer.toString(o.producers()), "--consumers",
            Integer.toString(o.consumers()), "--chunk", Long.toString(o.chunk()), "--op", o.op().toString(),
            "--copy-policy", o.copyPolicy().name(), "--trace-events", Integer.toString(traceEvents));
        List<String> producing = new ArrayList<>(List.of("--crash-at", Long.toString(crashAt)));
        switch (source) {
            case StreamSource.File f -> producing.addAll(List.of("--file", Path.of(f.name()).toAbsolutePath()
                .toString()));
            case StreamSource.Memory m -> { }            // the synthetic data: the child generates it again
            case StreamSource.Sequential s -> throw new IllegalArgumentException("a stream of unknown size ("
                + s.name() + ") cannot be split over processes: its one producer reads it in order");
        }
        if (copyWorkers != null) {
            producing.addAll(List.of("--copy-workers", copyWorkers.toString()));
        }
        ChildProcesses.Reports reports = children.run("stream-child", common, producing);
        ChildReport produced = reports.produced();
        ChildReport consumed = reports.consumed();
        long start = reports.start();
        List<TraceEvent> events = new ArrayList<>();
        for (ChildReport report : List.of(produced, consumed)) {
            for (TraceEvent e : report.events()) {
                events.add(new TraceEvent(e.thread(), e.rank(), e.role(), e.operation(), e.startNanos() - start,
                    e.durationNanos(), e.stage(), e.batch()));
            }
        }
        events.sort(Comparator.comparingLong(TraceEvent::startNanos));
        return new StreamJob.Result(consumed.text(ChildReport.VALUE), consumed.number(ChildReport.BYTES, 0),
            consumed.number(ChildReport.BATCHES, 0), reports.end() - start, events,
            produced.number(ChildReport.DROPPED, 0) + consumed.number(ChildReport.DROPPED, 0), traceEvents, null);
    }

    /** The child's side: runs its side of the stream and reports; 0 when it went well, 1 after a failure. */
    @Override
    public Integer call() {
        child.exitWithParent();
        PrintStream report = ChildReport.toParent();
        try (SharedRegion region = SharedRegion.open(child.region);
             CopyEngine engine = copyWorkers == null ? null
                 : CopyEngine.builder().workers(copyWorkers).name("jpipeline-stream-copy").build();
             FileChannel channel = file == null ? null : FileChannel.open(file, StandardOpenOption.READ)) {
            StageArea area = StageArea.in(region.data(), stages, producers + consumers, chunk);
            long origin = System.nanoTime();            // the tracer's clock starts now
            Tracer tracer = Tracer.create(traceEvents);
            PipelineSharedState.Builder shared = PipelineSharedState.builder(ThreadScope.SYSTEM, stages)
                .in(region, 0).copyPolicy(copyPolicy).tracer(tracer);
            PipelineSharedState state = (engine == null ? shared : shared.copyEngine(engine)).build();
            AtomicLong progress = new AtomicLong();
            StreamDigest digest = child.side == ProcessSide.CONSUMERS ? new StreamDigest(op, stages, consumers)
                : null;
            StreamWork work = new StreamWork(name, size, chunk, producers, area.stages(), area.lengths(), digest,
                progress);
            try {
                if (child.side == ProcessSide.PRODUCERS) {
                    StreamSource source = channel != null ? new StreamSource.File(name, channel, size)
                        : StreamJob.synthetic(size);
                    // halts once every producer holds crashAt's stage, so no earlier batch lacks a share
                    CountDownLatch holding = new CountDownLatch(producers);
                    LongConsumer hook = batch -> {
                        if (batch == crashAt) {
                            holding.countDown();
                            try {
                                holding.await(CRASH_GATHERING.toMillis(), TimeUnit.MILLISECONDS);
                            } catch (InterruptedException halting) {
                                // halts all the same
                            }
                            Runtime.getRuntime().halt(CRASHED);
                        }
                    };
                    child.side.run(region, state, producers, consumers, report,
                        (pipe, producer) -> work.produce(pipe, producer, source, hook));
                } else {
                    Thread sampler = progressReporter(progress, report);
                    try {
                        child.side.run(region, state, producers, consumers, report, work::consume);
                    } finally {
                        sampler.interrupt();
                    }
                }
            } finally {
                if (work.failure() != null) {           // first: whatever the run threw follows from it
                    ChildReport.print(report, ChildReport.FAILURE, work.failure());
                }
            }
            if (digest != null) {
                ChildReport.print(report, ChildReport.VALUE, digest.value());
                ChildReport.print(report, ChildReport.BYTES, work.bytes());
                ChildReport.print(report, ChildReport.BATCHES, work.batches());
            }
            ChildReport.printEvents(report, tracer.events(), origin);
            ChildReport.print(report, ChildReport.DROPPED, tracer.dropped());
            return work.failure() == null ? 0 : 1;
        } catch (IOException | RuntimeException e) {
            ChildReport.print(report, ChildReport.FAILURE, e instanceof IOException io ? "cannot read " + file
                + ": " + OutputFile.reason(io) : ChildReport.describe(e));
            return 1;
        }
    }

    /** A thread that reports {@code progress} to the parent a few times a second while it changes. */
    private static Thread progressReporter(AtomicLong progress, PrintStream report) {
        return Thread.ofPlatform().daemon().name("jpipeline-progress").start(() -> {
            try {
                for (long said = 0; ; Thread.sleep(200)) {
                    if (progress.get() != said) {
                        said = progress.get();
                        ChildReport.print(report, ChildReport.PROGRESS, said);
                    }
                }
            } catch (InterruptedException done) {
                // the run is over
            }
        });
    }
}
