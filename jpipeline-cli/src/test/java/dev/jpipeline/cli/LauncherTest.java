package dev.jpipeline.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.jar.Attributes;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code ./jpipeline} launcher, run from another directory: relative paths are the caller's. The launcher
 * and its JDK finder are copied into an install folder whose jar is a manifest pointing at this test's class
 * path, so that the launcher runs the code under test without building anything.
 */
class LauncherTest {

    @Test
    void relativePathsAreResolvedInTheCallersDirectory(@TempDir Path dir) throws Exception {
        Path install = install(dir.resolve("install"));
        Path caller = Files.createDirectories(dir.resolve("caller"));
        byte[] data = new byte[100_000];
        Arrays.fill(data, (byte) 7);
        Files.write(caller.resolve("data.bin"), data);
        ProcessBuilder pb = new ProcessBuilder("bash", install.resolve("jpipeline").toString(), "stream", "data.bin",
            "--op", "sum", "--chunk", "16k", "--timeline", "rel.html", "--trace", "out/rel.json")
            .directory(caller.toFile()).redirectErrorStream(true);
        Files.createDirectories(caller.resolve("out"));
        pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
        Process p = pb.start();
        p.getOutputStream().close();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), output);
        assertEquals(0, p.exitValue(), output);
        assertTrue(output.contains("jpipeline stream: data.bin (97.7 KiB)"), output);
        assertTrue(Files.size(caller.resolve("rel.html")) > 0, "the timeline is in the caller's directory");
        assertTrue(Files.size(caller.resolve("out/rel.json")) > 0, "the trace is in the caller's directory");
        assertFalse(Files.exists(install.resolve("rel.html")), "nothing is written into the install folder");
    }

    @Test
    void aReplayLineStartsWithTheLauncherAsTheCallerTypedIt(@TempDir Path dir) throws Exception {
        install(dir.resolve("install"));
        Path caller = Files.createDirectories(dir.resolve("caller"));
        String variant = dev.jpipeline.examples.Examples.faulty().getFirst().name();
        ProcessBuilder pb = new ProcessBuilder("bash", "../install/jpipeline", "examples", "--faulty", "--schedules",
            "1", "--only", variant).directory(caller.toFile()).redirectErrorStream(true);
        pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
        String output = run(pb);
        assertTrue(output.contains("replay: ../install/jpipeline examples --faulty --only '"), output);
    }

    @Test
    void theJdkFinderReadsAJdksReleaseFileInsteadOfStartingIt(@TempDir Path dir) throws Exception {
        Path repo = Path.of(System.getProperty("user.dir")).getParent();
        Path marker = dir.resolve("started");
        Path jdk25 = fakeJdk(dir.resolve("jdk25"), "JAVA_VERSION=\"25.0.1\"", marker);
        Path jdk8 = fakeJdk(dir.resolve("jdk8"), "JAVA_VERSION=\"1.8.0_412\"", marker);
        String finder = ". '" + repo.resolve("scripts/jdk25.sh") + "'; echo \"$JAVA_HOME\"";
        ProcessBuilder pb = new ProcessBuilder("bash", "-c", finder).redirectErrorStream(true);
        pb.environment().put("JAVA_HOME", jdk25.toString());
        assertEquals(jdk25.toString(), run(pb).strip());
        pb.environment().put("JAVA_HOME", jdk8.toString());
        assertFalse(run(pb).strip().equals(jdk8.toString()), "a JDK 8 was taken for 25 or newer");
        assertFalse(Files.exists(marker), "a candidate's java was started to learn its version");
    }

    /** A JDK folder with {@code releaseLine} in its release file, whose java, if ever started, writes {@code marker}. */
    private static Path fakeJdk(Path home, String releaseLine, Path marker) throws IOException {
        Path bin = Files.createDirectories(home.resolve("bin"));
        for (String tool : new String[] {"java", "javac"}) {
            Path script = bin.resolve(tool);
            Files.writeString(script, "#!/bin/sh\ntouch '" + marker + "'\nexit 1\n");
            assertTrue(script.toFile().setExecutable(true));
        }
        Files.writeString(home.resolve("release"), "IMPLEMENTOR=\"test\"\n" + releaseLine + "\n");
        return home;
    }

    private static String run(ProcessBuilder pb) throws Exception {
        Process p = pb.start();
        p.getOutputStream().close();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), output);
        return output;
    }

    /** An install folder: the launcher, its JDK finder, and a jar that runs this class path. */
    private static Path install(Path install) throws IOException {
        Path repo = Path.of(System.getProperty("user.dir")).getParent();
        Files.createDirectories(install.resolve("scripts"));
        Files.copy(repo.resolve("jpipeline"), install.resolve("jpipeline"));
        Files.copy(repo.resolve("scripts/jdk25.sh"), install.resolve("scripts/jdk25.sh"));
        Path jar = Files.createDirectories(install.resolve("jpipeline-cli/target")).resolve("jpipeline.jar");
        Manifest manifest = new Manifest();
        manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        manifest.getMainAttributes().put(Attributes.Name.MAIN_CLASS, Main.class.getName());
        manifest.getMainAttributes().put(Attributes.Name.CLASS_PATH,
            Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
                .map(entry -> Path.of(entry).toUri().toString()).collect(Collectors.joining(" ")));
        try (OutputStream out = new JarOutputStream(Files.newOutputStream(jar), manifest)) {
            out.flush();
        }
        return install;
    }
}
