package dev.jpipeline.examples;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;

/**
 * Every ported example, in the order of the CUDA documentation, the faulty variants made from them, and a way to
 * run one with timing.
 */
public final class Examples {

    private Examples() {
    }

    /**
     * The outcome of one example run.
     *
     * @param example the example that ran
     * @param verified whether it matched its reference (false when it failed)
     * @param time how long it ran
     * @param failure what it threw, or null when it returned
     */
    public record Result(Example example, boolean verified, Duration time, Throwable failure) {
    }

    /**
     * All examples.
     *
     * @return every ported example, in the order of the CUDA documentation
     */
    public static List<Example> all() {
        return List.of(
            new PipelineCreation(),
            new TrackingAsyncCopies(),
            new TrackingAsyncCopiesPrimitives(),
            new ProducerConsumer(),
            new EarlyExit(),
            new ReferenceKernel(),
            new RolePartition(),
            new BinaryPartitions(true),
            new BinaryPartitions(false),
            new TimedWaits());
    }

    /**
     * Documentation examples with a deliberate mistake each, for {@link dev.jpipeline.simt.CheckedExecution} to
     * find: at least one for each kind of bug that the checker itself reports
     * ({@link dev.jpipeline.simt.FindingKind}: all but a hang, another failure and a differing result). Each is
     * small, like {@link Example#forChecking()}.
     *
     * @return the faulty examples, in the order of {@code FindingKind}
     */
    public static List<FaultyExample> faulty() {
        return Arrays.stream(Fault.values()).map(Fault::example).toList();
    }

    /**
     * Runs {@code example}, catching its failure (a failed run is not verified).
     *
     * @param example the example to run
     * @return its outcome and its time
     */
    public static Result run(Example example) {
        long start = System.nanoTime();
        try {
            boolean verified = example.run();
            return new Result(example, verified, Duration.ofNanos(System.nanoTime() - start), null);
        } catch (RuntimeException | Error e) {
            return new Result(example, false, Duration.ofNanos(System.nanoTime() - start), e);
        }
    }
}
