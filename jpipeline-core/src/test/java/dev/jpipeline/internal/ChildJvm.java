package dev.jpipeline.internal;

import dev.jpipeline.internal.process.ProcessWaiting;
import java.io.File;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The command of a second JVM for the cross-process tests: this JVM's java, on a class path of the classes it needs
 * (ours and the test's), with native access for the unnamed module it then runs in. The test classes may have been
 * patched into the core module, so their location comes from their code source, with java.class.path and
 * jdk.module.path after.
 */
public final class ChildJvm {

    private ChildJvm() {
    }

    /** The command that runs {@code main}'s {@code main(args)} in a new JVM. */
    public static List<String> command(Class<?> main, String... args) {
        String java = ProcessHandle.current().info().command()
            .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        Set<String> path = new LinkedHashSet<>();
        try {
            for (Class<?> c : List.of(main, ProcessWaiting.class)) {
                path.add(Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString());
            }
        } catch (URISyntaxException e) {
            throw new IllegalStateException("a class location that is not a path: " + e.getMessage(), e);
        }
        for (String property : List.of("jdk.module.path", "java.class.path")) {
            String value = System.getProperty(property);
            if (value != null && !value.isEmpty()) {
                path.addAll(List.of(value.split(File.pathSeparator)));
            }
        }
        List<String> command = new ArrayList<>(List.of(java, "-Xmx64m", "-XX:TieredStopAtLevel=1",
            "--enable-native-access=ALL-UNNAMED", "-cp", String.join(File.pathSeparator, path), main.getName()));
        command.addAll(List.of(args));
        return command;
    }
}
