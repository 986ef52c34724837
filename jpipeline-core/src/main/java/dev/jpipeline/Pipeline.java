package dev.jpipeline;

import dev.jpipeline.copy.CopyEngine;
import dev.jpipeline.internal.ApiAccess;
import dev.jpipeline.internal.MakeRendezvous;
import dev.jpipeline.internal.PipelineHandle;
import dev.jpipeline.internal.PipelineMaker;
import dev.jpipeline.internal.RegionFaults;
import dev.jpipeline.internal.ThreadHandle;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * One thread's handle on a staged producer/consumer pipeline: mirrors {@code cuda::pipeline<Scope>}.
 *
 * <pre>
 *            producerAcquire()  memcpyAsync(..)  producerCommit()
 *   producers ------------------&gt; [ stage 0 ][ stage 1 ] ... [ stage S-1 ] ----&gt; consumers
 *            &lt;------------------------------------------------------------------
 *                     consumerRelease()          consumerWait() / WaitFor / WaitUntil
 * </pre>
 *
 * <p>Batch b uses stage {@code b mod S}. Producers collectively acquire the head stage (waiting until its
 * previous batch has been released by every consumer), submit copies to it and commit it; consumers
 * collectively wait for the tail stage (until every producer has committed it), use it and release it.
 * Each participating thread has its own handle, made by that thread; using it from another thread throws
 * {@link IllegalStateException} naming both threads.
 *
 * <p>Kinds, as in CUDA:
 * <ul>
 *   <li>{@link #make()}: a thread-scope pipeline ({@code cuda::make_pipeline()}); no shared state, never
 *       blocks on other threads; it tracks the calling thread's own batches.</li>
 *   <li>{@link #make(Group, PipelineSharedState)}: unified: every thread both produces and consumes.</li>
 *   <li>{@link #make(Group, PipelineSharedState, int)} and {@link #make(Group, PipelineSharedState,
 *       PipelineRole)}: partitioned: each thread is either a producer or a consumer.</li>
 * </ul>
 *
 * <p>Memory consistency effects: actions of a producer before {@code producerCommit()} of a batch
 * happen-before actions of a consumer after its {@code consumerWait()} for that batch returns (or its timed
 * wait returns {@code true}); actions of a consumer before {@code consumerRelease()} of a batch happen-before
 * actions of a producer after its {@code producerAcquire()} of that stage's next batch returns.
 *
 * <p>Deliberate differences from CUDA (where upstream is undefined or hangs):
 * <ul>
 *   <li>Roles are enforced: a producer calling a consumer operation or the reverse, an operation after
 *       {@link #quit()}, a commit without an acquire, and a release without a completed wait throw
 *       {@link IllegalStateException} naming the rule, the thread's rank and role, and the stage. A unified
 *       thread that would wait for itself (an acquire with S batches of its own unreleased, or a wait for a
 *       batch it has not committed) throws instead of deadlocking.</li>
 *   <li>{@link #quit()} drops the thread's future arrivals, so the remaining threads proceed; waiting for a
 *       batch that no remaining producer will commit (or a stage no remaining consumer will release) throws.</li>
 *   <li>Timed waits follow Java: a zero or negative timeout, or a past deadline, polls once.</li>
 *   <li>Waits are uninterruptible like CUDA's; the {@code *Interruptibly} variants throw
 *       {@link InterruptedException}. Timed waits honour their limit in every scope, thread scope included.</li>
 *   <li>Hangs are reported: when every thread of a shared pipeline is stuck and nothing changes for the shared
 *       state's patience (1 s by default, {@link PipelineSharedState.Builder#detectDeadlocks}), the waiting
 *       threads get an {@link IllegalStateException} describing every rank and stage. A participant whose thread
 *       has ended without {@code quit()} is treated as quit once a waiting peer notices (within that patience); a
 *       stage it had acquired and not committed fails ({@link StageFailedException}).</li>
 *   <li>Making is checked: a collective make whose ranks disagree (kind, count, roles, shared state) throws
 *       {@link IllegalArgumentException} on every rank instead of hanging.</li>
 * </ul>
 */
public final class Pipeline implements AutoCloseable {

    /** The engine's handle: every operation delegates to it. */
    private final PipelineHandle handle;

    private Pipeline(PipelineHandle handle) {
        this.handle = handle;
    }

    static {    // the SIMT runtime's compiled threads make pipelines in steps (MakeRendezvous.Making)
        ApiAccess.installPipelineDoors(new ApiAccess.PipelineDoors() {
            @Override
            public Pipeline wrap(PipelineHandle h) {
                return new Pipeline(h);
            }

            @Override
            public PipelineMaker maker(PipelineSharedState state) {
                return state.rendezvous();
            }
        });
    }

    // ---------------------------------------------------------------------------------------------------------
    // Creation

    /**
     * {@code cuda::make_pipeline()}: a thread-scope pipeline for the calling thread, whose asynchronous copies
     * run on {@link dev.jpipeline.copy.CopyEngine#shared()}.
     *
     * @return a new handle, owned by the calling thread
     */
    public static Pipeline make() {
        return new Pipeline(new ThreadHandle(ApiAccess.copies(CopyEngine.shared())));
    }

    /**
     * A thread-scope pipeline whose asynchronous copies run on {@code engine} (no CUDA counterpart: the GPU has
     * one copy engine). With a {@link CopyEngine#checked(long)} engine the pipeline is checked: its copies are held
     * back until a wait needs them and their destinations hold a poison pattern until then, for tests.
     *
     * @param engine where the pipeline's asynchronous copies run
     * @return a new handle, owned by the calling thread
     */
    public static Pipeline make(CopyEngine engine) {
        return new Pipeline(new ThreadHandle(ApiAccess.copies(Objects.requireNonNull(engine, "engine"))));
    }

    /**
     * {@code cuda::make_pipeline(group, &state)}: a unified pipeline in which every thread of {@code group}
     * produces and consumes. Collective: every thread of the group must call it with the same state; it
     * synchronizes the group twice, and every make completes for all ranks before the next one on the same state
     * begins.
     *
     * @param group the calling thread's view of the group
     * @param state the stages' shared state, the same for every rank
     * @return a new handle, owned by the calling thread
     * @throws IllegalArgumentException (on every rank) when the ranks disagree on how to make the pipeline or
     *                                  on the shared state
     */
    public static Pipeline make(Group group, PipelineSharedState state) {
        Objects.requireNonNull(group, "group");
        try {
            return new Pipeline(rendezvous(group, state).makeUnified(group));
        } catch (InternalError fault) {
            throw RegionFaults.lost(fault, "make of a pipeline over " + state, null, -1);    // a truncated region
        }
    }

    /**
     * {@code cuda::make_pipeline(group, &state, producer_count)}: a partitioned pipeline with
     * {@code producerCount} producers; the rest of the group consume. As in CUDA the library does not choose
     * which threads produce: the caller must make exactly {@code producerCount} threads call only producer
     * operations: any {@code producerCount} threads may produce, each thread's side is taken by its first
     * operation, and a thread that quits before its first operation takes the side the others leave free.
     * Collective; it synchronizes the group twice.
     *
     * @param group         the calling thread's view of the group
     * @param state         the stages' shared state, the same for every rank
     * @param producerCount how many threads produce, in {@code 1..size-1}, the same for every rank
     * @return a new handle, owned by the calling thread
     * @throws IllegalArgumentException (on every rank) when {@code producerCount} is outside {@code 1..size-1},
     *                                  or the ranks disagree on the count, the kind or the shared state
     */
    public static Pipeline make(Group group, PipelineSharedState state, int producerCount) {
        Objects.requireNonNull(group, "group");
        try {
            return new Pipeline(rendezvous(group, state).makeByCount(group, producerCount));
        } catch (InternalError fault) {
            throw RegionFaults.lost(fault, "make of a pipeline over " + state, null, -1);    // a truncated region
        }
    }

    /**
     * {@code cuda::make_pipeline(group, &state, role)}: a partitioned pipeline in which each thread states its
     * own role; the producer and consumer counts are derived from the roles. Collective; it synchronizes the
     * group twice.
     *
     * @param group the calling thread's view of the group
     * @param state the stages' shared state, the same for every rank
     * @param role  this thread's role
     * @return a new handle, owned by the calling thread
     * @throws IllegalArgumentException (on every rank) when all threads chose the same role, a rank passed a
     *                                  null role, or the ranks disagree on the kind or the shared state
     */
    public static Pipeline make(Group group, PipelineSharedState state, PipelineRole role) {
        Objects.requireNonNull(group, "group");
        try {
            return new Pipeline(rendezvous(group, state).makeByRole(group, role));
        } catch (InternalError fault) {
            throw RegionFaults.lost(fault, "make of a pipeline over " + state, null, -1);    // a truncated region
        }
    }

    /** The state's rendezvous; a rank without a state still takes part, so that its peers fail instead of hang. */
    private static PipelineMaker rendezvous(Group group, PipelineSharedState state) {
        if (state == null) {
            throw MakeRendezvous.withoutState(group);
        }
        return state.rendezvous();
    }

    // ---------------------------------------------------------------------------------------------------------
    // Producer side

    /**
     * {@code producer_acquire()}: waits until the head stage is free (every consumer has released its previous
     * batch); the first round never waits. Idempotent until the next commit. Uninterruptible.
     *
     * <p>Memory consistency effects: actions of every consumer before its {@link #consumerRelease()} of the
     * stage's previous batch <i>happen-before</i> actions of the producer after {@code producerAcquire} returns, so
     * the producer may overwrite the stage.
     *
     * @throws IllegalStateException when the thread is not a producer, has quit, would wait for itself, or no
     *                               consumer is left to release the stage
     */
    public void producerAcquire() {
        try {
            handle.producerAcquire();
        } catch (InternalError fault) {
            throw handle.faulted(fault);          // a region truncated under this process
        }
    }

    /**
     * Like {@link #producerAcquire()}, but an interrupt ends the wait. Memory consistency effects as
     * {@link #producerAcquire()}.
     *
     * @throws InterruptedException  when the thread is interrupted on entry, or before the stage is free (the
     *                               interrupt status is cleared; the stage is not acquired), as
     *                               {@code java.util.concurrent}'s interruptible acquires
     * @throws IllegalStateException as {@link #producerAcquire()}
     */
    public void producerAcquireInterruptibly() throws InterruptedException {
        try {
            handle.producerAcquireInterruptibly();
        } catch (InternalError fault) {
            throw handle.faulted(fault);          // a region truncated under this process
        }
    }

    /**
     * {@code producer_commit()}: commits the head stage (its copies included) and advances the head. Never
     * waits for other threads.
     *
     * @throws IllegalStateException when the thread is not a producer, has quit, or has not acquired the stage
     */
    public void producerCommit() {
        try {
            handle.producerCommit();
        } catch (InternalError fault) {
            throw handle.faulted(fault);          // a region truncated under this process
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // Consumer side

    /**
     * {@code consumer_wait()}: waits until every producer has committed the tail stage. Idempotent until the
     * next release. Uninterruptible.
     *
     * <p>Memory consistency effects: actions of every producer before its {@link #producerCommit()} of the batch,
     * and the writes of every {@code memcpyAsync} tied to it, <i>happen-before</i> actions of the consumer after
     * the wait returns.
     *
     * @throws StageFailedException  when a copy tied to the batch failed (the stage stays failed until its release)
     * @throws IllegalStateException when the thread is not a consumer, has quit, would wait for a batch it has
     *                               not committed itself, or no producer is left to commit the stage
     */
    public void consumerWait() {
        try {
            handle.consumerWait();
        } catch (InternalError fault) {
            throw handle.faulted(fault);          // a region truncated under this process
        }
    }

    /**
     * Like {@link #consumerWait()}, but an interrupt ends the wait. Memory consistency effects as
     * {@link #consumerWait()}.
     *
     * @throws InterruptedException  when the thread is interrupted on entry, or before the stage is ready (the
     *                               interrupt status is cleared), as {@code java.util.concurrent}'s interruptible
     *                               waits
     * @throws StageFailedException  as {@link #consumerWait()}
     * @throws IllegalStateException as {@link #consumerWait()}
     */
    public void consumerWaitInterruptibly() throws InterruptedException {
        try {
            handle.consumerWaitInterruptibly();
        } catch (InternalError fault) {
            throw handle.faulted(fault);          // a region truncated under this process
        }
    }

    /**
     * {@code consumer_wait_for(duration)}: {@link #consumerWait()} with a time limit. A ready stage always
     * returns {@code true}; a zero or negative timeout polls once (CUDA waits forever on zero). Does not
     * release: after {@code true}, call {@link #consumerRelease()}. Memory consistency effects as
     * {@link #consumerWait()} when it returns {@code true}.
     *
     * @param timeout the longest time to wait
     * @return whether the stage is ready
     * @throws StageFailedException  as {@link #consumerWait()}
     * @throws IllegalStateException as {@link #consumerWait()}
     */
    public boolean consumerWaitFor(Duration timeout) {
        try {
            return handle.consumerWaitFor(timeout);
        } catch (InternalError fault) {
            throw handle.faulted(fault);          // a region truncated under this process
        }
    }

    /**
     * {@code consumer_wait_until(time_point)}: {@link #consumerWaitFor(Duration)} until {@code deadline}; the
     * remaining time is computed once, on entry, as CUDA does. A past deadline polls once. Memory consistency
     * effects as {@link #consumerWait()} when it returns {@code true}.
     *
     * @param deadline when to give up
     * @return whether the stage is ready
     * @throws StageFailedException  as {@link #consumerWait()}
     * @throws IllegalStateException as {@link #consumerWait()}
     */
    public boolean consumerWaitUntil(Instant deadline) {
        try {
            return handle.consumerWaitUntil(deadline);
        } catch (InternalError fault) {
            throw handle.faulted(fault);          // a region truncated under this process
        }
    }

    /**
     * {@code consumer_release()}: releases the tail stage to the producers and advances the tail. Never waits.
     *
     * @throws IllegalStateException when the thread is not a consumer, has quit, or has not completed a wait
     *                               for the stage
     */
    public void consumerRelease() {
        try {
            handle.consumerRelease();
        } catch (InternalError fault) {
            throw handle.faulted(fault);          // a region truncated under this process
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // Leaving

    /**
     * {@code quit()}: this thread leaves the pipeline. Its future arrivals are dropped from the stage barriers
     * so the remaining threads proceed normally (CUDA only gives up ownership, so peers hang). Exactly one
     * handle of the group gets {@code true}: the last owner to quit. Idempotent per handle: a second call
     * returns {@code false} and changes nothing. A thread-scope pipeline always returns {@code true}.
     *
     * @return whether this handle was the last owner of the pipeline to quit
     */
    public boolean quit() {
        try {
            return handle.quit();
        } catch (InternalError fault) {
            throw handle.faulted(fault);          // a region truncated under this process
        }
    }

    /** The destructor {@code ~pipeline()}: quits if this handle has not quit yet (on the owner's thread). */
    @Override
    public void close() {
        if (handle.isActive()) {
            handle.quit();
        }
    }

    /**
     * Whether this handle has not quit.
     *
     * @return {@code true} until {@link #quit()} or {@link #close()}
     */
    public boolean isActive() {
        return handle.isActive();
    }

    /**
     * The scope of the pipeline.
     *
     * @return {@link ThreadScope#THREAD} for {@link #make()}, else the shared state's scope
     */
    public ThreadScope scope() {
        return handle.scope();
    }

    // ---------------------------------------------------------------------------------------------------------
    // Free functions of the thread-scope pipeline

    /**
     * {@code cuda::pipeline_consumer_wait_prior<prior>(pipe)}: waits until every committed batch except the
     * {@code prior} most recent ones is complete, and releases them ({@code tail = head - prior}). A
     * following {@link #consumerRelease()} is accepted and has no further effect. Defined only for
     * thread-scope pipelines, as in CUDA. Values above 8 behave as 8 (CUDA's hardware limit).
     *
     * <p>Memory consistency effects: the writes of the copies of every batch it waits for <i>happen-before</i>
     * actions of the caller after it returns.
     *
     * @param pipe  a thread-scope pipeline of the calling thread
     * @param prior how many of the most recent committed batches may still be in flight, 0 or more
     * @throws StageFailedException     when a copy of a batch it waits for failed
     * @throws IllegalArgumentException when {@code pipe} is not thread-scope or {@code prior} is negative
     */
    public static void consumerWaitPrior(Pipeline pipe, int prior) {
        threadScope(pipe, "pipeline_consumer_wait_prior").waitPrior(prior);
    }

    /**
     * {@code cuda::pipeline_producer_commit(pipe, barrier)}: ties the calling thread's outstanding copies to
     * {@code barrier}'s current phase, so that the phase cannot complete before they land, without arriving
     * (net zero arrivals), without committing a batch and without moving the head. Defined only for
     * thread-scope pipelines, as in CUDA. With copies that have already landed there is nothing to tie.
     *
     * @param pipe    a thread-scope pipeline of the calling thread
     * @param barrier the barrier whose current phase the copies are tied to
     * @throws IllegalArgumentException when {@code pipe} is not thread-scope
     */
    public static void producerCommit(Pipeline pipe, Barrier barrier) {
        Objects.requireNonNull(barrier, "barrier");
        threadScope(pipe, "pipeline_producer_commit").tieCopiesTo(barrier.phases());
    }

    private static ThreadHandle threadScope(Pipeline pipe, String function) {
        Objects.requireNonNull(pipe, "pipe");
        if (pipe.handle instanceof ThreadHandle t) {
            return t;
        }
        throw new IllegalArgumentException(function + " is defined only for thread-scope pipelines "
            + "(Pipeline.make()), not for a " + pipe.scope() + "-scope pipeline");
    }

    /** The engine's handle: the copy seam used by {@link MemcpyAsync}. */
    PipelineHandle handle() {
        return handle;
    }

    @Override
    public String toString() {
        return handle.toString();
    }
}
