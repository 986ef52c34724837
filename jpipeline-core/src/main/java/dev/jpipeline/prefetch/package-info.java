/**
 * Prefetching iteration over files and memory, built on the pipeline: read ahead while computing (double or quad
 * buffering) without the acquire / commit / wait / release bookkeeping.
 *
 * <pre>{@code
 * try (Chunks chunks = Prefetch.from(channel).chunk(4 << 20).stages(4).open()) {
 *     for (MemorySegment chunk : chunks) crc.update(chunk.asByteBuffer());
 * }
 * }</pre>
 *
 * <p>No CUDA counterpart: this is the Java front over {@link dev.jpipeline.Pipeline}, which stays the power tool
 * (partitioned pipelines, several producers, user barriers). Underneath, a source with positions (a file, a
 * memory segment, chunks in memory) is read by a thread-scope pipeline whose asynchronous copies run on the copy
 * engine, up to {@code stages - 1} chunks ahead of the one the loop holds; a source that can only be read in order (a
 * {@code ReadableByteChannel}, an {@code InputStream}) is read by a reader thread, the producer of a
 * block-scope pipeline whose consumer is the iteration.
 */
package dev.jpipeline.prefetch;
