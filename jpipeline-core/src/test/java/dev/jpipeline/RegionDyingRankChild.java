package dev.jpipeline;

import dev.jpipeline.internal.ChildJvm;
import dev.jpipeline.internal.RegionProbe;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.file.Path;

/**
 * A rank that dies at a chosen moment, for RegionMakeTest and RegionRecoveryTest: {@code FILE SIZE RANK MODE},
 * where MODE is
 * <ul>
 *   <li>{@code halt-in-make}: makes a 2-stage consumer (rank &gt; 0) or producer (rank 0) pipeline through a group
 *       whose second sync halts this JVM, so that it dies between the make's two syncs (after its proposal,
 *       before the verdict).</li>
 * </ul>
 * and, for a 2-stage pipeline of one producer (rank 0) and consumers (the other ranks), whose stages follow the
 * state (at 0) in the region's data, 4096 bytes each ({@link #STAGES}, {@link #STAGE_BYTES}):
 * <ul>
 *   <li>{@code unlanded-acquire} (rank 0): commits batches 0 and 1, each filled by a {@code memcpyAsync} read that
 *       never lands ({@link #NEVER}), prints {@code acquiring} and acquires batch 2, which waits forever: the
 *       steady state of a copy-bound run, where the producer waits for a stage whose copy is still landing.</li>
 *   <li>{@code unlanded-hold} (rank 0): commits batch 0 the same way, acquires batch 1, ties such a read to it and
 *       prints {@code holding}.</li>
 *   <li>{@code unlanded-rewound} (rank 0): commits batches 0 and 1 the same way, then rewinds its cursors to what
 *       they held between batch 1's arrival and their update, and prints {@code rewound}: a process that dies
 *       between the two.</li>
 *   <li>{@code landed-rewound} (rank 0): commits batch 0 with no copy, rewinds the same way, prints
 *       {@code rewound}.</li>
 *   <li>{@code released-rewound} (a consumer): waits for and releases batch 0, rewinds its release count to what
 *       it held between the release's arrival and its update, prints {@code rewound}.</li>
 *   <li>{@code ended-thread} (rank 0): makes the producer's pipeline on a thread of its own, which commits batch 0,
 *       acquires batch 1 and ends without quit; prints {@code ended} once that thread has ended. The process lives
 *       on, with no other thread in a wait.</li>
 * </ul>
 * Each then waits to be killed.
 * It prints {@code joined} once it has joined the region's group.
 */
public final class RegionDyingRankChild {

    private RegionDyingRankChild() {
    }

    public static void main(String[] args) throws InterruptedException {
        Path file = Path.of(args[0]);
        int size = Integer.parseInt(args[1]);
        int rank = Integer.parseInt(args[2]);
        String mode = args[3];
        try (SharedRegion region = SharedRegion.open(file)) {
            Group joined = region.join(size, rank);
            System.out.println("joined");
            System.out.flush();
            if (mode.equals("ended-thread")) {
                Thread producer = Thread.ofPlatform().name("ended producer").start(() -> {
                    Pipeline pipe = Pipeline.make(joined, PipelineSharedState.builder(ThreadScope.SYSTEM, STAGES)
                        .in(region, 0).build(), PipelineRole.PRODUCER);
                    pipe.producerAcquire();
                    pipe.producerCommit();
                    pipe.producerAcquire();         // ends holding batch 1, without quit
                });
                producer.join();
                System.out.println("ended");
                System.out.flush();
                Thread.sleep(Long.MAX_VALUE);
            }
            if (!mode.equals("halt-in-make")) {
                dieAt(region, joined, mode);
                return;
            }
            Group halting = Teams.beforeSync(joined, 2, () -> Runtime.getRuntime().halt(9));
            Pipeline.make(halting, PipelineSharedState.builder(ThreadScope.SYSTEM, 2).in(region, 0).build(),
                rank == 0 ? PipelineRole.PRODUCER : PipelineRole.CONSUMER);
        }
    }

    /** Stages of the pipelines the modes other than {@code halt-in-make} make, and their bytes. */
    static final int STAGES = 2;
    static final int STAGE_BYTES = 4096;

    /** A file whose reads never return: a copy from it is handed to a copy worker and never lands. */
    static final PositionalReadChannel NEVER = new PositionalReadChannel() {
        @Override
        public int read(ByteBuffer dst, long position) {
            for (;;) {
                java.util.concurrent.locks.LockSupport.park(this);
            }
        }

        @Override
        public long size() {
            return 1 << 20;
        }
    };

    private static void dieAt(SharedRegion region, Group group, String mode) throws InterruptedException {
        boolean producer = group.threadRank() == 0;
        Pipeline pipe = Pipeline.make(group, PipelineSharedState.builder(ThreadScope.SYSTEM, STAGES).in(region, 0)
            .build(), producer ? PipelineRole.PRODUCER : PipelineRole.CONSUMER);
        MemorySegment stages = region.data().asSlice(PipelineSharedState.regionBytes(STAGES, group.size()),
            (long) STAGES * STAGE_BYTES);
        String said;
        switch (mode) {
            case "unlanded-acquire", "unlanded-hold", "unlanded-rewound" -> {
                int batches = mode.equals("unlanded-hold") ? 1 : 2;
                for (int b = 0; b < batches; b++) {
                    pipe.producerAcquire();
                    MemcpyAsync.memcpyAsync(stages.asSlice((long) b * STAGE_BYTES), NEVER, 0, STAGE_BYTES, pipe);
                    pipe.producerCommit();
                }
                said = switch (mode) {
                    case "unlanded-acquire" -> "acquiring";
                    case "unlanded-hold" -> "holding";
                    default -> "rewound";
                };
                if (mode.equals("unlanded-hold")) {
                    pipe.producerAcquire();
                    MemcpyAsync.memcpyAsync(stages.asSlice(STAGE_BYTES), NEVER, 0, STAGE_BYTES, pipe);
                } else if (mode.equals("unlanded-rewound")) {
                    RegionProbe.rewindLastCommit(region.data(), 0);
                }
            }
            case "landed-rewound" -> {
                pipe.producerAcquire();
                stages.fill((byte) 1);
                pipe.producerCommit();
                RegionProbe.rewindLastCommit(region.data(), 0);
                said = "rewound";
            }
            case "released-rewound" -> {
                pipe.consumerWait();
                pipe.consumerRelease();
                RegionProbe.rewindLastRelease(region.data(), group.threadRank());
                said = "rewound";
            }
            default -> throw new IllegalArgumentException("unknown mode " + mode);
        }
        System.out.println(said);
        System.out.flush();
        if (mode.equals("unlanded-acquire")) {
            pipe.producerAcquire();         // stage 0's copy never lands, so its consumers never release it
            System.out.println("acquired batch 2: its stage was released before its copy landed");
            System.out.flush();
        }
        Thread.sleep(Long.MAX_VALUE);
    }

    /** Starts a child running rank {@code rank} of {@code size} in {@code mode}. */
    static Process start(Path file, int size, int rank, String mode) throws java.io.IOException {
        return new ProcessBuilder(ChildJvm.command(RegionDyingRankChild.class, file.toString(), Integer.toString(size),
            Integer.toString(rank), mode))
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
    }
}
