package dev.jpipeline.cli;

/** What {@code jpipeline stream} computes over the stream. */
enum StreamOp {
    /** The sum, modulo 2^64, of the stream's 8-byte little-endian words (the last one zero-padded). */
    SUM,
    /** The JDK's {@link java.util.zip.CRC32C} of the stream; each consumer checksums its part of a stage. */
    CRC32C,
    /** SHA-256 of the stream; inherently sequential, so consumer 0 digests every stage. */
    SHA256
}
