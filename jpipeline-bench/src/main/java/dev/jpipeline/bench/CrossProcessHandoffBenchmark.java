package dev.jpipeline.bench;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.jpipeline.Group;
import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineRole;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.SharedRegion;
import dev.jpipeline.ThreadScope;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.MappedByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.function.LongPredicate;
import org.agrona.IoUtil;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Cross-process hand-off of 8-byte items, 1 producer → 1 consumer, end to end: the benchmark thread produces
 * 2^16 sequence numbers per invocation; a second JVM ({@link IpcPartner}, started per trial) consumes them, checks
 * that each is the next, sums them and publishes its count ({@link IpcCounts}); the invocation ends when the
 * partner has consumed the last. At the trial's end the partner's final count and sum must be those of every item
 * sent (n(n-1)/2). Scores are items per second.
 *
 * <ul>
 *   <li>{@code jpipeline}: a system-scope pipeline of {@code depth} stages in a {@link SharedRegion} (a file under
 *       {@code /dev/shm}), made by a group of two: rank 0 here produces ({@code producerAcquire}, one 8-byte store
 *       into the stage's buffer, {@code producerCommit}), rank 1 in the partner consumes. The stage buffers follow
 *       the state in the region's data, {@code stageBytes} apart (8: packed in one line, as Agrona's records are).
 *       Waiting is the state's default wait strategy (ADAPTIVE: spin, yield), then a futex sleep.</li>
 *   <li>{@code agronaWrite}, {@code agronaTryClaim}: Agrona's {@link OneToOneRingBuffer} over a mapped file in the
 *       same folder, {@code ringCapacity} bytes of records plus its trailer; the producer retries {@code write}
 *       (or {@code tryClaim}, a {@code putLong} into the claimed record, {@code commit}) while the ring is full, the
 *       partner calls {@code read} with no message limit; both sides idle with Agrona's {@code idle} strategy
 *       ({@link IpcPartner#idleStrategy}: {@code BUSY_SPIN} for cores of their own, {@code YIELDING} or
 *       {@code BACKOFF} for a machine with fewer free cores than spinning threads). A record is an
 *       8-byte header and the 8-byte item, 16 bytes; a write needs room for one more header (the next record's
 *       length word, which it zeroes), so a ring of 64 bytes holds 3 items in flight and a ring of 128 bytes 7:
 *       jpipeline's 4 stages lie between them.</li>
 * </ul>
 *
 * Both JVMs run with {@link PartnerJvm#FLAGS}: Agrona's bounds checks are off in both. With
 * {@code partner=THREAD} the same partner code runs on a thread of the benchmark's JVM instead (its own mappings of
 * the same files): the same protocol without the process boundary, for comparison.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 3, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow",
    "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED", "-Dagrona.disable.bounds.checks=true"})
public class CrossProcessHandoffBenchmark {

    static final int ITEMS = CheckedItems.ITEMS;
    static final int AGRONA_MSG_TYPE = 1;

    /**
     * What every lane has: the counters file, the partner (a second JVM, or for comparison a thread of this JVM
     * running the same {@link IpcPartner} code on its own mappings), and the items sent so far.
     */
    @State(Scope.Thread)
    public abstract static class Lane {
        @Param({"PROCESS"})
        CrossProcessWakeBenchmark.Partner partner;

        IpcCounts counts;
        Process process;
        Thread thread;
        long sent;

        /** Starts the partner: {@link IpcPartner} with these arguments, where {@link #partner} says. */
        final void startPartner(String... args) throws IOException {
            if (partner == CrossProcessWakeBenchmark.Partner.PROCESS) {
                process = PartnerJvm.start(IpcPartner.class, args);
            } else {
                thread = Thread.ofPlatform().daemon().name("ipc-partner").start(() -> {
                    try {
                        IpcPartner.main(args);
                    } catch (Exception e) {
                        e.printStackTrace();
                    }
                });
            }
        }

        final boolean partnerAlive() {
            return process != null ? process.isAlive() : thread.isAlive();
        }

        /** Waits for the partner to consume every item sent so far. */
        final void awaitConsumed() {
            counts.awaitConsumed(sent, this::partnerAlive);
        }

        /** After the producer has said it is done: the partner's exit, and its count and sum, checked. */
        final void checkPartner() throws IOException, InterruptedException {
            boolean exited;
            if (process != null) {
                exited = PartnerJvm.stop(process);
            } else {
                thread.join(10_000);
                exited = !thread.isAlive();
            }
            try {
                long expectedSum = sent * (sent - 1) / 2;
                if (!exited || counts.state() != IpcCounts.FINISHED || counts.consumed() != sent
                    || counts.sum() != expectedSum) {
                    throw new IllegalStateException("the partner " + (exited ? "stopped" : "did not stop within 10 s")
                        + " in state " + counts.state() + " having consumed " + counts.consumed() + " items summing to "
                        + counts.sum() + "; sent " + sent + " summing to " + expectedSum);
                }
            } finally {
                counts.delete();
            }
        }
    }

    /** jpipeline: a system-scope pipeline in a shared region; this thread is the producer, rank 0. */
    @State(Scope.Thread)
    public static class JpipelineLane extends Lane {
        @Param({"4"})
        int depth;

        /** Bytes from one stage's item to the next: 8 packs the four in one cache line. */
        @Param({"8"})
        int stageBytes;

        SharedRegion region;
        Pipeline pipe;
        MemorySegment stages;

        @Setup(Level.Trial)
        public void start() throws IOException {
            Path dir = IpcCounts.directory();
            counts = IpcCounts.create(dir);
            Path file = dir.resolve("jpipeline-ipc-" + ProcessHandle.current().pid() + ".region");
            Files.deleteIfExists(file);
            region = SharedRegion.create(file, PipelineSharedState.regionBytes(depth, 2) + (long) depth * stageBytes,
                SharedRegion.Sharing.OWNER);
            startPartner("JPIPELINE", counts.file.toString(), file.toString(), Integer.toString(depth),
                Integer.toString(stageBytes));
            Group group = region.join(2, 0);
            PipelineSharedState state = PipelineSharedState.builder(ThreadScope.SYSTEM, depth).in(region, 0).build();
            stages = region.data().asSlice(PipelineSharedState.regionBytes(depth, 2), (long) depth * stageBytes);
            pipe = Pipeline.make(group, state, PipelineRole.PRODUCER);
        }

        @TearDown(Level.Trial)
        public void stop() throws IOException, InterruptedException {
            try {
                pipe.quit();
                checkPartner();
            } finally {
                region.close();
                Files.deleteIfExists(region.file());
            }
        }
    }

    @Benchmark
    @OperationsPerInvocation(ITEMS)
    public void jpipeline(JpipelineLane lane) {
        Pipeline pipe = lane.pipe;
        MemorySegment stages = lane.stages;
        long end = (long) lane.depth * lane.stageBytes;
        long step = lane.stageBytes;
        long n = lane.sent;
        long offset = (n % lane.depth) * step;
        for (int i = 0; i < ITEMS; i++, n++) {
            pipe.producerAcquire();
            stages.set(JAVA_LONG, offset, n);
            pipe.producerCommit();
            offset += step;
            if (offset == end) {
                offset = 0;
            }
        }
        lane.sent = n;
        lane.awaitConsumed();
    }

    /** Agrona: a one-to-one ring over a mapped file; this thread is the producer. */
    @State(Scope.Thread)
    public static class AgronaLane extends Lane {
        /** Bytes of records (a power of two); the file adds {@link RingBufferDescriptor#TRAILER_LENGTH}. */
        @Param({"64", "128"})
        int ringCapacity;

        Path file;
        MappedByteBuffer mapped;
        OneToOneRingBuffer ring;
        UnsafeBuffer buffer;
        /** Agrona's idle strategy for both sides ({@link IpcPartner#idleStrategy}). */
        @Param({"BUSY_SPIN"})
        String idle;

        IdleStrategy idleStrategy;
        /** The item to {@code write}: one 8-byte buffer. */
        final UnsafeBuffer item = new UnsafeBuffer(new byte[Long.BYTES]);

        @Setup(Level.Trial)
        public void start() throws IOException {
            Path dir = IpcCounts.directory();
            counts = IpcCounts.create(dir);
            file = dir.resolve("agrona-ipc-" + ProcessHandle.current().pid() + ".ring");
            Files.deleteIfExists(file);
            mapped = IoUtil.mapNewFile(file.toFile(), ringCapacity + RingBufferDescriptor.TRAILER_LENGTH);
            buffer = new UnsafeBuffer(mapped);
            ring = new OneToOneRingBuffer(buffer);
            if (ring.maxMsgLength() < Long.BYTES) {
                throw new IllegalArgumentException("a ring of " + ringCapacity + " bytes cannot carry 8-byte items");
            }
            idleStrategy = IpcPartner.idleStrategy(idle);
            startPartner("AGRONA", counts.file.toString(), file.toString(), idle);
        }

        @TearDown(Level.Trial)
        public void stop() throws IOException, InterruptedException {
            try {
                counts.requestStop();
                checkPartner();
            } finally {
                IoUtil.unmap(mapped);
                Files.deleteIfExists(file);
            }
        }

        /**
         * Sends the invocation's items, the next {@link #ITEMS} sequence numbers, each with {@code offer} (one try to
         * put the item in the ring: false while the ring is full), then waits for the partner to consume them.
         */
        void send(LongPredicate offer) {
            long n = sent;
            for (int i = 0; i < ITEMS; i++, n++) {
                int spins = 1;
                for (; !offer.test(n); spins++) {
                    full(spins);
                }
                sent(spins);
            }
            sent = n;
            awaitConsumed();
        }

        /** While the ring is full: idle, and now and then make sure the partner still lives. */
        void full(int spins) {
            if ((spins & 0xFFFFF) == 0 && !partnerAlive()) {
                throw new IllegalStateException("the partner died after consuming " + counts.consumed());
            }
            idleStrategy.idle();
        }

        /** After a retry loop that idled: the idle strategy starts over (a backoff's next wait spins first). */
        void sent(int spins) {
            if (spins > 1) {
                idleStrategy.reset();
            }
        }
    }

    @Benchmark
    @OperationsPerInvocation(ITEMS)
    public void agronaWrite(AgronaLane lane) {
        OneToOneRingBuffer ring = lane.ring;
        UnsafeBuffer item = lane.item;
        lane.send(n -> {
            item.putLong(0, n);
            return ring.write(AGRONA_MSG_TYPE, item, 0, Long.BYTES);
        });
    }

    @Benchmark
    @OperationsPerInvocation(ITEMS)
    public void agronaTryClaim(AgronaLane lane) {
        OneToOneRingBuffer ring = lane.ring;
        UnsafeBuffer buffer = lane.buffer;
        lane.send(n -> {
            int index = ring.tryClaim(AGRONA_MSG_TYPE, Long.BYTES);
            if (index < 0) {
                return false;
            }
            buffer.putLong(index, n);
            ring.commit(index);
            return true;
        });
    }
}
