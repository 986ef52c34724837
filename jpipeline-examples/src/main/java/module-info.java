/**
 * jpipeline examples: the CUDA documentation's pipeline examples ported to jpipeline, each of which launches its
 * kernel on built-in data and checks the result against a plain Java reference ({@code ./jpipeline examples} runs
 * them all), and faulty variants of them for checked execution to find ({@code ./jpipeline examples --faulty
 * --schedules 100}).
 */
module dev.jpipeline.examples {
    requires transitive dev.jpipeline.simt;
    exports dev.jpipeline.examples;
}
