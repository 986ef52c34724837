package dev.jpipeline.cli;

import dev.jpipeline.CopyPolicy;
import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.ThreadTeam;
import dev.jpipeline.WaitStrategy;
import dev.jpipeline.copy.CopyEngine;
import dev.jpipeline.trace.TraceEvent;
import dev.jpipeline.trace.Tracer;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The streaming job behind {@code jpipeline stream}: a partitioned block-scope pipeline of {@code producers}
 * + {@code consumers} threads in this JVM, each doing its {@link StreamWork}. Traced, so that the stall breakdown
 * can be reported. Memory does not grow with the number of batches.
 */
final class StreamJob {

    private static final ValueLayout.OfLong WORD =
        ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** The run's shape; {@code copyEngine}: where copies run, or null for the shared engine. */
    record Options(int stages, int producers, int consumers, long chunk, StreamOp op, WaitStrategy strategy,
                   CopyPolicy copyPolicy, CopyEngine copyEngine) {
    }

    /**
     * The outcome: the result text, the bytes and the (non-empty) stages streamed, the wall time, the traced events
     * (ordered by start, in nanoseconds from about the run's start), how many older ones the tracer dropped and how
     * many it kept per lane; or the failure (with the offset of the batch that failed).
     */
    record Result(String value, long bytes, long batches, long nanos, List<TraceEvent> events, long dropped,
                  int eventsPerLane, String failure) {
    }

    private StreamJob() {
    }

    /** A deterministic synthetic input of {@code bytes} bytes, off-heap. */
    static StreamSource.Memory synthetic(long bytes) {
        MemorySegment data = allocate(Arena.ofAuto(), bytes, "--synthetic (the data is generated in memory)");
        long words = bytes / 8;
        for (long i = 0; i < words; i++) {
            data.setAtIndex(ValueLayout.JAVA_LONG, i, StreamChecksum.mix(i));
        }
        for (long i = words * 8; i < bytes; i++) {
            data.set(ValueLayout.JAVA_BYTE, i, (byte) i);
        }
        return new StreamSource.Memory("synthetic", data);
    }

    /**
     * {@code bytes} of memory from {@code arena}, 64-byte aligned.
     *
     * @throws TooLargeException when the JVM may not allocate that much ({@code what} names the option)
     */
    static MemorySegment allocate(Arena arena, long bytes, String what) {
        try {
            return arena.allocate(bytes, 64);
        } catch (OutOfMemoryError e) {
            throw new TooLargeException(what + " needs " + ByteSize.format(bytes) + " of memory, more than this JVM "
                + "may allocate (" + e.getMessage() + "); use a smaller size, or a file");
        }
    }

    /** A size the run cannot allocate: a bad argument for this machine, reported in one line. */
    static final class TooLargeException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        TooLargeException(String message) {
            super(message);
        }
    }

    /** Streams {@code source}, traced by {@code tracer}; {@code progress} counts the bytes consumed so far. */
    static Result run(StreamSource source, Options o, Tracer tracer, AtomicLong progress) {
        Arena arena = Arena.ofShared();
        MemorySegment[] stages = new MemorySegment[o.stages()];
        try {
            for (int s = 0; s < o.stages(); s++) {
                stages[s] = allocate(arena, o.chunk(), "--chunk (each of the " + o.stages() + " stages)");
            }
        } catch (TooLargeException e) {
            arena.close();                      // the stages allocated so far
            throw e;
        }
        StreamDigest digest = new StreamDigest(o.op(), o.stages(), o.consumers());
        StreamWork work = new StreamWork(source.name(), source.size(), o.chunk(), o.producers(), stages,
            arena.allocate(ValueLayout.JAVA_LONG, o.stages()), digest, progress);
        PipelineSharedState.Builder shared = PipelineSharedState.builder(ThreadScope.BLOCK, o.stages())
            .waitStrategy(o.strategy()).copyPolicy(o.copyPolicy()).tracer(tracer);
        PipelineSharedState state = (o.copyEngine() == null ? shared : shared.copyEngine(o.copyEngine())).build();
        long start = System.nanoTime();
        ThreadTeam.ofPlatform(o.producers() + o.consumers()).run(Duration.ofDays(1), group -> {
            int rank = group.threadRank();
            try (Pipeline pipe = Pipeline.make(group, state, o.producers())) {
                if (rank < o.producers()) {
                    work.produce(pipe, rank, source, batch -> { });
                } else {
                    work.consume(pipe, rank - o.producers());
                }
            }
        });
        long nanos = System.nanoTime() - start;
        arena.close();
        return new Result(digest.value(), work.bytes(), work.batches(), nanos, tracer.events(), tracer.dropped(),
            tracer.eventsPerLane(), work.failure());
    }

    /** {offset, length} of part {@code index} of {@code length} bytes cut in {@code parts}, at {@code align} bytes. */
    static long[] share(long length, int parts, int index, int align) {
        long units = (length + align - 1) / align;
        long per = (units + parts - 1) / parts * align;
        long from = Math.min(length, index * per);
        return new long[] {from, Math.min(length, from + per) - from};
    }

    /** The sum, modulo 2^64, of {@code part}'s little-endian 8-byte words, the last one zero-padded. */
    static long sumWords(MemorySegment part) {
        long words = part.byteSize() / 8;
        long sum = 0;
        for (long i = 0; i < words; i++) {
            sum += part.get(WORD, i * 8);
        }
        long tail = 0;
        for (long i = words * 8; i < part.byteSize(); i++) {
            tail |= (part.get(ValueLayout.JAVA_BYTE, i) & 0xFFL) << (8 * (i - words * 8));
        }
        return sum + tail;
    }
}
