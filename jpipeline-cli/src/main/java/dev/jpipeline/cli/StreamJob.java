package dev.jpipeline.cli;

import dev.jpipeline.CopyPolicy;
import dev.jpipeline.MemcpyAsync;
import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.StageFailedException;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.ThreadTeam;
import dev.jpipeline.WaitStrategy;
import dev.jpipeline.trace.Tracer;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.zip.CRC32C;

/**
 * The streaming job behind {@code jpipeline stream}: a partitioned block-scope pipeline of {@code producers}
 * + {@code consumers} threads. Each batch is one chunk of the input: the producers fill the stage with
 * asynchronous reads (a file, through positional reads on the copy engine) or copies (the synthetic input), each
 * its share; the consumers compute the chosen operation over their shares. Traced, so that the stall breakdown
 * can be reported.
 */
final class StreamJob {

    private static final ValueLayout.OfLong WORD =
        ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** The input: a file channel, or a memory segment. */
    record Source(String name, FileChannel channel, MemorySegment memory, long size) {
    }

    /** The run's shape; {@code traceEvents}: events the tracer keeps per thread (and per producer's copies). */
    record Options(int stages, int producers, int consumers, long chunk, StreamOp op, WaitStrategy strategy,
                   CopyPolicy copyPolicy, int traceEvents) {
    }

    /** The outcome: the result text, or the failure (with the offset of the batch that failed). */
    record Result(String value, long bytes, long nanos, Tracer tracer, String failure) {
    }

    private StreamJob() {
    }

    /** A deterministic synthetic input of {@code bytes} bytes, off-heap. */
    static Source synthetic(long bytes) {
        MemorySegment data = Arena.ofAuto().allocate(bytes, 64);
        long words = bytes / 8;
        for (long i = 0; i < words; i++) {
            data.setAtIndex(ValueLayout.JAVA_LONG, i, StreamChecksum.mix(i));
        }
        for (long i = words * 8; i < bytes; i++) {
            data.set(ValueLayout.JAVA_BYTE, i, (byte) i);
        }
        return new Source("synthetic", null, data, bytes);
    }

    static Result run(Source source, Options o, AtomicLong progress) {
        int batches = (int) ((source.size() + o.chunk() - 1) / o.chunk());
        Arena arena = Arena.ofShared();
        MemorySegment[] stages = new MemorySegment[o.stages()];
        for (int s = 0; s < o.stages(); s++) {
            stages[s] = arena.allocate(o.chunk(), 64);
        }
        long[] sums = new long[o.consumers()];
        long[][] crcs = new long[batches][o.consumers()];
        MessageDigest sha = o.op() == StreamOp.SHA256 ? sha256() : null;   // provider look-up only when needed
        AtomicReference<String> failure = new AtomicReference<>();
        Tracer tracer = Tracer.create(o.traceEvents());
        PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, o.stages())
            .waitStrategy(o.strategy()).copyPolicy(o.copyPolicy()).tracer(tracer).build();
        long start = System.nanoTime();
        ThreadTeam.ofPlatform(o.producers() + o.consumers()).run(Duration.ofDays(1), group -> {
            int rank = group.threadRank();
            try (Pipeline pipe = Pipeline.make(group, state, o.producers())) {
                for (int b = 0; b < batches && failure.get() == null; b++) {
                    long offset = b * o.chunk();
                    long length = Math.min(o.chunk(), source.size() - offset);
                    MemorySegment stage = stages[b % o.stages()];
                    if (rank < o.producers()) {
                        long[] share = share(length, o.producers(), rank, 1);
                        pipe.producerAcquire();
                        MemorySegment dst = stage.asSlice(share[0], share[1]);
                        if (source.channel() != null) {
                            MemcpyAsync.memcpyAsync(dst, source.channel(), offset + share[0], share[1], pipe);
                        } else {
                            MemcpyAsync.memcpyAsync(dst, source.memory().asSlice(offset + share[0], share[1]),
                                share[1], pipe);
                        }
                        pipe.producerCommit();
                    } else {
                        int c = rank - o.producers();
                        try {
                            pipe.consumerWait();
                        } catch (StageFailedException e) {
                            failure.compareAndSet(null, "I/O error reading " + source.name() + " at offset " + offset
                                + " (batch " + b + ", " + length + " bytes): " + e.getCause());
                            pipe.consumerRelease();
                            break;
                        } catch (IllegalStateException producersStopped) {
                            break;          // the producers have stopped after a failure
                        }
                        long[] share = share(length, o.consumers(), c, 8);
                        MemorySegment part = stage.asSlice(share[0], share[1]);
                        switch (o.op()) {
                            case SUM -> sums[c] += sumWords(part);
                            case CRC32C -> crcs[b][c] = crc32c(part);
                            case SHA256 -> {
                                if (c == 0) {
                                    sha.update(stage.asSlice(0, length).asByteBuffer());
                                }
                            }
                        }
                        pipe.consumerRelease();
                        if (c == 0) {
                            progress.addAndGet(length);
                        }
                    }
                }
            }
        });
        long nanos = System.nanoTime() - start;
        arena.close();
        String value = switch (o.op()) {
            case SUM -> {
                long total = 0;
                for (long s : sums) {
                    total += s;
                }
                yield String.format("0x%016x", total);
            }
            case CRC32C -> String.format("0x%08x", combine(crcs, source.size(), o.chunk(), o.consumers()));
            case SHA256 -> HexFormat.of().formatHex(sha.digest());
        };
        return new Result(value, source.size(), nanos, tracer, failure.get());
    }

    /** {offset, length} of part {@code index} of {@code length} bytes cut in {@code parts}, at {@code align} bytes. */
    static long[] share(long length, int parts, int index, int align) {
        long units = (length + align - 1) / align;
        long per = (units + parts - 1) / parts * align;
        long from = Math.min(length, index * per);
        return new long[] {from, Math.min(length, from + per) - from};
    }

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

    private static long crc32c(MemorySegment part) {
        CRC32C crc = new CRC32C();
        crc.update(part.asByteBuffer());
        return crc.getValue();
    }

    /** Combines the per-batch, per-consumer CRCs in stream order. */
    private static long combine(long[][] crcs, long size, long chunk, int consumers) {
        long crc = 0;
        for (int b = 0; b < crcs.length; b++) {
            long length = Math.min(chunk, size - b * chunk);
            for (int c = 0; c < consumers; c++) {
                long partLength = share(length, consumers, c, 8)[1];
                crc = Crc32c.combine(crc, crcs[b][c], partLength);
            }
        }
        return crc;
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("this JDK has no SHA-256", e);
        }
    }
}
