package dev.jpipeline.bench;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.jpipeline.Group;
import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineRole;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.SharedRegion;
import dev.jpipeline.ThreadScope;
import java.lang.foreign.MemorySegment;
import java.nio.MappedByteBuffer;
import java.nio.file.Path;
import org.agrona.IoUtil;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.YieldingIdleStrategy;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;

/**
 * The consuming process of the cross-process benchmarks ({@link CrossProcessHandoffBenchmark},
 * {@link CrossProcessStreamingBenchmark}), started by {@link PartnerJvm}; its first argument says what it consumes,
 * its second names the {@link IpcCounts} file where it publishes its count and running sum:
 *
 * <ul>
 *   <li>{@code JPIPELINE COUNTS REGION DEPTH STAGE_BYTES}: rank 1, the consumer, of a system-scope pipeline of
 *       {@code DEPTH} stages at offset 0 of the region; stage s holds its item at {@code s * STAGE_BYTES} after the
 *       state. Each item must be the next sequence number; the partner sums them and publishes the count after
 *       every item. It ends when the producer quits.</li>
 *   <li>{@code AGRONA COUNTS RING IDLE}: the consumer of an Agrona {@link OneToOneRingBuffer} over the mapped
 *       file {@code RING}: {@code read} with no message limit, and the idle strategy {@code IDLE}
 *       ({@link #idleStrategy}) when it finds nothing; the same check and sum per message, the count published
 *       after every {@code read} that found some. It ends when the benchmark asks it to stop.</li>
 *   <li>{@code STREAM COUNTS REGION DEPTH CHUNK_BYTES OP}: the consumer of a system-scope pipeline whose stages are
 *       {@code CHUNK_BYTES} each: computes {@link ChunkCompute} {@code OP} over every stage and publishes the running
 *       sum and the stage count after each.</li>
 * </ul>
 *
 * The final count and sum are published with the end state; a failure (a wrong item, or anything thrown other than
 * the producer's leaving) is printed and published as {@link IpcCounts#FAILED}.
 */
public final class IpcPartner {

    private IpcPartner() {
    }

    public static void main(String[] args) throws Exception {
        try (IpcCounts counts = IpcCounts.open(Path.of(args[1]))) {
            switch (args[0]) {
                case "JPIPELINE" -> jpipeline(counts, Path.of(args[2]), Integer.parseInt(args[3]),
                    Integer.parseInt(args[4]));
                case "AGRONA" -> agrona(counts, Path.of(args[2]), idleStrategy(args[3]));
                case "STREAM" -> stream(counts, Path.of(args[2]), Integer.parseInt(args[3]),
                    Long.parseLong(args[4]), ChunkCompute.valueOf(args[5]));
                default -> throw new IllegalArgumentException("no partner kind " + args[0]);
            }
        }
    }

    private static void jpipeline(IpcCounts counts, Path file, int depth, int stageBytes) {
        consume(counts, file, depth, stageBytes, (stage, n) -> {
            long item = stage.get(JAVA_LONG, 0);
            if (item != n) {
                throw new IllegalStateException("item " + n + " lost or reordered: got " + item);
            }
            return item;
        });
    }

    private static void stream(IpcCounts counts, Path file, int depth, long chunkBytes, ChunkCompute op) {
        consume(counts, file, depth, chunkBytes, (stage, n) -> op.apply(stage));
    }

    /** What the consumer of a pipeline partner does with the stage it holds. */
    @FunctionalInterface
    private interface StageWork {
        /** Reads {@code stage}, the {@code n}th the partner consumes (from 0), and returns what it adds to the sum. */
        long apply(MemorySegment stage, long n);
    }

    /**
     * A pipeline partner: rank 1, the consumer, of the system-scope pipeline of {@code depth} stages at offset 0 of
     * the region in {@code file}, whose stage s is the {@code stageBytes} at {@code s * stageBytes} after the state.
     * It does {@code work} on every stage it holds, and publishes the count after each; it ends when the producer
     * quits.
     */
    private static void consume(IpcCounts counts, Path file, int depth, long stageBytes, StageWork work) {
        Tally tally = new Tally(counts);
        tally.run(() -> {
            try (SharedRegion region = SharedRegion.open(file)) {
                Group group = region.join(2, 1);
                PipelineSharedState state = PipelineSharedState.builder(ThreadScope.SYSTEM, depth).in(region, 0)
                    .build();
                MemorySegment data = region.data();
                long base = PipelineSharedState.regionBytes(depth, 2);
                MemorySegment[] stages = new MemorySegment[depth];
                for (int s = 0; s < depth; s++) {
                    stages[s] = data.asSlice(base + s * stageBytes, stageBytes);
                }
                try (Pipeline pipe = Pipeline.make(group, state, PipelineRole.CONSUMER)) {
                    for (int s = 0; ; s = s + 1 == depth ? 0 : s + 1) {
                        pipe.consumerWait();
                        tally.sum += work.apply(stages[s], tally.n);
                        pipe.consumerRelease();
                        tally.n++;
                        tally.publish();
                    }
                } catch (IllegalStateException e) {
                    if (!String.valueOf(e.getMessage()).contains("no producer is left")) {
                        throw e;
                    }
                }
            }
        });
    }

    /** The count and running sum of what a partner has consumed, and their publishing to its {@link IpcCounts}. */
    static class Tally {
        final IpcCounts counts;
        /** Items or stages consumed. */
        long n;
        /** Their running sum. */
        long sum;

        Tally(IpcCounts counts) {
            this.counts = counts;
        }

        /** Publishes the count and sum so far. */
        void publish() {
            counts.publish(n, sum);
        }

        /**
         * Runs a partner's {@code loop}, then publishes the final count and sum with the end state: failed where the
         * loop threw (printed).
         */
        void run(Runnable loop) {
            boolean ok = true;
            try {
                loop.run();
            } catch (RuntimeException e) {
                ok = false;
                e.printStackTrace();
            } finally {
                counts.finish(n, sum, ok);
            }
        }
    }

    /** The message handler of the Agrona partner: checks and sums each 8-byte message. */
    static final class Checker extends Tally implements MessageHandler {
        Checker(IpcCounts counts) {
            super(counts);
        }

        @Override
        public void onMessage(int msgTypeId, MutableDirectBuffer buffer, int index, int length) {
            long item = buffer.getLong(index);
            if (item != n || length != Long.BYTES) {
                throw new IllegalStateException("message " + n + " lost or reordered: got " + item + " ("
                    + length + " bytes)");
            }
            sum += item;
            n++;
        }
    }

    /**
     * Agrona's idle strategy of that name, with its default settings: {@code BUSY_SPIN} (for a consumer with a
     * core of its own), {@code YIELDING}, or {@code BACKOFF} (spin, yield, then park 1 us to 1 ms).
     */
    static IdleStrategy idleStrategy(String name) {
        return switch (name) {
            case "BUSY_SPIN" -> new BusySpinIdleStrategy();
            case "YIELDING" -> new YieldingIdleStrategy();
            case "BACKOFF" -> new BackoffIdleStrategy();
            default -> throw new IllegalArgumentException("no Agrona idle strategy named " + name);
        };
    }

    private static void agrona(IpcCounts counts, Path file, IdleStrategy idle) {
        Checker checker = new Checker(counts);
        MappedByteBuffer mapped = IoUtil.mapExistingFile(file.toFile(), "ring");
        try {
            checker.run(() -> {
                OneToOneRingBuffer ring = new OneToOneRingBuffer(new UnsafeBuffer(mapped));
                ProcessHandle parent = ProcessHandle.current().parent().orElseThrow();
                for (int idles = 0; ; ) {
                    int read = ring.read(checker, Integer.MAX_VALUE);
                    if (read > 0) {
                        checker.publish();
                    } else {
                        if (counts.stopRequested()) {
                            ring.read(checker, Integer.MAX_VALUE);
                            break;
                        }
                        if ((++idles & ((1 << 22) - 1)) == 0 && !parent.isAlive()) {
                            throw new IllegalStateException("the benchmark process is gone");
                        }
                    }
                    idle.idle(read);
                }
            });
        } finally {
            IoUtil.unmap(mapped);
        }
    }
}
