package dev.jpipeline.internal.checked;

import dev.jpipeline.internal.PhaseBarrier;
import dev.jpipeline.internal.copy.CopyService;
import dev.jpipeline.internal.wait.ParkListener;
import java.lang.foreign.MemorySegment;

/**
 * Checked execution's hold on pipelines: where a seeded schedule may switch threads, where copies go so that they
 * land late, which waits need which copies, and which stage destinations to poison once released. The SIMT
 * runtime's checked launches provide one per launch (through {@link ParkListener#interleaver()}); for Java
 * threads, {@link SeededInterleaver} is a checked {@code PipelineSharedState}'s (one per state) and a checked
 * {@code CopyEngine}'s (through {@link CopyService#interleaver()}, for thread-scope pipelines).
 *
 * <pre>
 * Binding: a pipeline handle takes the interleaver of the thread that makes it (else its state's, or its copy
 * service's) once, at construction, so an unchecked pipeline pays one null test per operation and nothing else
 * (and one per wait that does not return at once).
 * Poisoning: copies into a stage are recorded by (ring, stage, round); round r's destinations are freed by the
 * release that completes the round for every consumer group, and again (a no-op by then, unless that releaser
 * has not got there yet) by every producer's acquire of round r + 1 before it returns. The record is claimed
 * once, so a late look by another releaser cannot poison the next round's data, and a producer never writes
 * the stage before its previous round's poison.
 * Waits: a wait that does not return at once tells waitBegins / waitEnds, so that an interleaver that holds
 * copies back (Java threads, where no scheduler sees every thread) can land the ones the wait needs.
 * Ordering: releases / acquires name the happens-before edges of pipelines and barriers (a commit before the
 * wait of its batch, a release before the acquire that reuses its stage, an arrival before the wait of its
 * phase), for an interleaver that looks for data races; both default to nothing.
 * </pre>
 */
public interface Interleaver {

    /**
     * The current thread is about to run pipeline operation {@code op}: a point where the schedule may switch.
     *
     * @param op the CUDA name of the operation
     */
    void operation(String op);

    /**
     * Where a pipeline made now sends its copies, instead of {@code configured}.
     *
     * @param configured the copy service the pipeline was configured with
     * @return the service to use
     */
    CopyService copies(CopyService configured);

    /**
     * A copy into stage {@code stage} of {@code ring}, in the stage's round {@code round}, writes {@code dst}.
     *
     * @param ring  identifies the pipeline's shared state
     * @param stage the stage
     * @param round how many times the stages had wrapped when it was acquired
     * @param dst   the destination
     */
    void stageCopy(Object ring, int stage, long round, MemorySegment dst);

    /**
     * Every consumer has released round {@code round} of stage {@code stage}: its destinations hold no data now.
     *
     * @param ring  identifies the pipeline's shared state
     * @param stage the stage
     * @param round the round released
     */
    void stageFreed(Object ring, int stage, long round);

    /**
     * The current thread is about to wait for phase {@code round} of {@code barrier} (a stage's or a thread-scope
     * batch's), which has not completed: copies tied to that phase that have not landed would hold the wait up,
     * so an interleaver that holds copies back lands them now, and any copy tied to the phase before
     * {@link #waitEnds} too. A poll (a wait that looks once) may find them still in flight. By default nothing: a
     * checked kernel's scheduler lands copies by itself when nothing else can run.
     *
     * @param barrier the barrier waited on
     * @param round   the phase waited for (taken modulo 2^23, as the barrier does)
     * @param poll    whether the wait looks once and never parks
     */
    default void waitBegins(PhaseBarrier barrier, int round, boolean poll) {
    }

    /**
     * The wait that {@link #waitBegins} announced has ended (whatever its outcome).
     *
     * @param barrier the barrier waited on
     * @param round   the phase waited for
     */
    default void waitEnds(PhaseBarrier barrier, int round) {
    }

    /**
     * Copies tied to phase {@code round} of {@code barrier} are about to be tied to another barrier as well
     * ({@code pipeline_producer_commit(pipe, barrier)}), whose waits are not pipeline operations: an interleaver
     * that holds copies back lands them now, since it would never see a wait that needs them. By default nothing.
     *
     * @param barrier the barrier the copies are tied to (a thread-scope batch's)
     * @param round   the phase they are tied to
     */
    default void landNow(PhaseBarrier barrier, int round) {
    }

    /**
     * A handle of {@code ring} departs (its owner quit, or ended without quit): it will never commit batch
     * {@code nextCommit} or a later one, nor release batch {@code nextRelease} or a later one. The protocol drops
     * those arrivals so that its peers go on; libcu++'s {@code quit()} only lowers the owner count, and its stage
     * barriers go on expecting them. By default nothing.
     *
     * @param ring        identifies the pipeline's shared state
     * @param who         the departing handle and how it left, for messages
     * @param nextCommit  the first batch it will not commit, or -1 when it commits nothing
     * @param nextRelease the first batch it will not release, or -1 when it releases nothing
     */
    default void departs(Object ring, String who, long nextCommit, long nextRelease) {
    }

    /**
     * The current thread's wait in {@code op} has found batch {@code batch} complete: it needed every owner's commit
     * of that batch ({@code commits}: a consumer_wait) or every owner's release of it (a producer_acquire of the
     * stage's next round). By default nothing; checked execution tells whether the batch completed only because
     * a departed owner's arrivals were dropped, which is a wait that never ends on a GPU.
     *
     * @param ring    identifies the pipeline's shared state
     * @param commits whether the wait needed the batch's commits (else its releases)
     * @param stage   the batch's stage
     * @param batch   the batch (round * stages + stage)
     * @param op      the operation that waited, by its CUDA name
     */
    default void needs(Object ring, boolean commits, int stage, long batch, String op) {
    }

    /**
     * The current thread's wait in {@code op} can never complete batch {@code batch}: every owner that would
     * arrive for it has departed, and jpipeline is about to throw (no producer, or no consumer, is left). By default
     * nothing; checked execution reports what a GPU does instead, a wait that never ends, when the departures'
     * dropped arrivals are the reason.
     *
     * @param ring    identifies the pipeline's shared state
     * @param commits whether the wait needs the batch's commits (a consumer_wait; else its releases)
     * @param stage   the batch's stage
     * @param batch   the batch
     * @param op      the operation that waits, by its CUDA name
     */
    default void abandoned(Object ring, boolean commits, int stage, long batch, String op) {
    }

    /**
     * The current thread's actions so far happen-before the actions of any thread after its
     * {@link #acquires acquire} of phase {@code phase} of {@code sync}: a commit of a batch, a release of a stage's
     * round, an arrival at a barrier's phase. Called after the operation took effect. By default nothing.
     *
     * @param sync  the synchronization object (a pipeline side, a barrier), compared by identity
     * @param phase which of its phases (a batch number, a barrier phase)
     */
    default void releases(Object sync, long phase) {
    }

    /**
     * The current thread's actions from now on happen-after every {@link #releases release} of phase
     * {@code phase} of {@code sync}: a wait that found a batch complete, an acquire of a stage whose previous round
     * every consumer released, a wait that saw a barrier's phase complete. By default nothing.
     *
     * @param sync  the synchronization object, compared by identity
     * @param phase which of its phases
     */
    default void acquires(Object sync, long phase) {
    }

    /** The interleaver of the current thread's execution (its park listener's), or null. */
    static Interleaver current() {
        ParkListener listener = ParkListener.current();
        return listener == null ? null : listener.interleaver();
    }
}
