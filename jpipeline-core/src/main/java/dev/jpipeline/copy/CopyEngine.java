package dev.jpipeline.copy;

import dev.jpipeline.AsyncContractFulfillment;
import dev.jpipeline.internal.ApiAccess;
import dev.jpipeline.internal.copy.CopyLanding;
import dev.jpipeline.internal.copy.CopyService;
import dev.jpipeline.internal.copy.CopyWorkers;
import dev.jpipeline.internal.checked.Interleaver;
import dev.jpipeline.internal.PhaseBarrier;
import dev.jpipeline.internal.checked.SeededInterleaver;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.util.Objects;

/**
 * Worker threads that perform asynchronous copies: jpipeline's stand-in for the GPU's copy hardware behind
 * {@code cuda::memcpy_async} (which, on the host, libcu++ simply performs synchronously). No CUDA counterpart as a
 * class: a GPU has its copy engines built in.
 *
 * <p>{@code memcpyAsync} performs a copy of at most {@link #inlineThreshold()} bytes inline (a hand-off costs
 * about as much as copying that much); larger copies are split into chunks of at least {@link #minChunk()} bytes
 * over at most {@link #workers()} workers, except where the pipeline's {@link dev.jpipeline.CopyPolicy} has the
 * issuing thread copy itself. File reads always run on a worker. An idle worker spins briefly for new
 * work, then parks. In steady state nothing is allocated. A failing copy affects its own stage only: workers clear
 * their interrupt status, never close a user's channel, and a source that keeps returning no bytes fails its copy.
 *
 * <p>Memory consistency effects: actions of the submitting thread before {@code copy} / {@code read}
 * happen-before the copy's reads and writes, which happen-before the completion.
 */
public final class CopyEngine implements AutoCloseable {

    /** Default: copies of up to 64 KiB run inline (a hand-off to a worker costs about as much as copying them). */
    public static final long DEFAULT_INLINE_THRESHOLD = 64 * 1024;
    /** Default: chunks of at least 256 KiB, so that splitting a copy never costs more than it saves. */
    public static final long DEFAULT_MIN_CHUNK = 256 * 1024;

    private static final class Shared {
        static final CopyEngine ENGINE = fromSystemProperties();
    }

    private final CopyWorkers engine;
    /** Checked execution for the thread-scope pipelines that use this engine ({@link #checked}), else null. */
    private final SeededInterleaver checked;

    private CopyEngine(int workers, long inlineThreshold, long minChunk, String name, boolean checked, long seed) {
        this.engine = new CopyWorkers(workers, inlineThreshold, minChunk, name);
        this.checked = checked ? new SeededInterleaver(seed, engine) : null;
    }

    /**
     * The engine that pipelines use unless told otherwise. Its settings come from the system properties
     * {@code jpipeline.copy.workers} (default: a quarter of the available processors, 1 to 8),
     * {@code jpipeline.copy.inlineThreshold} and {@code jpipeline.copy.minChunk} (bytes). Its workers are
     * daemon threads; it is never closed.
     *
     * @return the process-wide engine
     */
    public static CopyEngine shared() {
        return Shared.ENGINE;
    }

    private static CopyEngine fromSystemProperties() {
        int defaultWorkers = Math.clamp(Runtime.getRuntime().availableProcessors() / 4, 1, 8);
        return builder()
            .workers(Integer.getInteger("jpipeline.copy.workers", defaultWorkers))
            .inlineThreshold(Long.getLong("jpipeline.copy.inlineThreshold", DEFAULT_INLINE_THRESHOLD))
            .minChunk(Long.getLong("jpipeline.copy.minChunk", DEFAULT_MIN_CHUNK))
            .name("jpipeline-copy")
            .build();
    }

    /**
     * A checked copy engine, for tests (no CUDA counterpart): thread-scope pipelines made with it
     * ({@link dev.jpipeline.Pipeline#make(CopyEngine)}) hold their copies back and poison, so that a missing wait
     * fails every time instead of passing by luck.
     * <ul>
     *   <li>Such a pipeline's {@code memcpyAsync}, whatever its size, only ties the copy to its batch and fills the
     *       destination with the poison pattern: every 4-byte word {@code 0xFFA5A5A5} in native byte order (a NaN
     *       as a float), trailing bytes {@code 0xA5}.</li>
     *   <li>The copy lands, on the calling thread, when a wait needs it: when a {@code consumerWait} (or
     *       {@code consumerWaitFor}, {@code consumerWaitUntil}) for its batch, or a
     *       {@link dev.jpipeline.Pipeline#consumerWaitPrior} that covers its batch, begins; or when
     *       {@link dev.jpipeline.Pipeline#producerCommit(dev.jpipeline.Pipeline, dev.jpipeline.Barrier)} ties it
     *       to a barrier. So a read before such a wait reads poison, and so do the batches that a
     *       {@code consumerWaitPrior} with too large a prior leaves uncovered. A wait that only polls (a zero or
     *       negative timeout) may find a committed batch's copies still in flight, as with a slow engine. A copy
     *       that fails when it lands (its source's arena closed meanwhile) fails its batch
     *       ({@link dev.jpipeline.StageFailedException}).</li>
     *   <li>Every pipeline operation may spin briefly or yield, as {@code seed} and the thread's name decide. With
     *       real threads this shakes the interleaving but does not choose it, so a run does not replay; where each
     *       thread's copies land relative to its own operations is the same in every run.</li>
     * </ul>
     * The engine's own {@link #copy} and {@link #read}, and {@code memcpyAsync} into a {@link dev.jpipeline.Barrier}
     * (which uses the {@link #shared()} engine), are not held back. A shared state built with this engine is checked
     * too ({@link dev.jpipeline.PipelineSharedState.Builder#checked(long)}). The engine has one worker; close it
     * when done.
     *
     * @param seed where the decisions come from
     * @return a new checked engine, open
     */
    public static CopyEngine checked(long seed) {
        return new CopyEngine(1, DEFAULT_INLINE_THRESHOLD, DEFAULT_MIN_CHUNK, "jpipeline-checked-copy", true, seed);
    }

    /**
     * A builder for an engine of one's own (close it when done).
     *
     * @return a builder with the default settings
     */
    public static Builder builder() {
        return new Builder();
    }

    /** Settings of a {@link CopyEngine}. */
    public static final class Builder {
        private int workers = 1;
        private long inlineThreshold = DEFAULT_INLINE_THRESHOLD;
        private long minChunk = DEFAULT_MIN_CHUNK;
        private String name = "jpipeline-copy-engine";

        private Builder() {
        }

        /**
         * Worker threads, 1 to 256 (default 1).
         *
         * @param workers the number of worker threads
         * @return this builder
         * @throws IllegalArgumentException when {@code workers} is outside 1..256
         */
        public Builder workers(int workers) {
            if (workers < 1 || workers > 256) {
                throw new IllegalArgumentException("copy engine workers must be in 1..256, got " + workers);
            }
            this.workers = workers;
            return this;
        }

        /**
         * Copies of at most this many bytes run inline in the calling thread (0: none; default 64 KiB).
         *
         * @param bytes the threshold in bytes, 0 or more
         * @return this builder
         * @throws IllegalArgumentException when {@code bytes} is negative
         */
        public Builder inlineThreshold(long bytes) {
            if (bytes < 0) {
                throw new IllegalArgumentException("copy engine inline threshold must not be negative, got " + bytes);
            }
            this.inlineThreshold = bytes;
            return this;
        }

        /**
         * The smallest chunk a copy is split into, at least 4 KiB (default 256 KiB).
         *
         * @param bytes the chunk size in bytes, 4096 or more
         * @return this builder
         * @throws IllegalArgumentException when {@code bytes} is below 4096
         */
        public Builder minChunk(long bytes) {
            if (bytes < 4096) {
                throw new IllegalArgumentException("copy engine chunks must be at least 4096 bytes, got " + bytes);
            }
            this.minChunk = bytes;
            return this;
        }

        /**
         * The prefix of the worker threads' names.
         *
         * @param name the prefix, not null
         * @return this builder
         */
        public Builder name(String name) {
            this.name = Objects.requireNonNull(name, "name");
            return this;
        }

        /**
         * Starts the engine's workers.
         *
         * @return a new engine, open
         */
        public CopyEngine build() {
            return new CopyEngine(workers, inlineThreshold, minChunk, name, false, 0);
        }
    }

    /**
     * The number of worker threads.
     *
     * @return the worker count
     */
    public int workers() {
        return engine.workers();
    }

    /**
     * Copies of at most this many bytes are performed inline by the caller.
     *
     * @return the threshold in bytes
     */
    public long inlineThreshold() {
        return engine.inlineThreshold();
    }

    /**
     * The smallest chunk a copy is split into.
     *
     * @return the chunk size in bytes
     */
    public long minChunk() {
        return engine.minChunk();
    }

    /**
     * Whether {@link #close()} has been called.
     *
     * @return {@code true} once closed
     */
    public boolean isClosed() {
        return engine.isClosed();
    }

    /**
     * Copies {@code src} into {@code dst} (both of the same size) asynchronously, on a worker whatever the size,
     * then calls {@code completion}. The caller must not touch either range before the completion.
     *
     * <p>Memory consistency effects: actions of the caller before {@code copy} <i>happen-before</i> the copy's
     * reads of {@code src}, and the copy's writes to {@code dst} <i>happen-before</i> the call of
     * {@code completion}.
     *
     * @param dst        where the bytes go
     * @param src        where they come from, as many bytes as {@code dst}
     * @param completion called once, on the worker, when the copy is done or has failed
     * @throws IllegalArgumentException when the sizes differ
     * @throws IllegalStateException    when the engine is closed
     */
    public void copy(MemorySegment dst, MemorySegment src, CopyCompletion completion) {
        Objects.requireNonNull(dst, "dst");
        Objects.requireNonNull(src, "src");
        Objects.requireNonNull(completion, "completion");
        if (dst.byteSize() != src.byteSize()) {
            throw new IllegalArgumentException("copy engine: destination has " + dst.byteSize()
                + " bytes but source has " + src.byteSize());
        }
        engine.submit(dst, src, null, 0, completion::copyDone);
    }

    /**
     * Fills {@code dst} from {@code channel}, starting at file position {@code position}, with positional reads
     * (the channel's own position is not used or changed), then calls {@code completion}; a read error, the file
     * ending first ({@link java.io.EOFException}), or a channel that keeps returning no bytes is passed to the
     * completion.
     *
     * <p>Memory consistency effects: the read's writes to {@code dst} <i>happen-before</i> the call of
     * {@code completion}.
     *
     * @param dst        where the bytes go; filled completely unless the read fails
     * @param channel    the file to read from
     * @param position   the file position of the first byte to read, 0 or more
     * @param completion called once, on the worker, when {@code dst} is full or the read has failed
     * @throws IllegalArgumentException when {@code position} is negative
     * @throws IllegalStateException    when the engine is closed
     */
    public void read(MemorySegment dst, FileChannel channel, long position, CopyCompletion completion) {
        Objects.requireNonNull(dst, "dst");
        Objects.requireNonNull(channel, "channel");
        Objects.requireNonNull(completion, "completion");
        if (position < 0) {
            throw new IllegalArgumentException("file position must not be negative, got " + position);
        }
        engine.submit(dst, null, channel, position, completion::copyDone);
    }

    /** What the pipeline engine uses of this engine (through ApiAccess.copies): its workers and checked execution. */
    private final CopyService service = new CopyService() {
        @Override
        public AsyncContractFulfillment copyInto(MemorySegment dst, MemorySegment src, PhaseBarrier target,
                                                 CopyLanding landing, boolean onIssuer) {
            return engine.copyInto(dst, src, target, landing, onIssuer);
        }

        @Override
        public AsyncContractFulfillment readInto(MemorySegment dst, FileChannel channel, long position,
                                                 PhaseBarrier target, CopyLanding landing, boolean onIssuer) {
            return engine.readInto(dst, channel, position, target, landing, onIssuer);
        }

        @Override
        public Interleaver interleaver() {
            return checked;
        }
    };

    static {    // the engine's door: the pipeline engine reaches the workers without a public method
        ApiAccess.installCopyEngineDoor(e -> e.service);
    }

    /**
     * Stops the workers once every submitted copy has been performed and its completion called, and waits for
     * them, except when called from a completion (a worker thread): then it returns at once and the workers stop
     * on their own. Submitting afterwards throws {@link IllegalStateException}, whatever the size. The
     * {@link #shared()} engine cannot be closed. Closing again waits for the workers again. Uninterruptible: an
     * interrupt is re-asserted on return.
     *
     * <p>Memory consistency effects: when called from a thread other than a worker, every copy's writes and every
     * completion's actions <i>happen-before</i> {@code close} returns.
     *
     * @throws IllegalStateException when called on the {@link #shared()} engine
     */
    @Override
    public void close() {
        if (this == Shared.ENGINE) {
            throw new IllegalStateException("the shared copy engine lives as long as the JVM and cannot be closed");
        }
        engine.close();
    }

    @Override
    public String toString() {
        return "CopyEngine[" + workers() + " workers, inline up to " + inlineThreshold() + " B, chunks >= "
            + minChunk() + " B" + (checked == null ? "" : ", checked (seed " + checked.seed() + ")")
            + (isClosed() ? ", closed" : "") + "]";
    }
}
