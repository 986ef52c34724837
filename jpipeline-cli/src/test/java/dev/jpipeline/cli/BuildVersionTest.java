package dev.jpipeline.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code --version} reports the version of the build, not a number written into the source. */
class BuildVersionTest {

    @Test
    void theVersionIsTheProjectVersionOfTheBuild() {
        String expected = System.getProperty("jpipeline.expectedVersion");
        assertTrue(expected != null && !expected.isEmpty(), "surefire passes the project version");
        assertEquals(expected, BuildVersion.version());
    }

    @Test
    void dashDashVersionPrintsIt() {
        CommandLine cli = Main.commandLine();
        StringWriter out = new StringWriter();
        cli.setOut(new PrintWriter(out));
        assertEquals(0, cli.execute("--version"));
        assertTrue(out.toString().startsWith("jpipeline " + System.getProperty("jpipeline.expectedVersion") + "\n"),
            out.toString());
        assertTrue(out.toString().contains("Java " + Runtime.version()), out.toString());
    }
}
