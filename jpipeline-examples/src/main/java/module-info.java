/**
 * jpipeline examples: the CUDA documentation's pipeline examples ported to jpipeline, each of which launches its
 * kernel on built-in data and checks the result against a plain Java reference ({@code ./jpipeline examples} runs
 * them all).
 */
module dev.jpipeline.examples {
    requires dev.jpipeline.simt;
    exports dev.jpipeline.examples;
}
