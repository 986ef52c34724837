package dev.jpipeline;

import dev.jpipeline.internal.PhaseBarrier;
import dev.jpipeline.internal.WaitStatus;
import java.time.Duration;

/**
 * A split-phase barrier: mirrors {@code cuda::barrier<Scope>} (and {@code std::barrier}).
 *
 * <p>Each phase completes when it has received the expected number of arrivals; then an optional completion
 * action runs (in the last arriving thread, before any waiter is released) and the next phase begins with
 * the arrivals reset. A thread may arrive and wait later with the token {@link #arrive()} returned, or wait
 * for a phase by its parity as {@code cuda::barrier::wait_parity} does.
 *
 * <pre>
 *   arrive() ----&gt; token      await(token)   returns once the phase the token names has completed
 *   arriveAndWait()           arrive, then await
 *   arriveAndDrop()           arrive, and be expected one fewer time in every later phase
 * </pre>
 *
 * <p>Memory consistency effects: actions of a thread before it arrives at a phase happen-before the
 * completion action of that phase, and actions after any wait that observes the phase completed.
 *
 * <p>Differences from CUDA: {@code wait} is {@link #await(long)} ({@code wait} belongs to {@link Object});
 * arrivals beyond the expected count and waits on a barrier that every party has dropped throw
 * {@link IllegalStateException} instead of being undefined behaviour. Waits are uninterruptible like CUDA's;
 * {@link #awaitInterruptibly(long)} follows {@code java.util.concurrent} instead.
 */
public final class Barrier {

    private final PhaseBarrier phases;
    /** The latest failed copy tied to a phase of this barrier, with that phase; published before its arrival. */
    private volatile CopyFailure copyFailure;

    private record CopyFailure(long phase, Throwable cause) {
    }

    /**
     * {@code cuda::barrier<Scope> bar(expected)}.
     *
     * @param expected arrivals per phase, 1 to {@link #max()}
     * @throws IllegalArgumentException when {@code expected} is out of range
     */
    public Barrier(int expected) {
        this(expected, null);
    }

    /**
     * {@code cuda::barrier<Scope, CompletionF> bar(expected, completion)}.
     *
     * @param expected   arrivals per phase, 1 to {@link #max()}
     * @param completion run once per phase by the last arriving thread, before waiters are released;
     *                   {@code null} for none. If it throws, the phase still completes and the exception
     *                   propagates from the arrival that ran it.
     * @throws IllegalArgumentException when {@code expected} is out of range
     */
    public Barrier(int expected, Runnable completion) {
        if (expected < 1 || expected > PhaseBarrier.MAX_PARTIES) {
            throw new IllegalArgumentException(
                "Barrier expected count must be in 1.." + PhaseBarrier.MAX_PARTIES + ", got " + expected);
        }
        this.phases = new PhaseBarrier(expected, completion);
    }

    /** {@code cuda::barrier::max()}: the largest expected count, 2^20 - 1 (CUDA's block-scope limit). */
    public static int max() {
        return PhaseBarrier.MAX_PARTIES;
    }

    /** {@code arrive()}: one arrival. @return the token of the phase arrived at */
    public long arrive() {
        return phases.arrive(1);
    }

    /**
     * {@code arrive(update)}: {@code update} arrivals at once.
     *
     * @return the token of the phase arrived at
     * @throws IllegalArgumentException when {@code update < 1}
     * @throws IllegalStateException    when the phase would receive more arrivals than it expects
     */
    public long arrive(int update) {
        if (update < 1) {
            throw new IllegalArgumentException("Barrier.arrive update must be at least 1, got " + update);
        }
        return phases.arrive(update);
    }

    /**
     * {@code wait(token)}: waits until the phase named by {@code token} has completed (returns at once if it
     * already has). Uninterruptible: an interrupt is remembered and re-asserted on return.
     *
     * @throws IllegalStateException when every party has dropped out, so the phase can never complete
     */
    public void await(long token) {
        finish(phases.await((int) token, PhaseBarrier.NO_DEADLINE, false), token);
    }

    /** Like {@link #await(long)}, but an interrupt ends the wait. */
    public void awaitInterruptibly(long token) throws InterruptedException {
        if (finish(phases.await((int) token, PhaseBarrier.NO_DEADLINE, true), token) == WaitStatus.INTERRUPTED) {
            throw new InterruptedException("interrupted while waiting for barrier phase " + token);
        }
    }

    /** {@code arrive_and_wait()}: arrive, then wait for the phase arrived at to complete. */
    public void arriveAndWait() {
        await(arrive());
    }

    /** {@code arrive_and_drop()}: arrive at the current phase and be expected one fewer time afterwards. */
    public void arriveAndDrop() {
        phases.arriveAndDrop();
    }

    /**
     * {@code wait_parity(parity)}: waits until the phase whose parity is {@code parity} (false = even,
     * true = odd) has completed, that is until the current phase has the other parity.
     */
    public void waitParity(boolean parity) {
        int phase = phases.phase();
        if (((phase & 1) == 1) == parity) {
            await(phase);
        }
    }


    /**
     * {@code try_wait_parity(parity)} with a time limit: like {@link #waitParity(boolean)}, giving up after
     * {@code timeout}. A zero or negative timeout polls once (Java convention; CUDA's zero means no limit).
     *
     * @return whether the phase of that parity has completed
     */
    public boolean tryWaitParity(boolean parity, Duration timeout) {
        int phase = phases.phase();
        if (((phase & 1) == 1) != parity) {
            return true;
        }
        return finish(phases.await(phase, Deadlines.fromTimeout(timeout), false), phase) == WaitStatus.COMPLETE;
    }

    /** Arrivals each phase currently expects (lowered by {@link #arriveAndDrop()}). */
    public int expected() {
        return phases.expected();
    }

    /** The current phase's number, counted from 0 modulo 2^24: the token {@link #arrive()} would return. */
    public long phase() {
        return phases.phase();
    }

    private WaitStatus finish(WaitStatus status, long token) {
        if (status == WaitStatus.ABANDONED) {
            throw new IllegalStateException("barrier phase " + token
                + " can never complete: every party has dropped out (arriveAndDrop)");
        }
        CopyFailure failure = copyFailure;
        if (status == WaitStatus.COMPLETE && failure != null && failure.phase() == (token & PhaseBarrier.PHASE_MASK)) {
            throw new IllegalStateException("a memcpyAsync tied to barrier phase " + token + " failed: "
                + failure.cause(), failure.cause());
        }
        return status;
    }

    /** Ties an asynchronous copy to the current phase, which then cannot complete before it lands. */
    long expectCopy() {
        phases.expectOneMore();
        return phases.phase();
    }

    /** A copy tied by {@link #expectCopy()} to phase {@code phase} has landed (or failed). */
    void copyLanded(long phase, Throwable failure) {
        if (failure != null) {
            copyFailure = new CopyFailure(phase, failure);
        }
        phases.arriveAndDrop();
    }

    @Override
    public String toString() {
        return "Barrier[" + phases + "]";
    }
}
