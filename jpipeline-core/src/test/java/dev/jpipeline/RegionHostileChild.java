package dev.jpipeline;

import dev.jpipeline.internal.ChildJvm;
import java.nio.file.Path;

/**
 * A rank that dies at a chosen moment, for RegionHostileTest: {@code FILE SIZE RANK MODE}, where MODE is
 * <ul>
 *   <li>{@code halt-in-make}: makes a 2-stage consumer (rank &gt; 0) or producer (rank 0) pipeline through a group
 *       whose second sync halts this JVM, so that it dies between the make's two syncs (after its proposal,
 *       before the verdict).</li>
 * </ul>
 * It prints {@code joined} once it has joined the region's group.
 */
public final class RegionHostileChild {

    private RegionHostileChild() {
    }

    public static void main(String[] args) {
        Path file = Path.of(args[0]);
        int size = Integer.parseInt(args[1]);
        int rank = Integer.parseInt(args[2]);
        String mode = args[3];
        try (SharedRegion region = SharedRegion.open(file)) {
            Group joined = region.join(size, rank);
            System.out.println("joined");
            System.out.flush();
            if (!mode.equals("halt-in-make")) {
                throw new IllegalArgumentException("unknown mode " + mode);
            }
            Group halting = new Group() {
                private int syncs;

                @Override
                public int size() {
                    return joined.size();
                }

                @Override
                public int threadRank() {
                    return joined.threadRank();
                }

                @Override
                public void sync() {
                    if (++syncs == 2) {
                        Runtime.getRuntime().halt(9);
                    }
                    joined.sync();
                }
            };
            Pipeline.make(halting, PipelineSharedState.builder(ThreadScope.SYSTEM, 2).in(region, 0).build(),
                rank == 0 ? PipelineRole.PRODUCER : PipelineRole.CONSUMER);
        }
    }

    /** Starts a child running rank {@code rank} of {@code size} in {@code mode}. */
    static Process start(Path file, int size, int rank, String mode) throws java.io.IOException {
        return new ProcessBuilder(ChildJvm.command(RegionHostileChild.class, file.toString(), Integer.toString(size),
            Integer.toString(rank), mode))
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
    }
}
