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
 *
 * <p>Inside (package-private): each {@code open()} or {@code reduce} opens one {@code Source}, the sealed type of
 * every kind of source (a file range or memory, both positional; an {@code Iterable}'s segments; a stream), whose
 * chunks are read through one exhaustive switch ({@code Source.fill}). Its {@code StageLedger} keeps the stage
 * buffers and, by stage, the chunk's record (length, end, failure), written by the thread that fills it before its
 * commit and read after the wait; the ledger also holds the stop, the drain and the count of users, the last of
 * whom frees the buffers and closes the source. Three feeds drive the ledger: {@code AheadFeed} (the iterating
 * thread's own thread-scope pipeline, for sources that copy), {@code ReaderFeed} (a reader thread, for a stream)
 * and {@code ParallelRun} (the parallel form's team).
 */
package dev.jpipeline.prefetch;
