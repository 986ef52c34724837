package dev.jpipeline.bench;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.jpipeline.internal.wait.Deadlines;
import dev.jpipeline.internal.process.Futex;
import dev.jpipeline.internal.process.ProcessWaiting;
import dev.jpipeline.internal.wait.WaitStatus;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * How the two sides of {@link CrossProcessWakeBenchmark}'s ping-pong wait for a word of a mapped file to reach a
 * round number, and tell the other side that it did. A wait gives up (throws) once {@code alive} says the other
 * side is gone, looked at every second or so, so that a dead partner fails the run instead of hanging it.
 */
public enum PingPongWait {
    /** Spin with {@code Thread.onSpinWait} until the word changes; the waker only stores. */
    SPIN {
        @Override
        void await(MemorySegment words, long offset, int round, BooleanSupplier alive) {
            for (int spins = 1; !reached(words, offset, round); spins++) {
                Thread.onSpinWait();
                if ((spins & ((1 << 24) - 1)) == 0 && !alive.getAsBoolean()) {
                    throw gone(round);
                }
            }
        }

        @Override
        void publish(MemorySegment words, long offset, int round) {
            VALUE.setRelease(words, offset, round);
        }
    },
    /** Sleep in FUTEX_WAIT at once, no spinning; the waker always makes the FUTEX_WAKE call. */
    FUTEX {
        @Override
        void await(MemorySegment words, long offset, int round, BooleanSupplier alive) {
            for (int v; (v = (int) VALUE.getVolatile(words, offset)) != round && v != STOP; ) {
                if (Futex.wait(words, offset, v, TIMEOUT) == Futex.WaitOutcome.TIMED_OUT && !alive.getAsBoolean()) {
                    throw gone(round);
                }
            }
        }

        @Override
        void publish(MemorySegment words, long offset, int round) {
            VALUE.setRelease(words, offset, round);
            Futex.wake(words, offset, Integer.MAX_VALUE);
        }
    },
    /** {@link ProcessWaiting}: spin, yield, then futex; the waker calls the futex only when a waiter is counted. */
    PROCESS_WAITING {
        @Override
        void await(MemorySegment words, long offset, int round, BooleanSupplier alive) {
            WaitStatus status = ProcessWaiting.await(words, offset, v -> v == round || v == STOP,
                Deadlines.NO_DEADLINE, false, TIMEOUT, () -> {
                    if (!alive.getAsBoolean()) {
                        throw gone(round);
                    }
                });
            if (status != WaitStatus.COMPLETE) {
                throw new IllegalStateException("the wait for round " + round + " ended " + status);
            }
        }

        @Override
        void publish(MemorySegment words, long offset, int round) {
            VALUE.setRelease(words, offset, round);
            ProcessWaiting.wakeAll(words, offset);
        }
    };

    /** The value that tells a waiting partner to stop. */
    static final int STOP = Integer.MIN_VALUE;
    /** The first side's word (ping), then the partner's (pong): wait words of {@link ProcessWaiting#WORD_BYTES}. */
    static final long PING = 0;
    static final long PONG = 64;
    /** Bytes of the mapped file: the two words on lines of their own. */
    static final long FILE_BYTES = 128;

    private static final long TIMEOUT = TimeUnit.SECONDS.toNanos(1);
    private static final VarHandle VALUE = JAVA_INT.varHandle();

    /** Waits until the word at {@code offset} holds {@code round} (or {@link #STOP}). */
    abstract void await(MemorySegment words, long offset, int round, BooleanSupplier alive);

    /** Stores {@code round} into the word at {@code offset} and wakes its waiter. */
    abstract void publish(MemorySegment words, long offset, int round);

    /** Whether the word at {@code offset} holds {@code round} or {@link #STOP}. */
    static boolean reached(MemorySegment words, long offset, int round) {
        int v = (int) VALUE.getVolatile(words, offset);
        return v == round || v == STOP;
    }

    /** The partner's side: answers each round on {@link #PING} on {@link #PONG}, until {@link #STOP}. */
    void serve(MemorySegment words, BooleanSupplier alive) {
        for (int round = 1; ; round++) {
            await(words, PING, round, alive);
            if ((int) VALUE.getVolatile(words, PING) == STOP) {
                return;
            }
            publish(words, PONG, round);
        }
    }

    private static IllegalStateException gone(int round) {
        return new IllegalStateException("the other side is gone; waited for round " + round);
    }
}
