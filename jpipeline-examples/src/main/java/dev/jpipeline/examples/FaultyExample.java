package dev.jpipeline.examples;

import dev.jpipeline.simt.FindingKind;

/**
 * A documentation example with a deliberate mistake of the kind that a GPU shows only sometimes, for checked
 * execution ({@code dev.jpipeline.simt.CheckedExecution}) to find. No CUDA counterpart: compute-sanitizer finds
 * such mistakes on a GPU, without a replayable schedule. Its {@link #run()} returns whether the result matched
 * the documentation example's reference, which a plain launch may well do.
 */
public interface FaultyExample extends Example {

    /**
     * The mistake, and what a GPU would do with it.
     *
     * @return one or two sentences
     */
    String bug();

    /**
     * What checked execution should report.
     *
     * @return the kind of finding the mistake shows as
     */
    FindingKind expected();

    /**
     * Already small: faulty examples are made for checked execution.
     *
     * @return this example
     */
    @Override
    default FaultyExample forChecking() {
        return this;
    }
}
