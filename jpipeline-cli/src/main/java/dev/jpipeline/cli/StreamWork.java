package dev.jpipeline.cli;

import dev.jpipeline.Pipeline;
import dev.jpipeline.StageFailedException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongConsumer;

/**
 * What each thread of a stream run does, batch by batch, whether the producers and consumers share one JVM
 * ({@link StreamJob}) or run in two ({@link StreamProcesses}). Each batch is one chunk of the input: the producers
 * fill the stage (see {@link StreamSource#fill}) and producer 0 records how many bytes it holds in {@code lengths}
 * (one long per stage, published by the commit), so that a source of unknown size ends with its first short
 * stage; the consumers fold their shares into a {@link StreamDigest}. The first failure is kept as a one-line
 * message; every thread stops at its next batch once there is one in its JVM.
 */
final class StreamWork {

    private final String name;
    private final long chunk;
    private final int producers;
    private final long batches;
    private final MemorySegment[] stages;
    private final MemorySegment lengths;
    private final StreamDigest digest;
    private final AtomicLong progress;
    private final AtomicReference<String> failure = new AtomicReference<>();
    private final AtomicLong bytes = new AtomicLong();
    private final AtomicLong done = new AtomicLong();

    /**
     * The work on stream {@code name} of {@code size} bytes (-1: unknown until its end), cut into chunks of
     * {@code chunk} bytes for {@code producers} producers; {@code stages}: the stage buffers, {@code lengths}: a long
     * per stage; {@code digest}: where the consumers fold the data (null where no consumer runs); {@code progress}
     * counts the bytes consumed.
     */
    StreamWork(String name, long size, long chunk, int producers, MemorySegment[] stages, MemorySegment lengths,
               StreamDigest digest, AtomicLong progress) {
        this.name = name;
        this.chunk = chunk;
        this.producers = producers;
        // a known size: every producer stops after the last batch; unknown: after the first short one
        this.batches = size < 0 ? Long.MAX_VALUE : (size + chunk - 1) / chunk;
        this.stages = stages;
        this.lengths = lengths;
        this.digest = digest;
        this.progress = progress;
    }

    /**
     * Producer {@code producer}'s part: acquires each batch's stage, fills its share from {@code source}, commits.
     * {@code acquired} is told each batch once its stage is held (the crash hook of {@link StreamProcesses}).
     */
    void produce(Pipeline pipe, int producer, StreamSource source, LongConsumer acquired) {
        long length = chunk;
        for (long b = 0; b < batches && length == chunk && failure.get() == null; b++) {
            int slot = (int) (b % stages.length);
            long offset = b * chunk;
            pipe.producerAcquire();
            acquired.accept(b);
            try {
                length = source.fill(stages[slot], offset, producer, producers, pipe);
            } catch (IOException e) {
                failure.compareAndSet(null, "I/O error reading " + name + " at offset " + offset + " (batch " + b
                    + "): " + e);
                length = 0;                     // an empty stage: the consumers' last
            }
            if (producer == 0) {
                lengths.setAtIndex(ValueLayout.JAVA_LONG, slot, length);       // published by the commit
            }
            pipe.producerCommit();
        }
    }

    /** Consumer {@code consumer}'s part: waits for each batch's stage, folds its share into the digest, releases. */
    void consume(Pipeline pipe, int consumer) {
        long length = chunk;
        for (long b = 0; b < batches && length == chunk && failure.get() == null; b++) {
            int slot = (int) (b % stages.length);
            try {
                pipe.consumerWait();
            } catch (StageFailedException e) {
                Throwable cause = e.getCause();
                failure.compareAndSet(null, cause instanceof IOException
                    ? "I/O error reading " + name + " at offset " + b * chunk + " (batch " + b + "): " + cause
                    : "reading " + name + " failed at offset " + b * chunk + " (batch " + b + "): "
                        + cause.getMessage());
                pipe.consumerRelease();
                return;
            } catch (IllegalStateException producersGone) {
                // after a failure in this JVM, its message came first; across processes, this one names the dead
                failure.compareAndSet(null, "the producers stopped before batch " + b + ": "
                    + producersGone.getMessage());
                return;
            }
            length = lengths.getAtIndex(ValueLayout.JAVA_LONG, slot);
            digest.add(consumer, slot, stages[slot], length);
            pipe.consumerRelease();
            if (consumer == 0 && length > 0) {
                progress.addAndGet(length);
                bytes.addAndGet(length);
                done.incrementAndGet();
            }
        }
    }

    /** The first failure, or null. */
    String failure() {
        return failure.get();
    }

    /** Bytes consumed (counted by consumer 0). */
    long bytes() {
        return bytes.get();
    }

    /** Non-empty stages consumed (counted by consumer 0). */
    long batches() {
        return done.get();
    }
}
