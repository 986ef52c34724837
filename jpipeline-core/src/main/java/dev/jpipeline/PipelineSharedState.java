package dev.jpipeline;

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

    /** The current pipeline's ring: written by rank 0 before the last group sync of make, read after it. */
    private volatile StageRing ring;
    /** Role census of a role-partitioned make: reset by rank 0, counted by producers between two syncs. */
    private volatile int producerCensus;

    private PipelineSharedState(ThreadScope scope, int stageCount) {
        this.scope = scope;
        this.stageCount = stageCount;
    }

    /**
     * {@code cuda::pipeline_shared_state<scope, stageCount>}: a shared state for up to {@code stageCount}
     * stages in flight.
     *
     * @throws IllegalArgumentException when the scope is {@link ThreadScope#THREAD} or the stage count is
     *                                  outside 1..255
     */
    public static PipelineSharedState create(ThreadScope scope, int stageCount) {
        Objects.requireNonNull(scope, "scope");
        if (scope == ThreadScope.THREAD) {
            throw new IllegalArgumentException("a pipeline shared state cannot have THREAD scope: a thread-scope "
                + "pipeline has no shared state (use Pipeline.make())");
        }
        if (stageCount < 1 || stageCount > MAX_STAGES) {
            throw new IllegalArgumentException(
                "pipeline stage count must be in 1.." + MAX_STAGES + ", got " + stageCount);
        }
        return new PipelineSharedState(scope, stageCount);
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
