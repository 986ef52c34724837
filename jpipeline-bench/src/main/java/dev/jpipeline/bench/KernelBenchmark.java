package dev.jpipeline.bench;

import dev.jpipeline.examples.ProducerConsumer;
import dev.jpipeline.simt.Dim3;
import dev.jpipeline.simt.Kernel;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The SIMT runtime's costs: launching one block of {@code threads} threads that each pass one
 * {@code __syncthreads()} (a launch is a virtual thread per CUDA thread), and the CUDA Programming Guide's
 * 4.10.7 producer-consumer example over 1 Mi floats (4 blocks of 256 threads, batches of 1024 floats,
 * including the data set-up and the verification). Microseconds per launch.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(5)
public class KernelBenchmark {

    /** The block size of the launch-cost benchmark. */
    @State(Scope.Benchmark)
    public static class Block {
        @Param({"32", "128", "1024"})
        int threads;
    }

    @Benchmark
    public void launchOneBlock(Block block) {
        Kernel.launch(Dim3.of(1), Dim3.of(block.threads), 0, ctx -> ctx.syncThreads());
    }

    @Benchmark
    public boolean producerConsumer1MiFloats() {
        if (!new ProducerConsumer().run()) {
            throw new IllegalStateException("4.10.7 example did not verify");
        }
        return true;
    }
}
