package dev.jpipeline;

import dev.jpipeline.internal.ChildJvm;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * One rank of a system-scope pipeline in a shared region, for the cross-process tests (and, on threads, the
 * in-process ones): {@code FILE SIZE RANK ROLE STAGES STAGE_BYTES BATCHES [hold]}.
 * <ul>
 *   <li>A producer fills its share of each batch's stage (the stage split evenly between the producers) with
 *       {@code memcpyAsync} from a private buffer holding {@link #expected}; with {@code hold}, it acquires batch
 *       {@code BATCHES}, fills half its share, prints {@code holding} and waits to be killed; with {@code slow},
 *       its copies read from a channel that takes about a millisecond a read ({@link SlowSource}), so that a
 *       committed batch is mostly waiting for its copy (the steady state of a copy-bound run).</li>
 *   <li>A consumer checks every byte of every batch, prints {@code consuming} after the first, and
 *       {@code ok BATCHES SUM} at the end (SUM: the bytes' sum).</li>
 * </ul>
 * A failure prints {@code failed CLASS: MESSAGE} (for a StageFailedException, then {@code cause: ...}) and exits
 * 3. The region's data holds the state at 0, then the stages' buffers.
 */
public final class RegionPipelineChild {

    private RegionPipelineChild() {
    }

    public static void main(String[] args) throws Exception {
        Path file = Path.of(args[0]);
        int size = Integer.parseInt(args[1]);
        int rank = Integer.parseInt(args[2]);
        PipelineRole role = PipelineRole.valueOf(args[3]);
        int stages = Integer.parseInt(args[4]);
        int stageBytes = Integer.parseInt(args[5]);
        long batches = Long.parseLong(args[6]);
        boolean hold = args.length > 7 && args[7].equals("hold");
        boolean slow = args.length > 7 && args[7].equals("slow");
        try (SharedRegion region = SharedRegion.open(file)) {
            Group group = region.join(size, rank);
            System.out.println("joined");
            System.out.flush();
            try {
                String result = run(region, group, role, stages, stageBytes, batches, hold, slow, () -> {
                    System.out.println("consuming");
                    System.out.flush();
                });
                System.out.println(result);
            } catch (RuntimeException e) {
                System.out.println("failed " + e.getClass().getSimpleName() + ": " + e.getMessage()
                    + (e.getCause() == null ? "" : " cause: " + e.getCause().getMessage()));
                System.out.flush();
                System.exit(3);
            }
        }
    }

    /** Makes the pipeline and runs this rank's side; returns what main prints. */
    static String run(SharedRegion region, Group group, PipelineRole role, int stages, int stageBytes, long batches,
                      boolean hold, Runnable firstBatch) throws InterruptedException {
        return run(region, group, role, stages, stageBytes, batches, hold, false, firstBatch);
    }

    /** Makes the pipeline and runs this rank's side, its copies from a {@link SlowSource} if {@code slow}. */
    static String run(SharedRegion region, Group group, PipelineRole role, int stages, int stageBytes, long batches,
                      boolean hold, boolean slow, Runnable firstBatch) throws InterruptedException {
        PipelineSharedState state = PipelineSharedState.builder(ThreadScope.SYSTEM, stages).in(region, 0).build();
        Pipeline pipe = Pipeline.make(group, state, role);
        MemorySegment buffers = region.data().asSlice(PipelineSharedState.regionBytes(stages, group.size()),
            (long) stages * stageBytes);
        try {
            return role == PipelineRole.PRODUCER
                ? produce(pipe, buffers, group, stages, stageBytes, batches, hold, slow)
                : consume(pipe, buffers, stages, stageBytes, batches, firstBatch);
        } finally {
            pipe.quit();        // after a failure too: the peers are told instead of left waiting
        }
    }

    private static String produce(Pipeline pipe, MemorySegment buffers, Group group, int stages, int stageBytes,
                                  long batches, boolean hold, boolean slow) throws InterruptedException {
        int producers = producerCount(group);
        int me = producerIndex(group);
        long from = (long) stageBytes * me / producers;
        long to = (long) stageBytes * (me + 1) / producers;
        try (Arena arena = Arena.ofShared()) {
            // a source per stage: refilled only after the stage is acquired again, when its copy has landed
            MemorySegment sources = arena.allocate(Math.max(1, (to - from) * stages));
            for (long b = 0; b < batches + (hold ? 1 : 0); b++) {
                pipe.producerAcquire();
                MemorySegment source = sources.asSlice((b % stages) * (to - from), to - from);
                for (long i = from; i < to; i++) {
                    source.set(ValueLayout.JAVA_BYTE, i - from, expected(b, i));
                }
                MemorySegment stage = buffers.asSlice((b % stages) * stageBytes, stageBytes);
                if (b == batches) {         // hold: half a share written, then wait to be killed
                    MemorySegment.copy(source, 0, stage, from, (to - from) / 2);
                    System.out.println("holding");
                    System.out.flush();
                    Thread.sleep(Long.MAX_VALUE);
                }
                if (slow) {
                    MemcpyAsync.memcpyAsync(stage.asSlice(from), new SlowSource(stageBytes), b * stageBytes + from,
                        to - from, pipe);
                } else {
                    MemcpyAsync.memcpyAsync(stage.asSlice(from), source, to - from, pipe);
                }
                pipe.producerCommit();
            }
        }
        return "produced " + batches;
    }

    private static String consume(Pipeline pipe, MemorySegment buffers, int stages, int stageBytes, long batches,
                                  Runnable firstBatch) {
        long sum = 0;
        for (long b = 0; b < batches; b++) {
            pipe.consumerWait();
            MemorySegment stage = buffers.asSlice((b % stages) * stageBytes, stageBytes);
            for (long i = 0; i < stageBytes; i++) {
                byte got = stage.get(ValueLayout.JAVA_BYTE, i);
                if (got != expected(b, i)) {
                    throw new IllegalStateException("batch " + b + " byte " + i + " is " + got + ", expected "
                        + expected(b, i));
                }
                sum += got & 0xFF;
            }
            pipe.consumerRelease();
            if (b == 0) {
                firstBatch.run();
            }
        }
        return "ok " + batches + " " + sum;
    }

    /**
     * A "file" of every batch's bytes in order (byte {@code p} is batch {@code p / stageBytes}'s byte
     * {@code p % stageBytes}) whose reads take about a millisecond each.
     */
    static final class SlowSource extends PositionalReadChannel {
        private final int stageBytes;

        SlowSource(int stageBytes) {
            this.stageBytes = stageBytes;
        }

        @Override
        public int read(java.nio.ByteBuffer dst, long position) throws java.io.IOException {
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
            int n = dst.remaining();
            for (int k = 0; k < n; k++) {
                long p = position + k;
                dst.put(expected(p / stageBytes, p % stageBytes));
            }
            return n;
        }

        @Override
        public long size() {
            return Long.MAX_VALUE;
        }
    }

    /** The byte at offset {@code i} of batch {@code b}. */
    static byte expected(long b, long i) {
        return (byte) (b * 31 + i * 7 + (i >> 8));
    }

    /** The sum of a run's bytes, as a consumer reports it. */
    static long expectedSum(int stageBytes, long batches) {
        long sum = 0;
        for (long b = 0; b < batches; b++) {
            for (long i = 0; i < stageBytes; i++) {
                sum += expected(b, i) & 0xFF;
            }
        }
        return sum;
    }

    /** Producers are the lower ranks: {@code size / 2} of them, at least one. */
    static int producerCount(Group group) {
        return Math.max(1, group.size() / 2);
    }

    private static int producerIndex(Group group) {
        return group.threadRank();
    }

    /** The role of {@code rank} in a group of {@code size}: the lower half produce. */
    static PipelineRole roleOf(int size, int rank) {
        return rank < Math.max(1, size / 2) ? PipelineRole.PRODUCER : PipelineRole.CONSUMER;
    }

    /** Starts a child running rank {@code rank} of {@code size}. */
    static Process start(Path file, int size, int rank, int stages, int stageBytes, long batches, String... extra)
        throws java.io.IOException {
        List<String> args = new ArrayList<>(List.of(file.toString(), Integer.toString(size), Integer.toString(rank),
            roleOf(size, rank).name(), Integer.toString(stages), Integer.toString(stageBytes), Long.toString(batches)));
        args.addAll(List.of(extra));
        return new ProcessBuilder(ChildJvm.command(RegionPipelineChild.class, args.toArray(String[]::new)))
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
    }

    /** The data bytes a run's region needs. */
    static long dataBytes(int size, int stages, int stageBytes) {
        return PipelineSharedState.regionBytes(stages, size) + (long) stages * stageBytes;
    }
}
