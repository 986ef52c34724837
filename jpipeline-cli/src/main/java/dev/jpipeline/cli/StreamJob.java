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
        warmUp(o.op());
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

    /**
     * Words summed by one call of {@link #sumBlock}: 64 KiB. A run lasts well under a second, so the JIT's compiled
     * sum must reach the run's first stages: a call per block picks it up at the next block, where one call per
     * stage share (1 MiB and more) stays in the interpreter's or C1's loop for its whole share. Summing a whole share
     * in one call made the busiest consumer's compute time the same at 1, 2, 4 and 8 consumers on 16 cores (about
     * 0.4 s for 4 GiB: the time to compile, not the work), so that --op sum did not scale (docs/performance.md).
     */
    static final int BLOCK_WORDS = 8192;

    /**
     * The sum of {@code words} words of {@code part} from byte {@code offset}: an int-counted loop with four
     * independent sums, so that the loads are not serialised behind one chain of additions.
     */
    private static long sumBlock(MemorySegment part, long offset, int words) {
        long s0 = 0;
        long s1 = 0;
        long s2 = 0;
        long s3 = 0;
        int i = 0;
        for (; i + 4 <= words; i += 4) {
            long at = offset + 8L * i;
            s0 += part.get(WORD, at);
            s1 += part.get(WORD, at + 8);
            s2 += part.get(WORD, at + 16);
            s3 += part.get(WORD, at + 24);
        }
        for (; i < words; i++) {
            s0 += part.get(WORD, offset + 8L * i);
        }
        return s0 + s1 + s2 + s3;
    }

    /**
     * Compiles the sum's loop before a run: a stream run lasts a fraction of a second, and without this its
     * consumers spend much of it in the interpreter's and C1's versions of the loop (on 16 cores, 4 GiB with 4
     * consumers: 0.28 s of summing with tiered compilation, 0.15 s with the loop compiled by C2 from the start).
     * Sums a 64 KiB block of a shared arena (as the stages are) for up to 50 ms; other ops are JDK intrinsics.
     */
    static void warmUp(StreamOp op) {
        if (op != StreamOp.SUM) {
            return;
        }
        try (Arena arena = Arena.ofShared()) {
            MemorySegment block = arena.allocate(8L * BLOCK_WORDS, 64);
            long sink = 0;
            long end = System.nanoTime() + WARM_UP_NANOS;
            for (int i = 0; i < 4_000 && System.nanoTime() - end < 0; i++) {
                sink += sumWords(block.asSlice(0, block.byteSize() - (i & 7)));
            }
            if (sink == Long.MIN_VALUE) {
                Thread.onSpinWait();            // keeps the sums from being optimised away
            }
        }
    }

    /** The longest warm-up of the sum's loop. */
    private static final long WARM_UP_NANOS = 50_000_000;

    /** {offset, length} of part {@code index} of {@code length} bytes cut in {@code parts}, at {@code align} bytes. */
    static long[] share(long length, int parts, int index, int align) {
        long units = (length + align - 1) / align;
        long per = (units + parts - 1) / parts * align;
        long from = Math.min(length, index * per);
        return new long[] {from, Math.min(length, from + per) - from};
    }

    /**
     * The sum, modulo 2^64, of {@code part}'s little-endian 8-byte words, the last one zero-padded; in blocks of
     * {@link #BLOCK_WORDS}, each summed by a call of its own.
     */
    static long sumWords(MemorySegment part) {
        long words = part.byteSize() / 8;
        long sum = 0;
        for (long from = 0; from < words; from += BLOCK_WORDS) {
            sum += sumBlock(part, from * 8, (int) Math.min(BLOCK_WORDS, words - from));
        }
        long tail = 0;
        for (long i = words * 8; i < part.byteSize(); i++) {
            tail |= (part.get(ValueLayout.JAVA_BYTE, i) & 0xFFL) << (8 * (i - words * 8));
        }
        return sum + tail;
    }
}
