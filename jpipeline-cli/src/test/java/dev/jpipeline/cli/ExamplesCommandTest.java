package dev.jpipeline.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ExamplesCommandTest {

    @Test
    void examplesPrintsATableOfVerifiedExamples() {
        String[] result = Cli.run("examples");
        String table = result[1];
        assertEquals("0", result[0], table);
        assertTrue(table.startsWith("example"), table);
        assertTrue(table.contains("4.10.7 producer-consumer"), table);
        assertTrue(table.contains("binary partitions: unguarded roles (clear error)"), table);
        assertTrue(table.contains("10 of 10 examples verified"), table);
    }
}
