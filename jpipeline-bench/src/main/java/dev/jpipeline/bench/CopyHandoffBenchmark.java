package dev.jpipeline.bench;

import dev.jpipeline.copy.CopyEngine;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Where the copy engine's inline threshold comes from: the time to copy {@code bytes} in the calling thread
 * against a round trip through a one-worker engine (submit, the worker copies, the caller sees the completion).
 * The difference is the hand-off's cost; a copy is worth handing off once copying it takes longer than that.
 * Microseconds per copy.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 1, time = 1)
@Measurement(iterations = 2, time = 1)
@Fork(5)
@State(Scope.Thread)
public class CopyHandoffBenchmark {

    @Param({"4096", "16384", "65536", "262144", "1048576"})
    int bytes;

    Arena arena;
    MemorySegment src;
    MemorySegment dst;
    CopyEngine engine;
    volatile boolean landed;

    @Setup(Level.Trial)
    public void setUp() {
        arena = Arena.ofShared();
        src = arena.allocate(bytes, 64);
        dst = arena.allocate(bytes, 64);
        engine = CopyEngine.builder().workers(1).inlineThreshold(0).name("bench-copy").build();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        engine.close();
        arena.close();
    }

    @Benchmark
    public void inline() {
        MemorySegment.copy(src, 0, dst, 0, bytes);
    }

    @Benchmark
    public void engineRoundTrip() {
        landed = false;
        engine.copy(dst, src, failure -> landed = true);
        while (!landed) {
            Thread.onSpinWait();
        }
    }
}
