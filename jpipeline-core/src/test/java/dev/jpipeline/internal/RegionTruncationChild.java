package dev.jpipeline.internal;

import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.SharedRegion;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.internal.process.MappedAtomics;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A JVM that meets a region truncated under it, for RegionTruncationTest (run with {@code -Xint}, where HotSpot does
 * not guard a compare-and-set against the fault): {@code FILE MODE}, where MODE is
 * <ul>
 *   <li>{@code cas}: maps FILE (1 MiB), truncates it to 4096 bytes, then compare-and-sets a word past the end
 *       through MappedAtomics;</li>
 *   <li>{@code pipeline}: opens the region FILE, joins a group of 1 and makes a unified system-scope pipeline in it,
 *       prints {@code ready}, reads a line (the parent truncates the file meanwhile), then acquires a stage.</li>
 * </ul>
 * It prints what the access threw, and exits 0, where a fatal signal would end it with 134.
 */
public final class RegionTruncationChild {

    private RegionTruncationChild() {
    }

    public static void main(String[] args) throws Exception {
        Path file = Path.of(args[0]);
        try {
            if (args[1].equals("cas")) {
                try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                         StandardOpenOption.WRITE)) {
                    channel.truncate(0);
                    channel.write(java.nio.ByteBuffer.wrap(new byte[1]), (1 << 20) - 1);
                    MemorySegment mapped = channel.map(FileChannel.MapMode.READ_WRITE, 0, 1 << 20, Arena.global());
                    mapped.set(java.lang.foreign.ValueLayout.JAVA_INT, 8192, 7);
                    channel.truncate(4096);
                    System.out.println("cas " + MappedAtomics.casInt(mapped, 8192, 7, 8));
                }
            } else {
                try (SharedRegion region = SharedRegion.open(file)) {
                    Pipeline pipe = Pipeline.make(region.join(1, 0),
                        PipelineSharedState.builder(ThreadScope.SYSTEM, 2).in(region, 0).build());
                    System.out.println("ready");
                    System.out.flush();
                    new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
                    pipe.producerAcquire();
                    System.out.println("acquired");
                }
            }
        } catch (Throwable t) {
            System.out.println("threw " + t);
        }
        System.out.flush();
    }
}
