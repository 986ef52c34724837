package dev.jpipeline;

import dev.jpipeline.internal.PhaseBarrier;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The barriers of one pipeline made on a {@link PipelineSharedState}: per stage s, {@code produced[s]}
 * (expects the producers' commits) and {@code consumed[s]} (expects the consumers' releases), plus the count
 * of handles that still own the pipeline.
 *
 * <pre>
 * Invariant (libcu++ relies on it too): with Pp[s], Cp[s] the completed phases of produced[s], consumed[s],
 *     Cp[s] &lt;= Pp[s] &lt;= Cp[s] + 1
 * Batch b lives in stage b mod S, round b div S. A producer in round k of stage s may acquire once
 * Cp[s] &gt;= k; a consumer in round k may read once Pp[s] &gt;= k + 1. So no barrier ever runs more than one
 * phase ahead of a thread waiting on it.
 * </pre>
 */
final class StageRing {

    /** How the pipeline was made: every thread of the group must make it the same way. */
    enum Kind { UNIFIED, BY_COUNT, BY_ROLE }

    final Kind kind;
    final int groupSize;
    final int producerCount;
    final int consumerCount;
    final PhaseBarrier[] produced;
    final PhaseBarrier[] consumed;
    /** The opt-in hang diagnosis, or null. */
    final DeadlockDetector detector;
    /** How threads wait for a stage. */
    final WaitStrategy waitStrategy;
    /** Where this pipeline's asynchronous copies run. */
    final dev.jpipeline.copy.CopyEngine copyEngine;
    /** Records the pipeline's operations, or null. */
    final dev.jpipeline.internal.TraceSink tracer;
    /**
     * Per stage: the latest failed copy, with its round. Written before the failing batch's produced arrival,
     * read by consumers after their wait completes, so a failure is seen exactly by the wait for its round.
     */
    private final AtomicReferenceArray<StageFailure> failures;

    /** A failed copy into round {@code round} of a stage. */
    record StageFailure(int round, Throwable cause) {
    }

    /** Handles that have not quit yet; the one that brings it to 0 is the last owner. */
    private volatile int owners;
    /** Count partition only: threads whose first operation made them producers / consumers. */
    private volatile int producerClaims;
    private volatile int consumerClaims;

    StageRing(Kind kind, int stageCount, int groupSize, int producerCount, int consumerCount,
              PipelineSharedState state) {
        this.kind = kind;
        this.detector = state.newDetector(groupSize);
        this.waitStrategy = state.waitStrategy();
        this.copyEngine = state.copyEngine();
        this.tracer = state.tracer();
        this.failures = new AtomicReferenceArray<>(stageCount);
        this.groupSize = groupSize;
        this.producerCount = producerCount;
        this.consumerCount = consumerCount;
        this.produced = new PhaseBarrier[stageCount];
        this.consumed = new PhaseBarrier[stageCount];
        for (int s = 0; s < stageCount; s++) {
            produced[s] = new PhaseBarrier(producerCount);
            consumed[s] = new PhaseBarrier(consumerCount);
        }
        OWNERS.setRelease(this, groupSize);
    }

    void recordFailure(int stage, int round, Throwable cause) {
        failures.set(stage, new StageFailure(round, cause));
    }

    /** The failure of round {@code round} of {@code stage}, or null. */
    Throwable failure(int stage, int round) {
        StageFailure f = failures.get(stage);
        return f != null && f.round() == round ? f.cause() : null;
    }

    /** Gives up one handle's ownership. @return whether it was the last one */
    boolean releaseOwner() {
        return (int) OWNERS.getAndAdd(this, -1) == 1;
    }

    /**
     * Count partition: records that the thread of {@code rank} takes the producer (or consumer) side with its
     * first operation. @return {@code producer}
     *
     * @throws IllegalStateException when more threads act on that side than the pipeline was made for (the
     *                               mistake that hangs a CUDA kernel: consumer threads running producer code)
     */
    boolean claim(boolean producer, int rank) {
        int limit = producer ? producerCount : consumerCount;
        int claims = (int) (producer ? PRODUCER_CLAIMS : CONSUMER_CLAIMS).getAndAdd(this, 1) + 1;
        if (claims > limit) {
            String role = producer ? "producer" : "consumer";
            throw new IllegalStateException("rank " + rank + " is the " + ordinal(claims) + " thread to act as a "
                + role + ", but the pipeline was made with " + limit + " " + role + "s (producer count "
                + producerCount + " in a group of " + groupSize + "): each thread must keep to one side, and "
                + "exactly " + producerCount + " threads may produce");
        }
        return producer;
    }

    /** {@link #claimForQuit()}: the quitting thread took a producer's place, a consumer's, or none was left. */
    enum QuitSide { PRODUCER, CONSUMER, NONE }

    /**
     * Count partition: the side of a thread that quits before its first operation. It takes a consumer's place
     * while one is unclaimed, else a producer's (a producer that never committed and a consumer that never
     * released leave the same barriers untouched until their first round). Atomic, so that threads quitting
     * together never take more places than there are.
     */
    QuitSide claimForQuit() {
        for (;;) {
            int consumers = consumerClaims;
            if (consumers < consumerCount) {
                if (CONSUMER_CLAIMS.compareAndSet(this, consumers, consumers + 1)) {
                    return QuitSide.CONSUMER;
                }
                continue;
            }
            int producers = producerClaims;
            if (producers >= producerCount) {
                return QuitSide.NONE;
            }
            if (PRODUCER_CLAIMS.compareAndSet(this, producers, producers + 1)) {
                return QuitSide.PRODUCER;
            }
        }
    }

    private static String ordinal(int n) {
        int mod100 = n % 100;
        String suffix = mod100 >= 11 && mod100 <= 13 ? "th"
            : switch (n % 10) { case 1 -> "st"; case 2 -> "nd"; case 3 -> "rd"; default -> "th"; };
        return n + suffix;
    }

    int owners() {
        return owners;
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder(kind + " pipeline of " + groupSize + " threads (" + producerCount
            + " producing, " + consumerCount + " consuming), " + owners + " owners");
        for (int s = 0; s < produced.length; s++) {
            b.append("; stage ").append(s).append(": produced ").append(produced[s])
                .append(", consumed ").append(consumed[s]);
        }
        return b.toString();
    }

    private static final VarHandle OWNERS;
    private static final VarHandle PRODUCER_CLAIMS;
    private static final VarHandle CONSUMER_CLAIMS;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            OWNERS = lookup.findVarHandle(StageRing.class, "owners", int.class);
            PRODUCER_CLAIMS = lookup.findVarHandle(StageRing.class, "producerClaims", int.class);
            CONSUMER_CLAIMS = lookup.findVarHandle(StageRing.class, "consumerClaims", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
