package dev.jpipeline.cli;

import dev.jpipeline.prefetch.ChunkFailedException;
import dev.jpipeline.prefetch.Chunks;
import dev.jpipeline.prefetch.Crc32cPart;
import dev.jpipeline.prefetch.Prefetch;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
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
 *
 * <p>{@link #direct} computes the same over a source of known size without the run, reading it ahead through the
 * {@code Prefetch} front: the check of a {@code --processes} run.
 */
final class StreamDigest {

    /** The most consumer threads of a direct pass's parallel form (fewer on a machine of fewer processors). */
    private static final int DIRECT_CONSUMERS = 4;

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
     * {@code op} over all of {@code source}, a source of known size, computed here without the run's pipeline: what
     * a pipelined run over it must give. The bytes are read ahead with the library's own front,
     * {@link Prefetch}: a combinable op (sum, crc32c) with its parallel form, whose consumers' results combine in
     * source order (a sum, {@link Crc32cPart#then}); SHA-256, which is not combinable, by iterating the chunks in
     * order. The pass reads in chunks of {@link Prefetch#DEFAULT_CHUNK} (a multiple of 8, as the sum's words
     * need), whatever the run's chunk was. A file is read through its channel from its position, 0: the run's reads
     * are positional and leave it there.
     *
     * @throws IOException              when a file cannot be read to its size, or its size changed since the run
     *                                  took it; the message is one line and names the file
     * @throws IllegalArgumentException for a stream of unknown size, which cannot be read again
     */
    static String direct(StreamSource source, StreamOp op) throws IOException {
        String failed = "a direct pass over " + source.name() + " failed";
        Prefetch prefetch = switch (source) {
            case StreamSource.Memory m -> Prefetch.from(m.data());
            case StreamSource.File f -> {
                long now;
                try {
                    now = f.channel().size();
                } catch (IOException e) {
                    throw new IOException(failed + ": " + e, e);
                }
                if (now != f.size()) {
                    throw new IOException(f.name() + " changed size during the run, from " + f.size() + " to " + now
                        + " bytes: a direct pass cannot read what the run read");
                }
                yield Prefetch.from(f.channel());
            }
            case StreamSource.Sequential s -> throw new IllegalArgumentException("a direct pass needs a source of "
                + "known size that can be read again, not " + s.name());
        };
        int consumers = Math.clamp(Runtime.getRuntime().availableProcessors(), 1, DIRECT_CONSUMERS);
        prefetch.chunk(Prefetch.DEFAULT_CHUNK).stages(2 * consumers);
        try {
            return switch (op) {
                case SUM -> text(op, prefetch.parallel(1, consumers).reduce(0L, StreamJob::sumWords, Long::sum));
                case CRC32C -> text(op, prefetch.parallel(1, consumers)
                    .reduce(Crc32cPart.EMPTY, Crc32cPart::of, Crc32cPart::then).value());
                case SHA256 -> {
                    MessageDigest sha = sha256();
                    try (Chunks chunks = prefetch.open()) {
                        for (MemorySegment chunk : chunks) {
                            sha.update(chunk.asByteBuffer());
                        }
                    }
                    yield HexFormat.of().formatHex(sha.digest());
                }
            };
        } catch (ChunkFailedException e) {
            throw new IOException(failed + " at byte " + e.position() + ": " + e.getCause(), e);
        } catch (UncheckedIOException e) {          // the channel's position or size could not be read
            throw new IOException(failed + ": " + e.getCause(), e);
        }
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
                yield text(op, total);
            }
            case CRC32C -> text(op, crc);
            case SHA256 -> HexFormat.of().formatHex(sha.digest());
        };
    }

    /** A sum or a CRC-32C as the report shows it: {@code 0x} and 16 or 8 hexadecimal digits. */
    private static String text(StreamOp op, long value) {
        return String.format(op == StreamOp.SUM ? "0x%016x" : "0x%08x", value);
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("this JDK has no SHA-256", e);
        }
    }
}
