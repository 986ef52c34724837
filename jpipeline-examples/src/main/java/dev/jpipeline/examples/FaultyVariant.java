package dev.jpipeline.examples;

import dev.jpipeline.simt.FindingKind;

/**
 * A documentation example made with a {@link Fault}: the fault names and describes it, the example runs it.
 *
 * @param fault  the planted mistake
 * @param broken the example made with it, small enough for checked execution
 */
record FaultyVariant(Fault fault, Example broken) implements FaultyExample {

    @Override
    public String name() {
        return fault.title;
    }

    @Override
    public String source() {
        return broken.source();
    }

    @Override
    public int threads() {
        return broken.threads();
    }

    @Override
    public boolean run() {
        return broken.run();
    }

    @Override
    public int[] output() {
        return broken.output();
    }

    @Override
    public String bug() {
        return fault.bug;
    }

    @Override
    public FindingKind expected() {
        return fault.expected;
    }
}
