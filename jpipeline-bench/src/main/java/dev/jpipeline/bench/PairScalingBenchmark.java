package dev.jpipeline.bench;

import dev.jpipeline.WaitStrategy;
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
 * Scaling: {@code pairs} independent producer/consumer lanes run at once, each handing 2^16 items per invocation
 * through its own depth-4 ring: a jpipeline partitioned pipeline ({@link PartitionedLane}, ADAPTIVE) or a JCTools
 * {@code SpscArrayQueue(4)} with pre-boxed items, spinning on both sides ({@link SpscLane}), the same lanes as
 * {@link HandoffBenchmark}'s.
 *
 * <p>Every thread lives for the whole trial, so an invocation measures the hand-offs and nothing else: the
 * benchmark thread is lane 0's producer, a feeder thread per further lane produces when the benchmark thread
 * bumps {@code round}, and the invocation ends when every lane's consumer has checked its last item. That makes
 * 2 x pairs busy threads, so the benchmark is meant for machines with at least that many cores. The score is
 * items per second <em>per lane</em>: linear scaling keeps it flat as lanes are added, and the total is the score
 * times {@code pairs}.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 4, time = 1)
@Fork(value = 3, jvmArgsAppend = "--sun-misc-unsafe-memory-access=allow")
public class PairScalingBenchmark {

    static final int DEPTH = 4;

    /** Lanes run together; subclasses pick the kind of lane. */
    @State(Scope.Thread)
    public abstract static class Lanes {
        @Param({"1", "2", "4", "8"})
        int pairs;

        HandoffLane[] lanes;
        Thread[] feeders;
        /** Invocations started; written by the benchmark thread only, read by the feeders. */
        volatile long round;
        volatile boolean stop;

        /** A new lane whose consumer thread is called {@code name}. */
        abstract HandoffLane newLane(String name);

        @Setup(Level.Trial)
        public void start() {
            lanes = new HandoffLane[pairs];
            for (int p = 0; p < pairs; p++) {
                lanes[p] = newLane("pair-" + p + "-consumer");
            }
            lanes[0].open();
            feeders = new Thread[pairs];
            for (int p = 1; p < pairs; p++) {
                HandoffLane lane = lanes[p];
                feeders[p] = Thread.ofPlatform().daemon().name("pair-" + p + "-producer").start(() -> feed(lane));
            }
        }

        /** A feeder thread: one invocation's items into {@code lane} per round, until the trial stops. */
        private void feed(HandoffLane lane) {
            try {
                lane.open();
                for (long done = 0; ; done++) {
                    while (round == done) {
                        if (stop) {
                            lane.close();
                            return;
                        }
                        Thread.onSpinWait();
                    }
                    lane.sendInvocation();
                }
            } catch (Throwable t) {
                lane.items.fail(t);
            }
        }

        /** The benchmark thread: one round of every lane. */
        void invocation() {
            round = round + 1;
            long total = lanes[0].sendInvocation();
            for (HandoffLane lane : lanes) {
                lane.items.awaitAll(total);
            }
        }

        @TearDown(Level.Trial)
        public void stop() throws InterruptedException {
            stop = true;
            lanes[0].close();
            for (int p = 1; p < pairs; p++) {
                HandoffLane.join(feeders[p]);
            }
        }
    }

    /** jpipeline partitioned pipelines. */
    public static class PipelineLanes extends Lanes {
        @Override
        HandoffLane newLane(String name) {
            return new PartitionedLane(DEPTH, WaitStrategy.ADAPTIVE, name);
        }
    }

    /** JCTools queues. */
    public static class SpscLanes extends Lanes {
        @Override
        HandoffLane newLane(String name) {
            return new SpscLane(DEPTH, name);
        }
    }

    @Benchmark
    @OperationsPerInvocation(HandoffLane.ITEMS)
    public void jpipeline(PipelineLanes lanes) {
        lanes.invocation();
    }

    @Benchmark
    @OperationsPerInvocation(HandoffLane.ITEMS)
    public void jctoolsSpsc(SpscLanes lanes) {
        lanes.invocation();
    }
}
