package dev.jpipeline;

import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.StressOptions;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.junit.jupiter.api.Test;

/**
 * Model checking of {@link Barrier}: arrivals (one or two at once), arrive-and-drop, {@code tryWait} with the
 * caller's own last token, {@code phase()} and {@code expected()}, in any order on any thread, are linearizable
 * against {@link Spec}. Misuse is part of the contract: an over-arrival and a wait for a phase that every party
 * has dropped must throw {@link IllegalStateException} exactly when the specification does.
 *
 * <p>Tokens carry an identity of their barrier, different in every instance, so {@code arrive} reports only the
 * phase part of its token; the token itself is kept per Lincheck thread for that thread's later {@code tryWait}.
 */
@Param(name = "thread", gen = ThreadIdGen.class)
@Param(name = "update", gen = IntGen.class, conf = "1:2")
public class BarrierLincheckTest {

    private static final long NO_TOKEN = -1;
    private static final int THREADS = 3;

    private final Barrier barrier = new Barrier(2);
    /** Per Lincheck thread (0 initial part, 1..THREADS parallel, THREADS + 1 final part): its last token. */
    private final long[] tokens = filled(THREADS + 2, NO_TOKEN);

    @Operation
    public int arrive(@Param(name = "thread") int thread, @Param(name = "update") int update) {
        long token = update == 1 ? barrier.arrive() : barrier.arrive(update);
        tokens[thread] = token;
        return (int) token & 0xFF_FFFF;
    }

    @Operation
    public void arriveAndDrop() {
        barrier.arriveAndDrop();
    }

    @Operation
    public Boolean tryWait(@Param(name = "thread") int thread) {
        long token = tokens[thread];
        return token == NO_TOKEN ? null : barrier.tryWait(token);
    }

    @Operation
    public long phase() {
        return barrier.phase();
    }

    @Operation
    public int expected() {
        return barrier.expected();
    }

    @Test
    void modelChecking() {
        new ModelCheckingOptions()
            .iterations(12)
            .invocationsPerIteration(200)
            .threads(2)
            .actorsPerThread(3)
            .actorsBefore(1)
            .actorsAfter(1)
            .sequentialSpecification(Spec.class)
            .check(BarrierLincheckTest.class);
    }

    @Test
    void stress() {
        new StressOptions()
            .iterations(5)
            .invocationsPerIteration(1_000)
            .threads(THREADS)
            .actorsPerThread(3)
            .actorsBefore(1)
            .actorsAfter(1)
            .sequentialSpecification(Spec.class)
            .check(BarrierLincheckTest.class);
    }

    private static long[] filled(int n, long value) {
        long[] a = new long[n];
        java.util.Arrays.fill(a, value);
        return a;
    }

    /** {@code cuda::barrier}, sequentially. */
    public static final class Spec {
        private int phase;
        private int expected = 2;
        private int arrived;
        private final int[] tokens = {-1, -1, -1, -1, -1};

        public int arrive(int thread, int update) {
            if (arrived + update > expected) {
                throw new IllegalStateException("over-arrival");
            }
            tokens[thread] = phase;
            arrived += update;
            completeIfFull();
            return tokens[thread];
        }

        public void arriveAndDrop() {
            if (arrived >= expected) {
                throw new IllegalStateException("no party left to drop");
            }
            expected--;
            completeIfFull();
        }

        public Boolean tryWait(int thread) {
            int token = tokens[thread];
            if (token < 0) {
                return null;
            }
            if (token != phase) {
                return true;
            }
            if (expected == 0) {
                throw new IllegalStateException("every party has dropped out");
            }
            return false;
        }

        public long phase() {
            return phase;
        }

        public int expected() {
            return expected;
        }

        private void completeIfFull() {
            if (arrived == expected) {
                phase++;
                arrived = 0;
            }
        }
    }
}
