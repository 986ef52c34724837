package dev.jpipeline;

import java.io.File;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A second process for the system-scope tests: opens a region, joins it as {@code rank} of {@code size}, prints
 * {@code joined}, then waits until its standard input closes (or it is killed).
 */
public final class RegionChild {

    private RegionChild() {
    }

    public static void main(String[] args) throws Exception {
        try (SharedRegion region = SharedRegion.open(Path.of(args[0]))) {
            region.join(Integer.parseInt(args[1]), Integer.parseInt(args[2]));
            System.out.println("joined");
            System.out.flush();
            while (System.in.read() >= 0) {
                // hold the rank until the parent closes our input or kills us
            }
        }
    }

    /** Starts a child JVM joining {@code file} as {@code rank} of {@code size}, with the test's class path. */
    static Process start(Path file, int size, int rank) throws java.io.IOException {
        List<String> path = new ArrayList<>();
        for (String property : new String[] {"jdk.module.path", "java.class.path"}) {
            String value = System.getProperty(property);
            if (value != null && !value.isBlank()) {
                path.add(value);
            }
        }
        String java = ProcessHandle.current().info().command().orElse("java");
        return new ProcessBuilder(java, "-cp", String.join(File.pathSeparator, path), RegionChild.class.getName(),
            file.toString(), Integer.toString(size), Integer.toString(rank))
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
    }
}
