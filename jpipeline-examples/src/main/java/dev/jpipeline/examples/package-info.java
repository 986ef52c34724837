/**
 * The CUDA documentation's pipeline examples on jpipeline's SIMT runtime. {@link dev.jpipeline.examples.Examples#all()}
 * lists them in the documentation's order and {@link dev.jpipeline.examples.Examples#run(Example)} runs one,
 * timed; each {@link dev.jpipeline.examples.Example} checks its own result, and has a small instance for checked
 * execution ({@link dev.jpipeline.examples.Example#forChecking()}). {@link dev.jpipeline.examples.Examples#faulty()}
 * lists variants of them with deliberate mistakes, which checked execution should find.
 */
package dev.jpipeline.examples;
