/**
 * The CUDA documentation's pipeline examples on jpipeline's SIMT runtime. {@link dev.jpipeline.examples.Examples#all()}
 * lists them in the documentation's order and {@link dev.jpipeline.examples.Examples#run(Example)} runs one,
 * timed; each {@link dev.jpipeline.examples.Example} checks its own result.
 */
package dev.jpipeline.examples;
