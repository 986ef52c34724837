package dev.jpipeline;

import dev.jpipeline.copy.CopyEngine;
import dev.jpipeline.internal.ApiAccess;
import dev.jpipeline.internal.copy.CopyService;
import dev.jpipeline.internal.wait.Deadlines;
import dev.jpipeline.internal.checked.Interleaver;
import dev.jpipeline.internal.MakeRendezvous;
import dev.jpipeline.internal.PipelineMaker;
import dev.jpipeline.internal.PipelineSettings;
import dev.jpipeline.internal.RegionRendezvous;
import dev.jpipeline.internal.checked.SeededInterleaver;
import dev.jpipeline.trace.Tracer;
import java.time.Duration;
import java.util.Objects;

/**
 * The state that the threads of a block-, device- or system-scope pipeline share: mirrors
 * {@code cuda::pipeline_shared_state<Scope, StagesCount>}.
 *
 * <p>Like upstream it stands for one {@code produced} and one {@code consumed} barrier per stage and a count of
 * the pipeline handles that still own them; unlike upstream each collective {@code Pipeline.make} creates those
 * afresh, after checking that every rank made the pipeline the same way. So a shared state can be made on again
 * by the same group (each make completes for all ranks before the next begins), and a handle of an older
 * pipeline can never disturb a newer one.
 *
 * <p>Differences from CUDA: the scope and stage count are run-time values, checked here: the stage count
 * must be 1..255 (CUDA's {@code uint8_t} template argument) and the scope must not be
 * {@link ThreadScope#THREAD} (a compile error in CUDA).
 *
 * <p>System scope across processes: a state built {@link Builder#in in a shared region} keeps its pipelines in the
 * region's memory, so that threads of several JVM processes make and use one pipeline, each process with its own
 * {@code PipelineSharedState} object over the same bytes (as CUDA places a {@code thread_scope_system} state in
 * memory every participant maps). docs/system-scope.md describes it.
 */
public final class PipelineSharedState {

    /** Largest stage count, as in CUDA where the count is a {@code uint8_t}. */
    public static final int MAX_STAGES = 255;

    /** Default patience of the hang report: a pipeline stuck this long is reported. */
    public static final Duration DEFAULT_HANG_PATIENCE = Duration.ofSeconds(1);
    /** Patience beyond this (about 292 years) is clamped to it. */
    private static final long MAX_PATIENCE_NANOS = Long.MAX_VALUE / 2;

    private final PipelineSettings settings;
    private final CopyEngine copyEngine;
    private final Tracer tracer;
    /** The collective make of pipelines on this state. */
    private final PipelineMaker rendezvous;
    /** The region of a state in a shared region, else null. */
    private final SharedRegion region;
    private final long regionOffset;

    private PipelineSharedState(Builder b) {
        this.copyEngine = b.copyEngine != null ? b.copyEngine : CopyEngine.shared();
        this.tracer = b.tracer;
        CopyService copies = ApiAccess.copies(copyEngine);
        Interleaver checked = b.checked ? new SeededInterleaver(b.checkedSeed, null) : copies.interleaver();
        this.settings = new PipelineSettings(b.scope, b.stageCount, b.waitStrategy, copies,
            tracer == null ? null : ApiAccess.sink(tracer),
            b.region == null ? b.hangPatienceNanos : 0, b.copyPolicy, checked);
        this.region = b.region;
        this.regionOffset = b.regionOffset;
        this.rendezvous = region == null ? new MakeRendezvous(settings)
            : RegionRendezvous.in(region.data(), regionOffset, "the pipeline shared state at offset "
                + regionOffset + " of region " + region.file(), region.locals(regionOffset), settings);
    }

    /**
     * Bytes of a shared region's data that a state {@link Builder#in in the region} takes from its offset on, for a
     * pipeline of {@code stageCount} stages made by a group of {@code groupSize} (any kind of pipeline): the data
     * after them is free for the stages' buffers.
     *
     * @param stageCount the number of stages, 1..255
     * @param groupSize  the size of the group that makes pipelines on it, at least 1
     * @return the bytes, a multiple of 128
     * @throws IllegalArgumentException when a count is out of range
     */
    public static long regionBytes(int stageCount, int groupSize) {
        if (stageCount < 1 || stageCount > MAX_STAGES || groupSize < 1) {
            throw new IllegalArgumentException("a region state needs 1.." + MAX_STAGES + " stages and a group of at "
                + "least 1, got " + stageCount + " stages and a group of " + groupSize);
        }
        return RegionRendezvous.bytesFor(stageCount, groupSize);
    }

    /**
     * {@code cuda::pipeline_shared_state<scope, stageCount>}: a shared state for up to {@code stageCount}
     * stages in flight.
     *
     * @param scope      the scope of the pipelines made on it: BLOCK, DEVICE or SYSTEM
     * @param stageCount the number of stages, 1..255
     * @return a new shared state with the default options
     * @throws IllegalArgumentException when the scope is {@link ThreadScope#THREAD} or the stage count is
     *                                  outside 1..255
     */
    public static PipelineSharedState create(ThreadScope scope, int stageCount) {
        return builder(scope, stageCount).build();
    }

    /**
     * A builder for a shared state with options beyond CUDA's (for example deadlock detection).
     *
     * @param scope      the scope of the pipelines made on it: BLOCK, DEVICE or SYSTEM
     * @param stageCount the number of stages, 1..255
     * @return a builder with the default options
     * @throws IllegalArgumentException as {@link #create(ThreadScope, int)}
     */
    public static Builder builder(ThreadScope scope, int stageCount) {
        Objects.requireNonNull(scope, "scope");
        if (scope == ThreadScope.THREAD) {
            throw new IllegalArgumentException("a pipeline shared state cannot have THREAD scope: a thread-scope "
                + "pipeline has no shared state (use Pipeline.make())");
        }
        if (stageCount < 1 || stageCount > MAX_STAGES) {
            throw new IllegalArgumentException(
                "pipeline stage count must be in 1.." + MAX_STAGES + ", got " + stageCount);
        }
        return new Builder(scope, stageCount);
    }

    /** Options of a {@link PipelineSharedState}; {@link #build()} makes it. */
    public static final class Builder {
        private final ThreadScope scope;
        private final int stageCount;
        private long hangPatienceNanos = DEFAULT_HANG_PATIENCE.toNanos();
        private WaitStrategy waitStrategy = WaitStrategy.ADAPTIVE;
        private CopyEngine copyEngine;
        private Tracer tracer;
        private CopyPolicy copyPolicy = CopyPolicy.AUTO;
        private boolean checked;
        private long checkedSeed;
        private SharedRegion region;
        private long regionOffset;

        private Builder(ThreadScope scope, int stageCount) {
            this.scope = scope;
            this.stageCount = stageCount;
        }

        /**
         * How long the pipeline must be stuck before its hang is reported (no CUDA counterpart: a CUDA kernel just
         * hangs). On by default with {@link #DEFAULT_HANG_PATIENCE}; {@link Duration#ZERO} turns it off; values
         * beyond about 292 years are clamped. A thread that has waited in the pipeline for a quarter of the
         * patience checks whether every participant is stuck: waiting in the pipeline, gone (quit), or idle after
         * a misuse exception; a participant whose thread has ended without quitting is first treated as quit. If
         * every participant stays stuck, no copy is in flight and no stage changes for half the patience, every
         * waiting thread gets an {@link IllegalStateException} reporting what each rank waits for and each stage's
         * arrivals. Waits that are merely slow are never interrupted. It costs nothing until a wait has lasted a
         * quarter of the patience.
         *
         * @param patience how long every participant must stay stuck before a hang is reported;
         *                 {@link Duration#ZERO} turns detection off
         * @return this builder
         * @throws IllegalArgumentException when {@code patience} is negative
         */
        public Builder detectDeadlocks(Duration patience) {
            Objects.requireNonNull(patience, "patience");
            if (patience.isNegative()) {
                throw new IllegalArgumentException("hang detection patience must not be negative (Duration.ZERO "
                    + "turns detection off), got " + patience);
            }
            this.hangPatienceNanos = Math.min(Deadlines.saturatedNanos(patience), MAX_PATIENCE_NANOS);
            return this;
        }

        /**
         * How producers wait for free stages and consumers for committed ones (default
         * {@link WaitStrategy#ADAPTIVE}).
         *
         * @param strategy the wait strategy, not null
         * @return this builder
         */
        public Builder waitStrategy(WaitStrategy strategy) {
            this.waitStrategy = Objects.requireNonNull(strategy, "strategy");
            return this;
        }

        /**
         * Where {@code memcpyAsync} runs copies too large to run inline (default {@link CopyEngine#shared()}).
         *
         * @param engine the copy engine, not null; the caller closes an engine of its own after the pipelines
         * @return this builder
         */
        public Builder copyEngine(CopyEngine engine) {
            this.copyEngine = Objects.requireNonNull(engine, "engine");
            return this;
        }

        /**
         * Where producers' {@code memcpyAsync} copies run when they are too large to run inline anyway (default
         * {@link CopyPolicy#AUTO}; no CUDA counterpart).
         *
         * @param policy the copy policy, not null
         * @return this builder
         */
        public Builder copyPolicy(CopyPolicy policy) {
            this.copyPolicy = Objects.requireNonNull(policy, "policy");
            return this;
        }

        /**
         * Checked mode, for tests (no CUDA counterpart): pipelines made on this state hold their copies back and
         * poison what holds no data, so that a missing wait, a read after release or a copy whose source changes
         * too early fails every time instead of passing by luck. Slower; not for production.
         * <ul>
         *   <li>Every {@code memcpyAsync} into a stage, whatever its size and the {@link CopyPolicy}, only ties the
         *       copy to the stage and fills its destination with the poison pattern: every 4-byte word
         *       {@code 0xFFA5A5A5} in native byte order (a NaN as a float), trailing bytes {@code 0xA5}. The copy
         *       lands when a consumer's wait for its stage ({@code consumerWait}, {@code consumerWaitFor},
         *       {@code consumerWaitUntil}) begins, or at once when it is issued while such a wait is under way;
         *       never earlier. So a consumer that reads a stage without waiting for it reads poison, every time.
         *       A wait that only polls (a zero or negative timeout) may find a committed stage's copies still in
         *       flight, as with a slow copy engine. A copy that fails when it lands (its source's arena closed
         *       meanwhile, a read error) fails its stage ({@link StageFailedException}). The state's copy engine
         *       is not used.</li>
         *   <li>Once every consumer has released a stage, the destinations of the stage's copies hold the poison
         *       pattern again, until a producer copies into them; so does a read after the last
         *       {@code consumerRelease}. (Stage memory that producers write directly is not tracked.)</li>
         *   <li>Every pipeline operation may spin briefly or yield, as {@code seed} and the thread's name decide.
         *       With real threads this shakes the interleaving but does not choose it: unlike a checked kernel
         *       launch, a run does not replay. Where copies land relative to each thread's own operations is the
         *       same in every run.</li>
         * </ul>
         * A state built with a {@link CopyEngine#checked(long)} engine and without this option is checked with
         * that engine's seed.
         *
         * @param seed where the decisions come from
         * @return this builder
         */
        public Builder checked(long seed) {
            this.checked = true;
            this.checkedSeed = seed;
            return this;
        }

        /**
         * Places the state in a shared region, at {@code offset} of its {@link SharedRegion#data() data}: pipelines
         * made on it live in the region's memory, and threads of every process that maps the region make and use
         * them together (no CUDA counterpart as an option: CUDA code places a system-scope state in shared memory
         * itself). Each process builds its own state object with the same region, offset and stage count; the
         * group that makes pipelines on it is typically a region's group ({@link SharedRegion#join}), whose
         * {@code sync()} crosses processes. The stage buffers go in the region's data too, after
         * {@link #regionBytes} from the offset.
         *
         * <p>What differs from a state in one process:
         * <ul>
         *   <li>Waiting: idle by the wait strategy, as in one process, then sleep in a futex on the stage's word,
         *       in bounded sleeps (a virtual thread parks in short sleeps at once).</li>
         *   <li>A process that dies is left for by the survivor that waits for it, within about 100 ms of its
         *       wait, as if its ranks had quit: a stage it held acquired, or whose copies were in flight, fails
         *       with a {@link StageFailedException}, and a wait that can never complete throws an
         *       {@link IllegalStateException} naming the dead ranks and their pids. The hang report
         *       ({@link #detectDeadlocks}) is off: a process cannot see the threads of another.</li>
         *   <li>A copy's failure reaches consumers as its message (the cause is a {@code RuntimeException} whose
         *       message is the original failure's {@code toString()} and the recording pid).</li>
         *   <li>A new pipeline is made on the state only once every handle of the previous one has quit (or died,
         *       or its thread ended), and the copies its producers handed off have landed (a make waits up to a
         *       second for them, then refuses).</li>
         *   <li>Checked mode ({@link #checked}) is not available.</li>
         * </ul>
         *
         * @param region the region, open in this process; it must outlive the pipelines
         * @param offset where the state starts in the region's data: a multiple of 128, with
         *               {@link #regionBytes} bytes after it in the data for the groups that will make on it
         * @return this builder
         * @throws IllegalArgumentException when the scope is not SYSTEM, or the offset is not a multiple of 128 or
         *                                  is outside the data
         */
        public Builder in(SharedRegion region, long offset) {
            Objects.requireNonNull(region, "region");
            if (scope != ThreadScope.SYSTEM) {
                throw new IllegalArgumentException("only a SYSTEM-scope state can be placed in a shared region, this "
                    + "one is " + scope);
            }
            long size = region.data().byteSize();
            if (offset < 0 || offset % 128 != 0 || offset >= size) {
                throw new IllegalArgumentException("a state's offset in a region must be a multiple of 128 inside "
                    + "its " + size + " data bytes, got " + offset);
            }
            this.region = region;
            this.regionOffset = offset;
            return this;
        }

        /**
         * Records every operation of pipelines on this state (default: none, at no cost).
         *
         * @param tracer the tracer, not null
         * @return this builder
         */
        public Builder tracer(Tracer tracer) {
            this.tracer = Objects.requireNonNull(tracer, "tracer");
            return this;
        }

        /**
         * The shared state.
         *
         * @return a new shared state with these settings
         */
        public PipelineSharedState build() {
            if (region != null && (checked || copyEngine != null && ApiAccess.copies(copyEngine).interleaver() != null)) {
                throw new IllegalArgumentException("checked mode is not available for a state in a shared region "
                    + "(its copies could not be held back in another process)");
            }
            return new PipelineSharedState(this);
        }
    }

    /**
     * How threads of pipelines on this state wait.
     *
     * @return the wait strategy
     */
    public WaitStrategy waitStrategy() {
        return settings.strategy();
    }

    /**
     * The hang report's patience ({@link Duration#ZERO}: off).
     *
     * @return the patience, {@link Duration#ZERO} when hang detection is off
     */
    public Duration hangPatience() {
        return Duration.ofNanos(settings.hangPatienceNanos());
    }

    /**
     * The tracer of pipelines on this state, or null.
     *
     * @return the tracer, or null when none was set
     */
    public Tracer tracer() {
        return tracer;
    }

    /**
     * Where asynchronous copies of pipelines on this state run (unless the state is checked: then they are held
     * back and land on the threads that wait for them, see {@link Builder#checked(long)}).
     *
     * @return the copy engine
     */
    public CopyEngine copyEngine() {
        return copyEngine;
    }

    /**
     * Where producers' large copies run.
     *
     * @return the copy policy
     */
    public CopyPolicy copyPolicy() {
        return settings.copyPolicy();
    }

    /**
     * The scope the state was created with.
     *
     * @return the scope
     */
    public ThreadScope scope() {
        return settings.scope();
    }

    /**
     * The number of stages ({@code StagesCount}).
     *
     * @return the stage count, 1..255
     */
    public int stageCount() {
        return settings.stageCount();
    }

    PipelineMaker rendezvous() {
        return rendezvous;
    }

    @Override
    public String toString() {
        return "PipelineSharedState[" + scope() + ", " + stageCount() + " stages"
            + (region == null ? "" : ", at offset " + regionOffset + " of " + region.file())
            + (settings.interleaver() instanceof SeededInterleaver c ? ", checked (seed " + c.seed() + ")" : "") + "]";
    }
}
