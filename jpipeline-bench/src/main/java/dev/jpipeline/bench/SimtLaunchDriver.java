package dev.jpipeline.bench;

import java.util.Arrays;

/**
 * Times {@link SimtLaunchBenchmark}'s kernels in a plain loop, outside JMH: for A/B runs of two builds, alternating
 * one JVM at a time in one window (docs/performance.md, section 11), where the machine's speed drifts between
 * windows. Prints the median of the last half of the launches, with its 10th and 90th percentiles.
 *
 * <p>{@code java -cp jpipeline-bench.jar dev.jpipeline.bench.SimtLaunchDriver KERNEL LAUNCHES}, KERNEL one of
 * {@code reduction}, {@code reduction-plain-java} (the same reduction without jpipeline: threads and a
 * {@code CyclicBarrier} per block), {@code loop}, or {@code empty:GRIDxBLOCK} (for example {@code empty:1024x256}).
 */
public final class SimtLaunchDriver {

    private SimtLaunchDriver() {
    }

    public static void main(String[] args) {
        if (args.length != 2) {
            throw new IllegalArgumentException("usage: SimtLaunchDriver reduction|reduction-plain-java|loop|empty:GRIDxBLOCK LAUNCHES");
        }
        int launches = Integer.parseInt(args[1]);
        if (launches < 2) {
            throw new IllegalArgumentException("LAUNCHES must be at least 2, got " + launches);
        }
        SimtLaunchBenchmark bench = new SimtLaunchBenchmark();
        SimtLaunchBenchmark.ReductionData data = new SimtLaunchBenchmark.ReductionData();
        data.fill();
        SimtLaunchBenchmark.Shape shape = new SimtLaunchBenchmark.Shape();
        if (args[0].startsWith("empty:")) {
            shape.shape = args[0].substring("empty:".length());
            shape.parse();
        } else if (!args[0].equals("reduction") && !args[0].equals("loop") && !args[0].equals("reduction-plain-java")) {
            throw new IllegalArgumentException("unknown kernel '" + args[0]
                + "': reduction, reduction-plain-java, loop or empty:GxB");
        }
        long[] nanos = new long[launches];
        for (int i = 0; i < launches; i++) {
            long t0 = System.nanoTime();
            switch (args[0]) {
                case "reduction" -> bench.blockReduction(data);
                case "reduction-plain-java" -> {
                    try {
                        bench.blockReductionPlainJava(data);
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }
                case "loop" -> bench.barrierLoop();
                default -> bench.empty(shape);
            }
            nanos[i] = System.nanoTime() - t0;
        }
        long[] late = Arrays.copyOfRange(nanos, launches / 2, launches);
        Arrays.sort(late);
        System.out.printf("%s: median %.3f ms (p10 %.3f, p90 %.3f) of the last %d of %d launches%n", args[0],
            late[late.length / 2] / 1e6, late[late.length / 10] / 1e6, late[late.length * 9 / 10] / 1e6,
            late.length, launches);
    }
}
