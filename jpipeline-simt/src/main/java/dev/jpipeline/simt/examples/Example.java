package dev.jpipeline.simt.examples;

/**
 * A CUDA documentation example ported to jpipeline: it launches its kernel on built-in data and checks the
 * result against a plain Java reference.
 */
public interface Example {

    /** A short name, for tables. */
    String name();

    /** Where the CUDA original comes from. */
    String source();

    /** CUDA threads the example launches. */
    int threads();

    /**
     * Runs the example.
     *
     * @return whether the result matched the plain Java reference (or, for an example of a documented mistake,
     *         whether jpipeline reported the mistake clearly)
     */
    boolean run();
}
