package dev.jpipeline.cli;

import dev.jpipeline.examples.Example;
import dev.jpipeline.examples.Examples;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code jpipeline examples}: runs every ported CUDA documentation example and prints a table. */
@Command(name = "examples", mixinStandardHelpOptions = true, versionProvider = BuildVersion.class,
    description = "Run every CUDA documentation example on the SIMT runtime and verify it.")
final class ExamplesCommand implements Callable<Integer> {

    @Spec
    private CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        String format = "%-50s %-44s %8s  %-8s %9s%n";
        out.printf(format, "example", "source", "threads", "verified", "time");
        int failed = 0;
        for (Example example : Examples.all()) {
            Examples.Result result = Examples.run(example);
            out.printf(format, example.name(), example.source(), example.threads(),
                result.verified() ? "yes" : "NO", String.format("%.1f ms", result.time().toNanos() / 1e6));
            if (result.failure() != null) {
                out.println("    " + result.failure());
            }
            if (!result.verified()) {
                failed++;
            }
            out.flush();
        }
        out.printf("%d of %d examples verified%n", Examples.all().size() - failed, Examples.all().size());
        out.flush();
        return failed == 0 ? 0 : 1;
    }
}
