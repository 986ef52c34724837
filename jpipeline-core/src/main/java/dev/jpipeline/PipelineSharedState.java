package dev.jpipeline;

import dev.jpipeline.copy.CopyEngine;
import dev.jpipeline.trace.Tracer;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;

/**
 * The state that the threads of a block-, device- or system-scope pipeline share: mirrors
 * {@code cuda::pipeline_shared_state<Scope, StagesCount>}.
 *
 * <p>Like upstream it holds one {@code produced} and one {@code consumed} barrier per stage and a count of the
 * pipeline handles that still own it; unlike upstream those live in a {@code StageRing} that each
 * {@code Pipeline.make} creates afresh (rank 0 creates it, {@link Group#sync()} publishes it). So a shared
 * state can be reused once every owner of the previous pipeline has quit (as in CUDA), and a handle of an
 * older pipeline can never disturb a newer one.
 *
 * <p>Differences from CUDA: the scope and stage count are run-time values, checked here: the stage count
 * must be 1..255 (CUDA's {@code uint8_t} template argument) and the scope must not be
 * {@link ThreadScope#THREAD} (a compile error in CUDA).
 */
public final class PipelineSharedState {

    /** Largest stage count, as in CUDA where the count is a {@code uint8_t}. */
    public static final int MAX_STAGES = 255;

    private final ThreadScope scope;
    private final int stageCount;
    /** Patience of the opt-in deadlock detector in nanoseconds; 0 when it is off. */
    private final long deadlockPatienceNanos;
    private final WaitStrategy waitStrategy;
    private final CopyEngine copyEngine;
    private final Tracer tracer;

    /** The current pipeline's ring: written by rank 0 before the last group sync of make, read after it. */
    private volatile StageRing ring;
    /** Role census of a role-partitioned make: reset by rank 0, counted by producers between two syncs. */
    private volatile int producerCensus;

    private PipelineSharedState(Builder b) {
        this.scope = b.scope;
        this.stageCount = b.stageCount;
        this.deadlockPatienceNanos = b.deadlockPatienceNanos;
        this.waitStrategy = b.waitStrategy;
        this.copyEngine = b.copyEngine != null ? b.copyEngine : CopyEngine.shared();
        this.tracer = b.tracer;
    }

    /**
     * {@code cuda::pipeline_shared_state<scope, stageCount>}: a shared state for up to {@code stageCount}
     * stages in flight.
     *
     * @throws IllegalArgumentException when the scope is {@link ThreadScope#THREAD} or the stage count is
     *                                  outside 1..255
     */
    public static PipelineSharedState create(ThreadScope scope, int stageCount) {
        return builder(scope, stageCount).build();
    }

    /**
     * A builder for a shared state with options beyond CUDA's (for example deadlock detection).
     *
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
        private long deadlockPatienceNanos;
        private WaitStrategy waitStrategy = WaitStrategy.ADAPTIVE;
        private CopyEngine copyEngine;
        private Tracer tracer;

        private Builder(ThreadScope scope, int stageCount) {
            this.scope = scope;
            this.stageCount = stageCount;
        }

        /**
         * Turns on hang diagnosis (no CUDA counterpart; off by default because it keeps a little state per
         * thread). A thread that has waited in the pipeline for {@code patience} checks whether every
         * participant is stuck: waiting in the pipeline, gone (quit), or whose thread has ended without
         * quitting. If so, and no stage changes for another {@code patience}, every waiting thread gets an
         * {@link IllegalStateException} reporting what each rank waits for and each stage's arrivals. Waits
         * that are merely slow are never interrupted: the check only fires when nothing can change.
         *
         * @throws IllegalArgumentException when {@code patience} is not positive
         */
        public Builder detectDeadlocks(java.time.Duration patience) {
            Objects.requireNonNull(patience, "patience");
            if (patience.isNegative() || patience.isZero()) {
                throw new IllegalArgumentException("deadlock detection patience must be positive, got " + patience);
            }
            this.deadlockPatienceNanos = patience.toNanos();
            return this;
        }

        /** How producers wait for free stages and consumers for committed ones (default {@link WaitStrategy#ADAPTIVE}). */
        public Builder waitStrategy(WaitStrategy strategy) {
            this.waitStrategy = Objects.requireNonNull(strategy, "strategy");
            return this;
        }

        /** Where {@code memcpyAsync} runs copies too large to run inline (default {@link CopyEngine#shared()}). */
        public Builder copyEngine(CopyEngine engine) {
            this.copyEngine = Objects.requireNonNull(engine, "engine");
            return this;
        }

        /** Records every operation of pipelines on this state (default: none, at no cost). */
        public Builder tracer(Tracer tracer) {
            this.tracer = Objects.requireNonNull(tracer, "tracer");
            return this;
        }

        /** The shared state. */
        public PipelineSharedState build() {
            return new PipelineSharedState(this);
        }
    }

    /** A detector for a new pipeline of {@code groupSize} threads, or null when detection is off. */
    DeadlockDetector newDetector(int groupSize) {
        return deadlockPatienceNanos == 0 ? null : new DeadlockDetector(deadlockPatienceNanos, groupSize);
    }

    /** How threads of pipelines on this state wait. */
    public WaitStrategy waitStrategy() {
        return waitStrategy;
    }

    /** The tracer of pipelines on this state, or null. */
    public Tracer tracer() {
        return tracer;
    }

    /** Where asynchronous copies of pipelines on this state run. */
    public CopyEngine copyEngine() {
        return copyEngine;
    }

    /** The scope the state was created with. */
    public ThreadScope scope() {
        return scope;
    }

    /** The number of stages ({@code StagesCount}). */
    public int stageCount() {
        return stageCount;
    }

    StageRing ring() {
        return ring;
    }

    void publish(StageRing newRing) {
        ring = newRing;
    }

    void resetCensus() {
        CENSUS.setVolatile(this, 0);
    }

    void countProducer() {
        CENSUS.getAndAdd(this, 1);
    }

    int census() {
        return producerCensus;
    }

    @Override
    public String toString() {
        StageRing r = ring;
        return "PipelineSharedState[" + scope + ", " + stageCount + " stages" + (r == null ? "" : ", " + r) + "]";
    }

    private static final VarHandle CENSUS;

    static {
        try {
            CENSUS = MethodHandles.lookup().findVarHandle(PipelineSharedState.class, "producerCensus", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
