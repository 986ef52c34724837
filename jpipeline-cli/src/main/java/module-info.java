/** The {@code jpipeline} command line. */
module dev.jpipeline.cli {
    requires dev.jpipeline.core;
    requires dev.jpipeline.simt;
    requires dev.jpipeline.examples;
    requires info.picocli;
    opens dev.jpipeline.cli to info.picocli;
}
