package dev.jpipeline.bench;

import static dev.jpipeline.MemcpyAsync.memcpyAsync;

import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.simt.CheckedExecution;
import dev.jpipeline.simt.Dim3;
import dev.jpipeline.simt.Kernel;
import dev.jpipeline.simt.Outcome;
import dev.jpipeline.simt.Schedule;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The cost of checked execution (issue 12): one block of {@code threads} CUDA threads streams 8 batches through a
 * two-stage block-scope pipeline (each thread copies its float of the batch with a group {@code memcpyAsync},
 * waits, reads its mirror's float through the shared-memory accessor, releases), launched normally and under one
 * checked schedule (a new seed each time). Microseconds per launch or schedule; divide into threads for
 * thread-launches (or thread-schedules) per second. {@code races=false} switches the data race detector off
 * (jpipeline.simt.checked.races), so that its cost shows.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 2, jvmArgsAppend = "-Xmx2g")
@State(Scope.Benchmark)
public class CheckedLaunchBenchmark {

    static final int BATCHES = 8;

    @Param({"64", "256"})
    public int threads;

    /** Whether checked execution's data race detector runs (its package-private switch): its cost is the difference. */
    @Param({"true", "false"})
    public boolean races;

    private MemorySegment in;
    private float[] out;
    private long seed;

    @Setup
    public void setUp() {
        System.setProperty("jpipeline.simt.checked.races", String.valueOf(races));
        in = Arena.ofAuto().allocate(4L * threads * BATCHES, 16);
        for (int i = 0; i < threads * BATCHES; i++) {
            in.setAtIndex(ValueLayout.JAVA_FLOAT, i, i);
        }
        out = new float[threads * BATCHES];
    }

    private float stream() {
        int n = threads;
        Kernel.launch(Dim3.of(1), Dim3.of(n), 4L * n * 2, ctx -> {
            PipelineSharedState state = ctx.shared("s", () -> PipelineSharedState.create(ThreadScope.BLOCK, 2));
            Pipeline pipe = Pipeline.make(ctx.block(), state);
            int t = ctx.threadRank();
            for (int b = 0; b < BATCHES; b++) {
                MemorySegment stage = ctx.dynamicShared().asSlice(4L * n * (b % 2), 4L * n);
                pipe.producerAcquire();
                memcpyAsync(ctx.block(), stage, in.asSlice(4L * n * b, 4L * n), 4L * n, pipe);
                pipe.producerCommit();
                pipe.consumerWait();
                out[b * n + t] = ctx.loadFloat(stage, n - 1 - t);
                pipe.consumerRelease();
            }
            pipe.quit();
        });
        float last = out[BATCHES * n - 1];
        if (last != (BATCHES - 1) * n) {
            throw new AssertionError("wrong result " + last);
        }
        return last;
    }

    /**
     * A block-wide inclusive scan (Hillis-Steele) through shared memory with the context's accessors and
     * {@code __syncthreads} twice per step: a kernel whose every scheduling point is an accessor or a sync, with no
     * pipeline to make.
     */
    private float scan() {
        int n = threads;
        Kernel.launch(Dim3.of(1), Dim3.of(n), 4L * n, ctx -> {
            MemorySegment data = ctx.dynamicShared();
            int t = ctx.threadRank();
            ctx.storeFloat(data, t, 1f);
            ctx.syncThreads();
            for (int offset = 1; offset < n; offset *= 2) {
                float add = t >= offset ? ctx.loadFloat(data, t - offset) : 0f;
                ctx.syncThreads();
                ctx.storeFloat(data, t, ctx.loadFloat(data, t) + add);
                ctx.syncThreads();
            }
            out[t] = ctx.loadFloat(data, t);
        });
        float last = out[n - 1];
        if (last != n) {
            throw new AssertionError("wrong scan " + last);
        }
        return last;
    }

    @Benchmark
    public float checkedScan() {
        Outcome<Float> o = CheckedExecution.replay(Schedule.of(seed++), this::scan);
        if (o.finding() != null) {
            throw new AssertionError(o.finding().report());
        }
        return o.result();
    }

    @Benchmark
    public float normalLaunch() {
        return stream();
    }

    @Benchmark
    public float checkedSchedule() {
        Outcome<Float> o = CheckedExecution.replay(Schedule.of(seed++), this::stream);
        if (o.finding() != null) {
            throw new AssertionError(o.finding().report());
        }
        return o.result();
    }
}
