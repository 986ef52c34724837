package dev.jpipeline.cli;

import java.io.PrintWriter;
import java.io.StringWriter;

/** Test support: runs the command line in-process and captures what it prints. */
final class Cli {

    private Cli() {
    }

    /** {exit code, stdout, stderr}. */
    static String[] run(String... args) {
        var cli = Main.commandLine();
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        cli.setOut(new PrintWriter(out));
        cli.setErr(new PrintWriter(err));
        int code = cli.execute(args);
        return new String[] {String.valueOf(code), out.toString(), err.toString()};
    }
}
