package dev.jpipeline.cli;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** On a terminal a run longer than a second shows a progress bar; otherwise the output stays plain. */
@Timeout(180)
class ProgressBarTest {

    @Test
    void aTerminalGetsAProgressBarAndAPipeDoesNot(@TempDir Path dir) throws Exception {
        Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/bin/script")), "no script(1) to give a terminal");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String command = java + " -cp " + System.getProperty("java.class.path")
            + " dev.jpipeline.cli.Main stream --synthetic 3g --op sha256 --chunk 8m";    // a few seconds
        Path typescript = dir.resolve("typescript");
        Process terminal = new ProcessBuilder("/usr/bin/script", "-qc", command, typescript.toString())
            .redirectErrorStream(true).redirectOutput(dir.resolve("out").toFile()).start();
        assertTrue(terminal.waitFor(150, TimeUnit.SECONDS), "the run did not finish");
        String screen = Files.readString(typescript);
        assertTrue(screen.contains("%") && screen.contains("[#"), "no progress bar on a terminal: " + screen);
        assertTrue(screen.contains("result    sha256"), screen);

        String[] plain = Cli.run("stream", "--synthetic", "1g", "--op", "sha256", "--chunk", "8m");
        assertFalse(plain[1].contains("[#") || plain[2].contains("[#"), "a progress bar outside a terminal");
    }
}
