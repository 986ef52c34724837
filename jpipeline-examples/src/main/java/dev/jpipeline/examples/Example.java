package dev.jpipeline.examples;

/**
 * A CUDA documentation example ported to jpipeline: it launches its kernel on built-in data and checks the
 * result against a plain Java reference.
 */
public interface Example {

    /**
     * A short name, for tables.
     *
     * @return the example's name
     */
    String name();

    /**
     * Where the CUDA original comes from.
     *
     * @return the document (and section) the example is ported from
     */
    String source();

    /**
     * CUDA threads the example launches.
     *
     * @return the number of threads of the example's kernel, all blocks together
     */
    int threads();

    /**
     * Runs the example.
     *
     * @return whether the result matched the plain Java reference (or, for an example of a documented mistake,
     *         whether jpipeline reported the mistake clearly)
     */
    boolean run();

    /**
     * Runs the example once on its built-in inputs and returns what its kernel wrote, element by element: the
     * array that the example's CUDA twin ({@code oracle/examples/*.cu}) copies back with {@code cudaMemcpy} and
     * prints, in the same order, each element as its 32 bits (a float's raw bits). {@code GpuGoldenOutputTest}
     * compares it with that program's output on a GPU ({@code oracle/golden}). Where the example's
     * {@link #run()} checks values inside the kernel, the kernel stores each value it checks, and an element
     * that no thread writes keeps the initial value that the CUDA twin gives it too.
     *
     * @return the kernel's output, one 32-bit pattern per element
     * @throws dev.jpipeline.simt.KernelFailure when the launch fails, as the unguarded binary partitions do
     */
    int[] output();

    /**
     * A small instance of the example for checked execution ({@link dev.jpipeline.simt.CheckedExecution}), where
     * one CUDA thread runs at a time and every shared-memory access may switch threads: few threads and little
     * data, so that a schedule runs in a few milliseconds once warm. Like every instance, it makes fresh inputs
     * at each {@link #run()}. No CUDA counterpart.
     *
     * @return this example at a size fit for checking; this example itself (the default) when it is small
     */
    default Example forChecking() {
        return this;
    }

    /**
     * What checked execution reports for this example although it runs correctly here: null (the default) when
     * it should be clean; {@link dev.jpipeline.simt.FindingKind#HANGS_ON_GPU} for an example that relies on
     * jpipeline's semantics where libcu++'s differ, as the Guide's early exit does (on a GPU the others wait
     * forever for the leavers' arrivals). No CUDA counterpart.
     *
     * @return the kind of finding expected under checked execution, or null
     */
    default dev.jpipeline.simt.FindingKind checkedFinding() {
        return null;
    }
}
