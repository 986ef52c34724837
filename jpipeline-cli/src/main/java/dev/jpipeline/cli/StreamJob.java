package dev.jpipeline.cli;

import dev.jpipeline.CopyPolicy;
import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.StageFailedException;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.ThreadTeam;
import dev.jpipeline.WaitStrategy;
import dev.jpipeline.copy.CopyEngine;
import dev.jpipeline.trace.Tracer;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The streaming job behind {@code jpipeline stream}: a partitioned block-scope pipeline of {@code producers}
 * + {@code consumers} threads. Each batch is one chunk of the input: the producers fill the stage (see
 * {@link StreamSource#fill}); the consumers fold their shares into a {@link StreamDigest}. The batch's length
 * travels with the stage, so a source of unknown size ends with its first short stage. Traced, so that the stall
 * breakdown can be reported. Memory does not grow with the number of batches.
 */
final class StreamJob {

    private static final ValueLayout.OfLong WORD =
        ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /**
     * The run's shape; {@code traceEvents}: events the tracer keeps per thread (and per producer's copies);
     * {@code copyEngine}: where copies run, or null for the shared engine.
     */
    record Options(int stages, int producers, int consumers, long chunk, StreamOp op, WaitStrategy strategy,
                   CopyPolicy copyPolicy, int traceEvents, CopyEngine copyEngine) {
    }

    /**
     * The outcome: the result text, the bytes and the (non-empty) stages streamed, or the failure (with the offset
     * of the batch that failed).
     */
    record Result(String value, long bytes, long batches, long nanos, Tracer tracer, String failure) {
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

    /** Streams {@code source}; {@code progress} counts the bytes consumed so far. */
    static Result run(StreamSource source, Options o, AtomicLong progress) {
        // a known size: every producer stops after the last batch; unknown: after the first short one
        long batches = source.size() < 0 ? Long.MAX_VALUE : (source.size() + o.chunk() - 1) / o.chunk();
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
        long[] lengths = new long[o.stages()];
        StreamDigest digest = new StreamDigest(o.op(), o.stages(), o.consumers());
        AtomicReference<String> failure = new AtomicReference<>();
        AtomicLong bytes = new AtomicLong();
        AtomicLong done = new AtomicLong();
        Tracer tracer = Tracer.create(o.traceEvents());
        PipelineSharedState.Builder shared = PipelineSharedState.builder(ThreadScope.BLOCK, o.stages())
            .waitStrategy(o.strategy()).copyPolicy(o.copyPolicy()).tracer(tracer);
        PipelineSharedState state = (o.copyEngine() == null ? shared : shared.copyEngine(o.copyEngine())).build();
        long start = System.nanoTime();
        ThreadTeam.ofPlatform(o.producers() + o.consumers()).run(Duration.ofDays(1), group -> {
            int rank = group.threadRank();
            try (Pipeline pipe = Pipeline.make(group, state, o.producers())) {
                long length = o.chunk();
                for (long b = 0; b < batches && length == o.chunk(); b++) {
                    int slot = (int) (b % o.stages());
                    long offset = b * o.chunk();
                    if (rank < o.producers()) {
                        pipe.producerAcquire();
                        try {
                            length = source.fill(stages[slot], offset, rank, o.producers(), pipe);
                        } catch (IOException e) {
                            failure.compareAndSet(null, "I/O error reading " + source.name() + " at offset "
                                + offset + " (batch " + b + "): " + e);
                            length = 0;                     // an empty stage: the consumers' last
                        }
                        if (rank == 0) {
                            lengths[slot] = length;         // published by the commit
                        }
                        pipe.producerCommit();
                    } else {
                        int c = rank - o.producers();
                        try {
                            pipe.consumerWait();
                        } catch (StageFailedException e) {
                            failure.compareAndSet(null, "I/O error reading " + source.name() + " at offset "
                                + offset + " (batch " + b + "): " + e.getCause());
                            pipe.consumerRelease();
                            break;
                        } catch (IllegalStateException producersStopped) {
                            break;          // the producers have stopped after a failure
                        }
                        length = lengths[slot];
                        digest.add(c, slot, stages[slot], length);
                        pipe.consumerRelease();
                        if (c == 0 && length > 0) {
                            progress.addAndGet(length);
                            bytes.addAndGet(length);
                            done.incrementAndGet();
                        }
                    }
                    if (failure.get() != null) {
                        break;
                    }
                }
            }
        });
        long nanos = System.nanoTime() - start;
        arena.close();
        return new Result(digest.value(), bytes.get(), done.get(), nanos, tracer, failure.get());
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
