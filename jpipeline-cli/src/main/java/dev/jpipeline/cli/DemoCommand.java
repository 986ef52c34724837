package dev.jpipeline.cli;

import java.io.PrintWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code jpipeline demo}: streams a built-in data set through a partitioned pipeline (2 producers, 2 consumers,
 * 4 stages), block-scope in this JVM or, with {@code --processes}, system-scope with the producers and the
 * consumers in two child JVMs. The producers copy each chunk into a stage buffer with a cooperative
 * {@code memcpyAsync} (each copies half); the consumers checksum their halves of the stage ({@link DemoJob}). The
 * result is verified against a direct pass over the same data.
 *
 * <pre>
 *   source (off-heap, generated) --memcpyAsync--&gt; stage[b mod 4] --checksum--&gt; consumer totals
 *            producers 0,1 (halves)                               consumers 2,3 (halves)
 * </pre>
 */
@Command(name = "demo", mixinStandardHelpOptions = true, versionProvider = BuildVersion.class,
    description = "Stream built-in data through a 2-producer, 2-consumer, 4-stage pipeline and verify it.")
final class DemoCommand implements Callable<Integer> {

    @Spec
    private CommandSpec spec;

    @Option(names = "--size", defaultValue = "256m", converter = ByteSize.class, paramLabel = "SIZE",
        description = "Size of the built-in data set, a whole number of chunks (default ${DEFAULT-VALUE}).")
    private long total;

    @Option(names = "--chunk", defaultValue = "256k", converter = ByteSize.class, paramLabel = "SIZE",
        description = "Bytes per stage, a multiple of 16 (default ${DEFAULT-VALUE}).")
    private long chunk;

    @Option(names = "--processes", description = "Run the producers and the consumers in two child JVMs, on a "
        + "system-scope pipeline in a shared memory file (under /dev/shm when it has room).")
    private boolean processes;

    @Override
    public Integer call() {
        if (chunk < 16 || chunk % 16 != 0 || chunk > Integer.MAX_VALUE) {
            throw bad("--chunk must be a multiple of 16 bytes below 2 GiB (each consumer checksums half a stage in "
                + "8-byte words), got " + chunk);
        }
        if (total < chunk || total % chunk != 0) {
            throw bad("--size must be a whole number (at least 1) of --chunk stages, got --size " + total
                + " and --chunk " + chunk);
        }
        PrintWriter out = spec.commandLine().getOut();
        long batches = total / chunk;
        try (Arena arena = Arena.ofShared()) {
            MemorySegment data = DemoJob.data(arena, total);
            DemoJob.Outcome outcome;
            String children = null;
            if (processes) {
                try (ChildProcesses started = ChildProcesses.create(StageArea.dataBytes(DemoJob.STAGES,
                    DemoJob.PRODUCERS + DemoJob.CONSUMERS, chunk))) {
                    outcome = DemoProcesses.run(started, total, chunk);
                    children = started.describe();
                } catch (ChildProcesses.Failure e) {
                    spec.commandLine().getErr().println("jpipeline: " + e.getMessage());
                    spec.commandLine().getErr().flush();
                    return 1;
                }
            } else {
                outcome = DemoJob.run(data, chunk);
            }
            long expected = DemoJob.direct(data);
            boolean verified = outcome.checksum() == expected;
            double seconds = outcome.nanos() / 1e9;
            out.printf(Locale.ROOT,
                "jpipeline demo: %d producer threads copy chunks into %d stage buffers while %d consumer "
                + "threads checksum them%n", DemoJob.PRODUCERS, DemoJob.STAGES, DemoJob.CONSUMERS);
            out.printf(Locale.ROOT, "  a partitioned pipeline, %s%n", processes
                ? "system scope (cuda::thread_scope_system): producers and consumers in two JVMs, one memory file"
                : "block scope (cuda::thread_scope_block): each thread produces or consumes, all in this JVM");
            if (children != null) {
                out.printf(Locale.ROOT, "  processes %s (2 child JVMs)%n", children);
            }
            out.printf(Locale.ROOT,
                "  streamed %s as %d chunks of %s, each an asynchronous copy (memcpyAsync) into a free stage "
                + "buffer%n", ByteSize.format(total), batches,
                ByteSize.format(chunk));
            out.printf(Locale.ROOT,
                "  checksum 0x%016x, and 0x%016x from one plain loop over the data: %s%n", outcome.checksum(),
                expected,
                verified ? "verified" : "MISMATCH");
            out.printf(Locale.ROOT, "  %.3f s, %.1f MiB/s, %.0f chunks/s%n", seconds, total / seconds / (1 << 20),
                batches / seconds);
            out.flush();
            return verified ? 0 : 1;
        } catch (StreamJob.TooLargeException e) {
            throw bad(e.getMessage());
        }
    }

    private ParameterException bad(String message) {
        return new ParameterException(spec.commandLine(), message);
    }
}
