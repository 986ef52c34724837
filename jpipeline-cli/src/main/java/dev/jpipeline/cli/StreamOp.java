package dev.jpipeline.cli;

import java.util.Locale;

/** What {@code jpipeline stream} computes over the stream ({@code --op}, named in lower case). */
enum StreamOp {
    /**
     * The plain sum, modulo 2^64, of the stream's 8-byte little-endian words (the last one zero-padded): no
     * position mixing, so it is not a checksum that catches reordered words, and not the JDK's.
     */
    SUM,
    /** The JDK's {@link java.util.zip.CRC32C} of the stream; each consumer checksums its part of a stage. */
    CRC32C,
    /** SHA-256 of the stream; inherently sequential, so consumer 0 digests every stage. */
    SHA256;

    /** Whether every consumer computes a share of each stage (SHA-256 leaves all but one idle). */
    boolean splitsAcrossConsumers() {
        return this != SHA256;
    }

    /** The name on the command line. */
    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }
}
