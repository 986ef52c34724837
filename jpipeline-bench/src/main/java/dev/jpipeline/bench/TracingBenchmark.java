package dev.jpipeline.bench;

import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.ThreadTeam;
import dev.jpipeline.trace.Tracer;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What tracing costs: one stage (acquire, commit, wait, release) of a one-thread block-scope pipeline, without a
 * tracer (the default: one null check per operation) and with one (four recorded events per stage). Nanoseconds
 * per stage; compare {@code traced=false} with {@code PipelineKindsBenchmark.unifiedSolo}, measured before
 * tracing existed.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(5)
@State(Scope.Thread)
public class TracingBenchmark {

    static final int BATCHES = 1024;

    @Param({"false", "true"})
    boolean traced;

    Pipeline pipe;

    @Setup(Level.Iteration)
    public void make() {
        PipelineSharedState.Builder builder = PipelineSharedState.builder(ThreadScope.BLOCK, 4);
        if (traced) {
            builder.tracer(Tracer.create());        // a fresh tracer per iteration: its rings fill, then wrap
        }
        pipe = Pipeline.make(ThreadTeam.ofPlatform(1).member(0), builder.build());
    }

    @TearDown(Level.Iteration)
    public void quit() {
        pipe.quit();
    }

    @Benchmark
    @OperationsPerInvocation(BATCHES)
    public void stage() {
        Pipeline p = pipe;
        for (int i = 0; i < BATCHES; i++) {
            p.producerAcquire();
            p.producerCommit();
            p.consumerWait();
            p.consumerRelease();
        }
    }
}
