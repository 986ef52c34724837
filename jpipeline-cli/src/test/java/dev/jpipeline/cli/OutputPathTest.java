package dev.jpipeline.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Unwritable --trace and --timeline paths: one line on stderr, before the run where it can be known then. */
@Timeout(120)
class OutputPathTest {

    @Test
    void aDirectoryOrAMissingFolderIsRefusedBeforeTheRun(@TempDir Path dir) {
        String missing = dir.resolve("no/such/folder/t.json").toString();
        String[][] cases = {
            {"--trace", dir.toString(), "jpipeline: cannot write --trace " + dir + ": " + dir + " is a directory"},
            {"--timeline", missing, "jpipeline: cannot write --timeline " + missing + ": folder "
                + dir.resolve("no/such/folder") + " does not exist"},
        };
        for (String[] c : cases) {
            String[] r = Cli.run("stream", "--synthetic", "64m", c[0], c[1]);
            assertEquals("2", r[0], r[2]);
            assertEquals("", r[1], "nothing ran");
            assertEquals(c[2], r[2].strip());
        }
        assertFalse(Files.exists(dir.resolve("no")), "the check creates nothing");
    }

    @Test
    void aCheckedPathThatDidNotExistIsNotLeftBehindWhenTheRunIsRefused(@TempDir Path dir) {
        Path trace = dir.resolve("t.json");
        String[] r = Cli.run("stream", "--synthetic", "1m", "--trace", trace.toString(), "--stages", "0");
        assertEquals("2", r[0]);
        assertFalse(Files.exists(trace));
    }

    @Test
    void aWriteFailureAfterTheRunIsOneLine() {
        assumeTrue(Files.isWritable(Path.of("/dev/full")), "no /dev/full here");
        String[] trace = Cli.run("stream", "--synthetic", "1m", "--trace", "/dev/full");
        assertEquals("1", trace[0]);
        assertEquals("jpipeline: cannot write the trace to /dev/full: No space left on device", trace[2].strip());
        String[] timeline = Cli.run("stream", "--synthetic", "1m", "--timeline", "/dev/full");
        assertEquals("1", timeline[0]);
        assertEquals("jpipeline: cannot write the timeline to /dev/full: No space left on device",
            timeline[2].strip());
    }
}
