package dev.jpipeline.bench;

import dev.jpipeline.Group;
import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.ThreadTeam;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The cost of one stage (acquire, commit, wait, release) in each kind of pipeline, to check the ordering the
 * CUDA documentation states: thread scope (no shared state) is cheapest, a shared unified pipeline costs more,
 * a partitioned one most. Four stages, no copies; nanoseconds per stage.
 *
 * <ul>
 *   <li>{@code threadScope}: {@code Pipeline.make()} in one thread.</li>
 *   <li>{@code unifiedSolo}: a block-scope unified pipeline of a one-thread group (the shared machinery alone).</li>
 *   <li>{@code unifiedPair}: a unified pipeline of two threads (both produce and consume every stage).</li>
 *   <li>{@code partitionedPair}: a partitioned pipeline, one producer and one consumer thread.</li>
 * </ul>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(5)
public class PipelineKindsBenchmark {

    static final int STAGES = 4;
    static final int BATCHES = 1024;

    @State(Scope.Thread)
    public static class ThreadScoped {
        Pipeline pipe;

        @Setup(Level.Iteration)
        public void make() {
            pipe = Pipeline.make();
        }
    }

    @State(Scope.Thread)
    public static class UnifiedSolo {
        Pipeline pipe;

        @Setup(Level.Iteration)
        public void make() {
            pipe = Pipeline.make(ThreadTeam.ofPlatform(1).member(0),
                PipelineSharedState.create(ThreadScope.BLOCK, STAGES));
        }

        @TearDown(Level.Iteration)
        public void quit() {
            pipe.quit();
        }
    }

    /** Rank 0 is the benchmark thread; rank 1 a helper that mirrors it until told to stop. */
    abstract static class Pair {
        Pipeline pipe;
        Thread helper;
        volatile boolean stop;

        abstract Pipeline make(Group group, PipelineSharedState state);

        abstract void helperStage(Pipeline helperPipe);

        @Setup(Level.Iteration)
        public void start() {
            stop = false;
            PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, STAGES);
            ThreadTeam team = ThreadTeam.ofPlatform(2);
            helper = Thread.ofPlatform().daemon().start(() -> {
                Pipeline mine = make(team.member(1), state);
                try {
                    while (!stop) {
                        helperStage(mine);
                    }
                } catch (IllegalStateException benchmarkThreadQuit) {
                    // the partitioned consumer learns that no producer is left
                }
                mine.quit();
            });
            pipe = make(team.member(0), state);
        }

        @TearDown(Level.Iteration)
        public void stop() throws InterruptedException {
            stop = true;
            pipe.quit();
            helper.join(10_000);
            if (helper.isAlive()) {
                throw new IllegalStateException("helper did not stop");
            }
        }
    }

    @State(Scope.Thread)
    public static class UnifiedPair extends Pair {
        @Override
        Pipeline make(Group group, PipelineSharedState state) {
            return Pipeline.make(group, state);
        }

        @Override
        void helperStage(Pipeline p) {
            stage(p);
        }
    }

    @State(Scope.Thread)
    public static class PartitionedPair extends Pair {
        @Override
        Pipeline make(Group group, PipelineSharedState state) {
            return Pipeline.make(group, state, 1);
        }

        @Override
        void helperStage(Pipeline p) {
            p.consumerWait();
            p.consumerRelease();
        }
    }

    private static void stage(Pipeline p) {
        p.producerAcquire();
        p.producerCommit();
        p.consumerWait();
        p.consumerRelease();
    }

    @Benchmark
    @OperationsPerInvocation(BATCHES)
    public void threadScope(ThreadScoped s) {
        for (int i = 0; i < BATCHES; i++) {
            stage(s.pipe);
        }
    }

    @Benchmark
    @OperationsPerInvocation(BATCHES)
    public void unifiedSolo(UnifiedSolo s) {
        for (int i = 0; i < BATCHES; i++) {
            stage(s.pipe);
        }
    }

    @Benchmark
    @OperationsPerInvocation(BATCHES)
    public void unifiedPair(UnifiedPair s) {
        for (int i = 0; i < BATCHES; i++) {
            stage(s.pipe);
        }
    }

    @Benchmark
    @OperationsPerInvocation(BATCHES)
    public void partitionedPair(PartitionedPair s) {
        Pipeline p = s.pipe;
        for (int i = 0; i < BATCHES; i++) {
            p.producerAcquire();
            p.producerCommit();
        }
    }
}
