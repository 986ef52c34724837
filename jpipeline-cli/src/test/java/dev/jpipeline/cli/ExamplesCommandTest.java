package dev.jpipeline.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import picocli.CommandLine;
import org.junit.jupiter.api.Test;

class ExamplesCommandTest {

    @Test
    void examplesPrintsATableOfVerifiedExamples() {
        CommandLine cli = Main.commandLine();
        StringWriter out = new StringWriter();
        cli.setOut(new PrintWriter(out));
        int code = cli.execute("examples");
        String table = out.toString();
        assertEquals(0, code, table);
        assertTrue(table.startsWith("example"), table);
        assertTrue(table.contains("4.10.7 producer-consumer"), table);
        assertTrue(table.contains("binary partitions: unguarded roles (clear error)"), table);
        assertTrue(table.contains("10 of 10 examples verified"), table);
    }
}
