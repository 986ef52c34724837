package dev.jpipeline.cli;

import dev.jpipeline.prefetch.Crc32cPart;
import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.zip.CRC32C;

/**
 * The result of a {@link StreamOp} over a stream, folded in as the consumers go, in memory that does not grow with
 * the stream: each consumer {@link #add}s its share of every stage before releasing it.
 *
 * <p>CRC-32C: each consumer checksums its share and parks the CRC in the stage's slot; the last consumer of a
 * stage to finish combines the slot into the running CRC, before its release. The consumers take the stages in
 * order, so the last one of stage b+1 finishes after the last one of stage b has combined, and the decrements of
 * the per-slot countdown order those combines (each happens-before the next).
 */
final class StreamDigest {

    private final StreamOp op;
    private final int consumers;
    private final long[] sums;
    private final MessageDigest sha;
    private final long[][] partCrcs;
    private final long[][] partLengths;
    private final AtomicIntegerArray pending;
    private long crc;

    /** A digest for {@code consumers} consumers of a pipeline of {@code stages} stages. */
    StreamDigest(StreamOp op, int stages, int consumers) {
        this.op = op;
        this.consumers = consumers;
        this.sums = new long[consumers];
        this.sha = op == StreamOp.SHA256 ? sha256() : null;
        this.partCrcs = new long[stages][consumers];
        this.partLengths = new long[stages][consumers];
        this.pending = new AtomicIntegerArray(stages);
        for (int s = 0; s < stages; s++) {
            pending.set(s, consumers);
        }
    }

    /**
     * {@code op} over all of {@code source}, a source of known size, computed here in one pass without a pipeline
     * (as one consumer of one stage would, chunk by chunk): what a pipelined run over it must give.
     *
     * @throws IOException              when the file cannot be read to its size
     * @throws IllegalArgumentException for a stream of unknown size, which cannot be read again
     */
    static String direct(StreamSource source, StreamOp op, long chunk) throws IOException {
        StreamDigest digest = new StreamDigest(op, 1, 1);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buffer = arena.allocate(chunk, 64);
            for (long offset = 0; offset < source.size(); offset += chunk) {
                long length = Math.min(chunk, source.size() - offset);
                MemorySegment data = switch (source) {
                    case StreamSource.Memory m -> m.data().asSlice(offset, length);
                    case StreamSource.File f -> {
                        ByteBuffer into = buffer.asSlice(0, length).asByteBuffer();
                        while (into.hasRemaining()) {
                            if (f.channel().read(into, offset + into.position()) < 0) {
                                throw new EOFException(f.name() + " ended at " + (offset + into.position())
                                    + " bytes, before its size of " + f.size());
                            }
                        }
                        yield buffer;
                    }
                    case StreamSource.Sequential s -> throw new IllegalArgumentException("a direct pass needs a "
                        + "source of known size that can be read again, not " + s.name());
                };
                digest.add(0, 0, data, length);
            }
        }
        return digest.value();
    }

    /**
     * Folds consumer {@code consumer}'s share of {@code stage}, whose first {@code length} bytes hold the data, in
     * stage slot {@code slot}. Every consumer calls it once per stage, in stream order, before releasing it.
     */
    void add(int consumer, int slot, MemorySegment stage, long length) {
        long[] share = StreamJob.share(length, consumers, consumer, 8);
        MemorySegment part = stage.asSlice(share[0], share[1]);
        switch (op) {
            case SUM -> sums[consumer] += StreamJob.sumWords(part);
            case SHA256 -> {
                if (consumer == 0) {
                    sha.update(stage.asSlice(0, length).asByteBuffer());
                }
            }
            case CRC32C -> {
                CRC32C partCrc = new CRC32C();
                partCrc.update(part.asByteBuffer());
                partCrcs[slot][consumer] = partCrc.getValue();
                partLengths[slot][consumer] = share[1];
                if (pending.decrementAndGet(slot) == 0) {
                    for (int c = 0; c < consumers; c++) {
                        crc = Crc32cPart.combine(crc, partCrcs[slot][c], partLengths[slot][c]);
                    }
                    pending.set(slot, consumers);
                }
            }
        }
    }

    /** The result, once every consumer is done: hexadecimal, as {@code 0x…} for sum and crc32c. */
    String value() {
        return switch (op) {
            case SUM -> {
                long total = 0;
                for (long s : sums) {
                    total += s;
                }
                yield String.format("0x%016x", total);
            }
            case CRC32C -> String.format("0x%08x", crc);
            case SHA256 -> HexFormat.of().formatHex(sha.digest());
        };
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("this JDK has no SHA-256", e);
        }
    }
}
