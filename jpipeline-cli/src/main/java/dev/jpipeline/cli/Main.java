package dev.jpipeline.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;

/** Entry point of the {@code jpipeline} command. */
@Command(name = "jpipeline", mixinStandardHelpOptions = true, versionProvider = BuildVersion.class,
    description = "CUDA's cuda::pipeline programming model on Java threads.",
    subcommands = {DemoCommand.class, ExamplesCommand.class, StreamCommand.class, HelpCommand.class,
        VersionCommand.class, StreamProcesses.class, DemoProcesses.class})
public final class Main implements Runnable {

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    /** For picocli; {@link #commandLine()} makes the configured command line. */
    public Main() {
    }

    /**
     * Runs the command line; exits with the command's status (2 for bad arguments).
     *
     * @param args the command line
     */
    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    /**
     * The configured command line, for the launcher and for tests.
     *
     * @return a new command line, ready to execute
     */
    public static CommandLine commandLine() {
        CommandLine cli = new CommandLine(new Main()).setCaseInsensitiveEnumValuesAllowed(true);
        // bad arguments: one line naming the problem, exit code 2 (no usage dump)
        cli.setParameterExceptionHandler((e, args) -> {
            e.getCommandLine().getErr().println("jpipeline: " + e.getMessage());
            e.getCommandLine().getErr().flush();
            return 2;
        });
        return cli;
    }

    /** Without a subcommand: prints the usage. */
    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }
}
