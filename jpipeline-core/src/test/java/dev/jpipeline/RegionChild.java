package dev.jpipeline;

import dev.jpipeline.internal.ChildJvm;
import java.nio.file.Path;

/**
 * A second process for the system-scope tests: opens a region, joins it as {@code rank} of {@code size}, prints
 * {@code joined}, then, for each line of its standard input, syncs with the group and prints {@code synced}, until
 * its input closes (or it is killed). A sync that fails prints the failure and exits 3.
 */
public final class RegionChild {

    private RegionChild() {
    }

    public static void main(String[] args) throws Exception {
        try (SharedRegion region = SharedRegion.open(Path.of(args[0]))) {
            Group group = region.join(Integer.parseInt(args[1]), Integer.parseInt(args[2]));
            System.out.println("joined");
            System.out.flush();
            java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(System.in));
            while (in.readLine() != null) {
                try {
                    group.sync();
                } catch (IllegalStateException e) {
                    System.out.println(e.getMessage());
                    System.exit(3);
                }
                System.out.println("synced");
                System.out.flush();
            }
        }
    }

    /** Starts a child JVM joining {@code file} as {@code rank} of {@code size}, with the test's class path. */
    static Process start(Path file, int size, int rank) throws java.io.IOException {
        return new ProcessBuilder(ChildJvm.command(RegionChild.class, file.toString(), Integer.toString(size),
            Integer.toString(rank)))
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
    }
}
