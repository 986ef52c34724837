package dev.jpipeline.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The second JVM of a cross-process benchmark: this JVM's {@code java} on this JVM's class path (the benchmark
 * jar), running a partner's {@code main}, with the flags that the benchmark forks get from {@code @Fork}
 * ({@link #FLAGS}), and with this JVM's standard streams. The partner runs with the default JIT and heap, as an
 * application's second process would (not the C1-only, small-heap JVMs of the core module's tests).
 */
final class PartnerJvm {

    /**
     * JVM flags of the benchmark forks and their partners: native access for {@code Futex}; Unsafe memory access
     * for JCTools (silences its warning); Agrona 2.x's {@code UnsafeApi} reaches {@code jdk.internal.misc.Unsafe},
     * which fails with an {@code IllegalAccessError} unless exported; Agrona's bounds checks off, as its
     * low-latency users run it.
     */
    static final String[] FLAGS = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow",
        "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED", "-Dagrona.disable.bounds.checks=true"};

    private PartnerJvm() {
    }

    /** Starts {@code main}'s {@code main(args)} in a new JVM (see the class comment). */
    static Process start(Class<?> main, String... args) throws IOException {
        String java = ProcessHandle.current().info().command().orElse(
            Path.of(System.getProperty("java.home"), "bin", "java").toString());
        List<String> command = new ArrayList<>();
        command.add(java);
        command.addAll(List.of(FLAGS));
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
        command.addAll(List.of(args));
        return new ProcessBuilder(command).inheritIO().start();
    }

    /** Waits up to 10 s for {@code partner} to exit, then kills it if it has not; returns whether it exited. */
    static boolean stop(Process partner) throws InterruptedException {
        try {
            return partner.waitFor(10, TimeUnit.SECONDS);
        } finally {
            partner.destroyForcibly();
        }
    }
}
