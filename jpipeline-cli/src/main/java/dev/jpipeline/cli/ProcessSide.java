package dev.jpipeline.cli;

import dev.jpipeline.Group;
import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineRole;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.SharedRegion;
import dev.jpipeline.ThreadTeam;
import java.io.PrintStream;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The side of a partitioned pipeline that one child JVM of a {@code --processes} run plays: all its producers
 * (ranks {@code 0..producers-1} of the region's group) or all its consumers (the ranks after them), one thread per
 * rank.
 */
enum ProcessSide {
    /** The producers: ranks {@code 0..producers-1}. */
    PRODUCERS(PipelineRole.PRODUCER),
    /** The consumers: ranks {@code producers..producers+consumers-1}. */
    CONSUMERS(PipelineRole.CONSUMER);

    /** What one thread of a side does with its pipeline: {@code index} is its number on its side, from 0. */
    @FunctionalInterface
    interface Work {
        /** Runs thread {@code index}'s part on {@code pipe}. */
        void run(Pipeline pipe, int index);
    }

    private final PipelineRole role;

    ProcessSide(PipelineRole role) {
        this.role = role;
    }

    /**
     * Runs this side of a pipeline of {@code producers} + {@code consumers} ranks in {@code region}, and returns once
     * every rank of both sides is done: one platform thread per rank of the side, named {@code jpipeline-rank-RANK},
     * that joins the region's group with its rank, makes the pipeline on {@code state} by role, does its
     * {@code work}, quits, and waits in the group's {@code sync()} for the other ranks. So when it returns, the
     * consumers have seen every copy land, and the producers' JVM may close what its copies read from. Reports on
     * {@code report} ({@link ChildReport}) when the first pipeline handle is made and when the run has ended.
     *
     * @throws ThreadTeam.TeamFailure when a thread throws (its exception is the cause), for example because a rank
     *                                of the other side died or left
     */
    void run(SharedRegion region, PipelineSharedState state, int producers, int consumers, PrintStream report,
             Work work) {
        int first = this == PRODUCERS ? 0 : producers;
        int threads = this == PRODUCERS ? producers : consumers;
        AtomicBoolean made = new AtomicBoolean();
        ThreadTeam.ofPlatform(threads).run(Duration.ofDays(1), team -> {
            int rank = first + team.threadRank();
            Thread.currentThread().setName("jpipeline-rank-" + rank);     // the trace's lane names, unique per run
            Group group = region.join(producers + consumers, rank);
            Pipeline pipe = Pipeline.make(group, state, role);
            long now = System.nanoTime();
            if (!made.getAndSet(true)) {
                ChildReport.print(report, ChildReport.MADE, now);
            }
            try {
                work.run(pipe, team.threadRank());
            } finally {
                pipe.quit();                // first: a rank that failed must not hold up the others
            }
            group.sync();
        });
        ChildReport.print(report, ChildReport.ENDED, System.nanoTime());
    }

    /** The name on the command line and in messages: producers, consumers. */
    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }
}
