package dev.jpipeline.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code jpipeline version}: prints the version, as {@code jpipeline --version} does. */
@Command(name = "version", mixinStandardHelpOptions = true, versionProvider = BuildVersion.class,
    description = "Print the version and exit.")
final class VersionCommand implements Runnable {

    @Spec
    private CommandSpec spec;

    @Override
    public void run() {
        spec.parent().commandLine().printVersionHelp(spec.commandLine().getOut());
        spec.commandLine().getOut().flush();
    }
}
