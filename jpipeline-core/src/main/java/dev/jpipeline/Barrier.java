package dev.jpipeline;

import dev.jpipeline.internal.checked.Interleaver;
import dev.jpipeline.internal.wait.Deadlines;
import dev.jpipeline.internal.PhaseBarrier;
import dev.jpipeline.internal.wait.WaitStatus;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;

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
 * <p>Tokens ({@code cuda::barrier::arrival_token}) are opaque: the low 23 bits hold the phase, bits 32-62 an
 * identity of the barrier. So a token of another barrier, a value that is no token, or a token of a phase that
 * has not begun is refused with {@link IllegalArgumentException} instead of returning at once or hanging.
 *
 * <p>Memory consistency effects: actions of a thread before it arrives at a phase happen-before the
 * completion action of that phase, and actions after any wait that observes the phase completed.
 *
 * <p>Differences from CUDA: {@code wait} is {@link #await(long)} ({@code wait} belongs to {@link Object});
 * arrivals beyond the expected count, waits on a barrier that every party has dropped, and a completion action
 * that waits for (or ties a copy to) the phase it completes throw {@link IllegalStateException} instead of being
 * undefined behaviour or hanging. Waits are uninterruptible like CUDA's; {@link #awaitInterruptibly(long)}
 * follows {@code java.util.concurrent} instead. Timed waits follow Java: a zero or negative timeout polls once.
 *
 * <p>Under checked execution a barrier made inside a checked kernel (in its {@code ctx.shared} init, say) tells the
 * launch its arrivals and completed waits, so that accesses it orders are not reported as data races; a barrier
 * made outside the kernel is not seen.
 */
public final class Barrier {

    /** Identities of barriers, for their tokens: spread by a golden-ratio step, never 0. */
    private static final AtomicInteger IDENTITIES = new AtomicInteger();
    private static final long PHASE_BITS = PhaseBarrier.PHASE_MASK;

    private final PhaseBarrier phases;
    /** This barrier's identity in its tokens: 31 bits, never 0. */
    private final long identity;
    /** The checked execution that made it, told of each arrival and completed wait (happens-before); else null. */
    private final Interleaver checked = Interleaver.current();

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
     *                   propagates from the arrival that ran it. It must not wait for the phase it completes.
     * @throws IllegalArgumentException when {@code expected} is out of range
     */
    public Barrier(int expected, Runnable completion) {
        if (expected < 1 || expected > PhaseBarrier.MAX_PARTIES) {
            throw new IllegalArgumentException(
                "Barrier expected count must be in 1.." + PhaseBarrier.MAX_PARTIES + ", got " + expected);
        }
        // Under checked execution the completion runs after every arrival of its phase (CUDA: the arrivals
        // happen-before it), so the thread that runs it acquires the phase's arrivals first.
        PhaseBarrier[] self = new PhaseBarrier[1];
        Interleaver interleaver = checked;
        this.phases = new PhaseBarrier(expected, completion == null || interleaver == null ? completion : () -> {
            interleaver.acquires(self[0], self[0].phase());
            completion.run();
        });
        self[0] = phases;
        int id = IDENTITIES.addAndGet(0x9E3779B9) & 0x7FFFFFFF;
        this.identity = id == 0 ? 1 : id;
    }

    /**
     * {@code cuda::barrier::max()}: the largest expected count, 2^20 - 1 (CUDA's block-scope limit).
     *
     * @return 2^20 - 1
     */
    public static int max() {
        return PhaseBarrier.MAX_PARTIES;
    }

    /**
     * {@code arrive()}: one arrival.
     *
     * @return the token of the phase arrived at
     * @throws IllegalStateException when the phase would receive more arrivals than it expects
     */
    public long arrive() {
        return token(arrived(phases.arriveAsParty(1)));
    }

    /**
     * {@code arrive(update)}: {@code update} arrivals at once.
     *
     * @param update arrivals to make, at least 1
     * @return the token of the phase arrived at
     * @throws IllegalArgumentException when {@code update < 1}
     * @throws IllegalStateException    when the phase would receive more arrivals than it expects (the barrier
     *                                  is left unchanged)
     */
    public long arrive(int update) {
        if (update < 1) {
            throw new IllegalArgumentException("Barrier.arrive update must be at least 1, got " + update);
        }
        return token(arrived(phases.arriveAsParty(update)));
    }

    /**
     * {@code wait(token)}: waits until the phase named by {@code token} has completed (returns at once if it
     * already has). Uninterruptible: an interrupt is remembered and re-asserted on return.
     *
     * <p>Memory consistency effects: actions of every thread before its arrival at a phase <i>happen-before</i>
     * actions that follow a return from a wait that saw that phase complete, as with
     * {@link java.util.concurrent.Phaser}.
     *
     * @param token a token from {@link #arrive()} or {@link #arrive(int)} on this barrier
     * @throws IllegalArgumentException when {@code token} is not a token of this barrier's current or a past phase
     * @throws IllegalStateException    when every party has dropped out, so the phase can never complete, when a
     *                                  copy tied to the phase failed, or when called by the completion action for
     *                                  the phase it completes
     */
    public void await(long token) {
        awaitPhase(phaseOf(token), Deadlines.NO_DEADLINE, false);
    }

    /**
     * Like {@link #await(long)}, but an interrupt ends the wait. Memory consistency effects as {@link #await(long)}.
     *
     * @param token a token from {@link #arrive()} or {@link #arrive(int)} on this barrier
     * @throws InterruptedException     when the thread is interrupted before the phase completes (the interrupt
     *                                  status is cleared)
     * @throws IllegalArgumentException as {@link #await(long)}
     * @throws IllegalStateException    as {@link #await(long)}
     */
    public void awaitInterruptibly(long token) throws InterruptedException {
        int phase = phaseOf(token);
        if (awaitPhase(phase, Deadlines.NO_DEADLINE, true) == WaitStatus.INTERRUPTED) {
            throw new InterruptedException("interrupted while waiting for barrier phase " + phase);
        }
    }

    /**
     * {@code try_wait(token)}: whether the phase named by {@code token} has completed, without waiting. Memory
     * consistency effects as {@link #await(long)} when it returns {@code true}.
     *
     * @param token a token from {@link #arrive()} or {@link #arrive(int)} on this barrier
     * @return whether the phase has completed
     * @throws IllegalArgumentException as {@link #await(long)}
     * @throws IllegalStateException    as {@link #await(long)}
     */
    public boolean tryWait(long token) {
        return awaitPhase(phaseOf(token), Deadlines.POLL_ONCE, false) == WaitStatus.COMPLETE;
    }

    /**
     * {@code try_wait_for(token, duration)}: {@link #await(long)} for at most {@code timeout}; a zero or negative
     * timeout polls once (Java convention; CUDA's zero means no limit). Memory consistency effects as
     * {@link #await(long)} when it returns {@code true}.
     *
     * @param token   a token from {@link #arrive()} or {@link #arrive(int)} on this barrier
     * @param timeout the longest time to wait
     * @return whether the phase has completed
     * @throws IllegalArgumentException as {@link #await(long)}
     * @throws IllegalStateException    as {@link #await(long)}
     */
    public boolean tryWaitFor(long token, Duration timeout) {
        int phase = phaseOf(token);
        return awaitPhase(phase, Deadlines.fromTimeout(timeout), false) == WaitStatus.COMPLETE;
    }

    /**
     * {@code try_wait_until(token, time_point)}: {@link #await(long)} until {@code deadline}; a past deadline
     * polls once. Memory consistency effects as {@link #await(long)} when it returns {@code true}.
     *
     * @param token    a token from {@link #arrive()} or {@link #arrive(int)} on this barrier
     * @param deadline when to give up
     * @return whether the phase has completed
     * @throws IllegalArgumentException as {@link #await(long)}
     * @throws IllegalStateException    as {@link #await(long)}
     */
    public boolean tryWaitUntil(long token, Instant deadline) {
        int phase = phaseOf(token);
        return awaitPhase(phase, Deadlines.fromInstant(deadline), false) == WaitStatus.COMPLETE;
    }

    /**
     * {@code arrive_and_wait()}: arrive, then wait for the phase arrived at to complete. Memory consistency effects
     * as {@link #await(long)}.
     *
     * @throws IllegalStateException as {@link #arrive()} and {@link #await(long)}
     */
    public void arriveAndWait() {
        awaitPhase(arrived(phases.arriveAsParty(1)), Deadlines.NO_DEADLINE, false);
    }

    /**
     * {@code arrive_and_drop()}: arrive at the current phase and be expected one fewer time afterwards.
     *
     * @throws IllegalStateException when the phase would receive more arrivals than it expects
     */
    public void arriveAndDrop() {
        int phase = phases.phase();
        phases.arriveAndDropAsParty();
        arrived(phase);
    }

    /**
     * {@code wait_parity(parity)}: waits until the phase whose parity is {@code parity} (false = even,
     * true = odd) has completed, that is until the current phase has the other parity. Memory consistency effects
     * as {@link #await(long)}.
     *
     * @param parity the parity of the phase to wait for
     * @throws IllegalStateException as {@link #await(long)}
     */
    public void waitParity(boolean parity) {
        int phase = phases.phase();
        if (((phase & 1) == 1) == parity) {
            awaitPhase(phase, Deadlines.NO_DEADLINE, false);
        } else {
            sawCompleted(phase);
        }
    }

    /** A parity wait found the phase before {@code current} complete: checked execution hears of it. */
    private void sawCompleted(int current) {
        if (checked != null) {
            checked.acquires(phases, (current - 1) & PhaseBarrier.PHASE_MASK);
        }
    }

    /**
     * {@code try_wait_parity(parity)} with a time limit: like {@link #waitParity(boolean)}, giving up after
     * {@code timeout}. A zero or negative timeout polls once (Java convention; CUDA's zero means no limit); any
     * positive timeout, however short, is honoured. Memory consistency effects as {@link #await(long)} when it
     * returns {@code true}.
     *
     * @param parity  the parity of the phase to wait for
     * @param timeout the longest time to wait
     * @return whether the phase of that parity has completed
     * @throws IllegalStateException as {@link #await(long)}
     */
    public boolean tryWaitParity(boolean parity, Duration timeout) {
        java.util.Objects.requireNonNull(timeout, "timeout");
        int phase = phases.phase();
        if (((phase & 1) == 1) != parity) {
            sawCompleted(phase);
            return true;
        }
        return awaitPhase(phase, Deadlines.fromTimeout(timeout), false) == WaitStatus.COMPLETE;
    }

    /**
     * Arrivals each phase currently expects (lowered by {@link #arriveAndDrop()}).
     *
     * @return the expected count
     */
    public int expected() {
        return phases.expected();
    }

    /**
     * The current phase's number, counted from 0 modulo 2^23 (a plain number, not a token).
     *
     * @return the phase number
     */
    public long phase() {
        return phases.phase();
    }

    /** The engine's barrier: where {@code memcpyAsync} ties copies. */
    PhaseBarrier phases() {
        return phases;
    }

    /** The current thread arrived at {@code phase}: checked execution hears of it. Returns {@code phase}. */
    private int arrived(int phase) {
        if (checked != null) {
            checked.releases(phases, phase);
        }
        return phase;
    }

    private long token(int phase) {
        return identity << 32 | phase;
    }

    /** The phase a token names, checked against this barrier: its identity, and a phase that has begun. */
    private int phaseOf(long token) {
        if (token >>> 32 != identity || (token & 0xFFFF_FFFFL) > PHASE_BITS) {
            throw new IllegalArgumentException("not an arrival token of this barrier: " + token + " (tokens come "
                + "from this barrier's arrive(); another barrier's token or a phase number is refused)");
        }
        int phase = (int) token;
        int current = phases.phase();
        int lag = (current - phase) & PhaseBarrier.PHASE_MASK;
        if (lag > PhaseBarrier.PHASE_MASK / 2) {
            throw new IllegalArgumentException("arrival token names phase " + phase + ", which has not begun: the "
                + "barrier is at phase " + current);
        }
        return phase;
    }

    private WaitStatus awaitPhase(int phase, long deadline, boolean interruptible) {
        WaitStatus status = phases.await(phase, deadline, interruptible, WaitStrategy.ADAPTIVE, phases, null);
        if (status == WaitStatus.ABANDONED) {
            throw new IllegalStateException("barrier phase " + phase
                + " can never complete: every party has dropped out (arriveAndDrop)");
        }
        if (status == WaitStatus.COMPLETE) {
            if (checked != null) {
                checked.acquires(phases, phase);
            }
            Throwable failure = phases.failureOf(phase);
            if (failure != null) {
                throw new IllegalStateException("a memcpyAsync tied to barrier phase " + phase + " failed: " + failure,
                    failure);
            }
        }
        return status;
    }

    @Override
    public String toString() {
        return "Barrier[" + phases + "]";
    }
}
