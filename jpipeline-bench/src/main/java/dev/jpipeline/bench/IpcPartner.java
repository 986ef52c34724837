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
        long n = 0;
        long sum = 0;
        boolean ok = true;
        try (SharedRegion region = SharedRegion.open(file)) {
            Group group = region.join(2, 1);
            PipelineSharedState state = PipelineSharedState.builder(ThreadScope.SYSTEM, depth).in(region, 0).build();
            MemorySegment stages = region.data().asSlice(PipelineSharedState.regionBytes(depth, 2),
                (long) depth * stageBytes);
            try (Pipeline pipe = Pipeline.make(group, state, PipelineRole.CONSUMER)) {
                for (long offset = 0; ; offset = offset + stageBytes == (long) depth * stageBytes ? 0
                    : offset + stageBytes) {
                    pipe.consumerWait();
                    long item = stages.get(JAVA_LONG, offset);
                    if (item != n) {
                        throw new IllegalStateException("item " + n + " lost or reordered: got " + item);
                    }
                    sum += item;
                    pipe.consumerRelease();
                    counts.publish(++n, sum);
                }
            } catch (IllegalStateException e) {
                if (!String.valueOf(e.getMessage()).contains("no producer is left")) {
                    throw e;
                }
            }
        } catch (RuntimeException e) {
            ok = false;
            e.printStackTrace();
        } finally {
            counts.finish(n, sum, ok);
        }
    }

    /** The message handler of the Agrona partner: checks and sums each 8-byte message. */
    static final class Checker implements MessageHandler {
        long next;
        long sum;

        @Override
        public void onMessage(int msgTypeId, MutableDirectBuffer buffer, int index, int length) {
            long item = buffer.getLong(index);
            if (item != next || length != Long.BYTES) {
                throw new IllegalStateException("message " + next + " lost or reordered: got " + item + " ("
                    + length + " bytes)");
            }
            sum += item;
            next++;
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
        Checker checker = new Checker();
        boolean ok = true;
        MappedByteBuffer mapped = IoUtil.mapExistingFile(file.toFile(), "ring");
        try {
            OneToOneRingBuffer ring = new OneToOneRingBuffer(new UnsafeBuffer(mapped));
            ProcessHandle parent = ProcessHandle.current().parent().orElseThrow();
            for (int idles = 0; ; ) {
                int read = ring.read(checker, Integer.MAX_VALUE);
                if (read > 0) {
                    counts.publish(checker.next, checker.sum);
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
        } catch (RuntimeException e) {
            ok = false;
            e.printStackTrace();
        } finally {
            counts.finish(checker.next, checker.sum, ok);
            IoUtil.unmap(mapped);
        }
    }

    private static void stream(IpcCounts counts, Path file, int depth, long chunkBytes, ChunkCompute op) {
        long n = 0;
        long sum = 0;
        boolean ok = true;
        try (SharedRegion region = SharedRegion.open(file)) {
            Group group = region.join(2, 1);
            PipelineSharedState state = PipelineSharedState.builder(ThreadScope.SYSTEM, depth).in(region, 0).build();
            MemorySegment data = region.data();
            long base = PipelineSharedState.regionBytes(depth, 2);
            MemorySegment[] stages = new MemorySegment[depth];
            for (int s = 0; s < depth; s++) {
                stages[s] = data.asSlice(base + s * chunkBytes, chunkBytes);
            }
            try (Pipeline pipe = Pipeline.make(group, state, PipelineRole.CONSUMER)) {
                for (int s = 0; ; s = s + 1 == depth ? 0 : s + 1) {
                    pipe.consumerWait();
                    sum += op.apply(stages[s]);
                    pipe.consumerRelease();
                    counts.publish(++n, sum);
                }
            } catch (IllegalStateException e) {
                if (!String.valueOf(e.getMessage()).contains("no producer is left")) {
                    throw e;
                }
            }
        } catch (RuntimeException e) {
            ok = false;
            e.printStackTrace();
        } finally {
            counts.finish(n, sum, ok);
        }
    }
}
