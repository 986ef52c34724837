package dev.jpipeline.cli;

import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.SharedRegion;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.ThreadTeam;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code jpipeline demo --processes}: the demo with its producers in one child JVM and its consumers in another,
 * on a system-scope pipeline in a shared region ({@link StageArea}). {@link #run} is the parent's side; the hidden
 * command {@code demo-child} is a child's: its threads join the region's group with their ranks, make the pipeline
 * by role and do the demo's work ({@link DemoJob}): the producers generate the built-in data and copy it into the
 * region's stages, the consumers report the checksum ({@link ChildReport}).
 */
@Command(name = "demo-child", hidden = true,
    description = "Internal: one side of demo --processes, in a child JVM started by the parent.")
final class DemoProcesses implements Callable<Integer> {

    @Mixin
    private ChildOptions child;

    @Option(names = "--size", required = true, description = "The built-in data's size, a whole number of chunks.")
    private long total;

    @Option(names = "--chunk", required = true, description = "Bytes per stage, a multiple of 16.")
    private long chunk;

    /**
     * Streams the demo's {@code total} bytes in chunks of {@code chunk} with its producers and consumers in two
     * child JVMs meeting in {@code children}'s region; the time counts from when the pipeline was first made.
     *
     * @throws ChildProcesses.Failure when a child fails or dies (the message names it)
     */
    static DemoJob.Outcome run(ChildProcesses children, long total, long chunk) throws ChildProcesses.Failure {
        ChildProcesses.Reports reports = children.run("demo-child", List.of("--size", Long.toString(total), "--chunk",
            Long.toString(chunk)), List.of());
        return new DemoJob.Outcome(Long.parseLong(reports.consumed().text(ChildReport.VALUE)),
            reports.end() - reports.start());
    }

    /** The child's side: runs its side of the demo and reports; 0 when it went well, 1 after a failure. */
    @Override
    public Integer call() {
        child.exitWithParent();
        PrintStream report = ChildReport.toParent();
        int groupSize = DemoJob.PRODUCERS + DemoJob.CONSUMERS;
        try (SharedRegion region = SharedRegion.open(child.region); Arena arena = Arena.ofShared()) {
            MemorySegment[] stages = StageArea.in(region.data(), DemoJob.STAGES, groupSize, chunk).stages();
            PipelineSharedState state = PipelineSharedState.builder(ThreadScope.SYSTEM, DemoJob.STAGES)
                .in(region, 0).build();
            if (child.side == ProcessSide.PRODUCERS) {
                MemorySegment data = DemoJob.data(arena, total);
                ThreadTeam producers = ThreadTeam.ofPlatform(DemoJob.PRODUCERS);   // the cooperative copies' group
                child.side.run(region, state, DemoJob.PRODUCERS, DemoJob.CONSUMERS, report,
                    (pipe, producer) -> DemoJob.produce(pipe, producers.member(producer), stages, data, chunk));
            } else {
                long[] partial = new long[DemoJob.CONSUMERS];
                child.side.run(region, state, DemoJob.PRODUCERS, DemoJob.CONSUMERS, report,
                    (pipe, consumer) -> partial[consumer] = DemoJob.consume(pipe, consumer, stages, total / chunk,
                        chunk));
                ChildReport.print(report, ChildReport.VALUE, Arrays.stream(partial).sum());   // the threads have ended
            }
            return 0;
        } catch (RuntimeException e) {
            ChildReport.print(report, ChildReport.FAILURE, ChildReport.describe(e));
            return 1;
        }
    }
}
