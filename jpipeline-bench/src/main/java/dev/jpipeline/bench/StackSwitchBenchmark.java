package dev.jpipeline.bench;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What one switch between two CUDA threads' stacks costs on the JVM: the floor under every block-scheduler design
 * (issue 11). A ring of 128 stacks (a block of 128 threads) passes one turn around 1,000 times; the score is
 * nanoseconds per switch.
 *
 * <ul>
 *   <li>{@code virtualThreadHandOff}: 128 virtual threads; the holder sets the next holder, unparks it and parks:
 *       the default block scheduler's switch (no JVM flags), on the default scheduler;</li>
 *   <li>{@code virtualThreadHandOffOneCarrier}: the same with one carrier thread
 *       ({@code -Djdk.virtualThreadScheduler.parallelism=1}), so that no switch crosses cores;</li>
 *   <li>{@code continuationYieldRun}: 128 {@code jdk.internal.vm.Continuation}s run in turn by one thread, each
 *       yielding back at once: the opt-in fast path a block scheduler could take with
 *       {@code --add-exports java.base/jdk.internal.vm=ALL-UNNAMED} (called through method handles, so that the
 *       benchmark compiles without the flag).</li>
 * </ul>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--add-exports=java.base/jdk.internal.vm=ALL-UNNAMED")
public class StackSwitchBenchmark {

    static final int STACKS = 128;
    static final int ROUNDS = 1000;

    @Benchmark
    @OperationsPerInvocation(STACKS * ROUNDS)
    public int virtualThreadHandOff() throws InterruptedException {
        return handOffRing();
    }

    @Benchmark
    @OperationsPerInvocation(STACKS * ROUNDS)
    @Fork(value = 1, jvmArgsAppend = "-Djdk.virtualThreadScheduler.parallelism=1")
    public int virtualThreadHandOffOneCarrier() throws InterruptedException {
        return handOffRing();
    }

    /** One turn passes around a ring of virtual threads, {@link #ROUNDS} times. */
    private static int handOffRing() throws InterruptedException {
        Thread[] ring = new Thread[STACKS];
        int[] holder = new int[1];
        VolatileInt turn = new VolatileInt();
        for (int i = 0; i < STACKS; i++) {
            int me = i;
            ring[i] = Thread.ofVirtual().unstarted(() -> {
                for (int r = 0; r < ROUNDS; r++) {
                    while (turn.value != me) {
                        LockSupport.park();
                    }
                    holder[0]++;
                    int next = (me + 1) % STACKS;
                    turn.value = next;
                    LockSupport.unpark(ring[next]);
                }
            });
        }
        for (Thread t : ring) {
            t.start();
        }
        for (Thread t : ring) {
            t.join();
        }
        return holder[0];
    }

    /** The turn of the ring: volatile, so that a woken thread sees it. */
    static final class VolatileInt {
        volatile int value;
    }

    @Benchmark
    @OperationsPerInvocation(STACKS * ROUNDS)
    public int continuationYieldRun() throws Throwable {
        Object[] ring = new Object[STACKS];
        int[] count = new int[1];
        for (int i = 0; i < STACKS; i++) {
            ring[i] = Continuations.NEW.invoke(Continuations.SCOPE, (Runnable) () -> {
                for (int r = 0; r < ROUNDS; r++) {
                    count[0]++;
                    try {
                        Continuations.YIELD.invoke(Continuations.SCOPE);
                    } catch (Throwable t) {
                        throw new IllegalStateException(t);
                    }
                }
            });
        }
        for (int r = 0; r <= ROUNDS; r++) {         // the last round lets every body return
            for (Object c : ring) {
                Continuations.RUN.invoke(c);
            }
        }
        return count[0];
    }

    /** {@code jdk.internal.vm.Continuation}, through method handles (needs the package exported at run time). */
    static final class Continuations {
        static final Object SCOPE;
        static final MethodHandle NEW;
        static final MethodHandle RUN;
        static final MethodHandle YIELD;

        static {
            try {
                Class<?> cont = Class.forName("jdk.internal.vm.Continuation");
                Class<?> scope = Class.forName("jdk.internal.vm.ContinuationScope");
                MethodHandles.Lookup lookup = MethodHandles.lookup();
                SCOPE = lookup.findConstructor(scope, MethodType.methodType(void.class, String.class))
                    .invoke("kernel block");
                NEW = lookup.findConstructor(cont, MethodType.methodType(void.class, scope, Runnable.class))
                    .asType(MethodType.methodType(Object.class, Object.class, Runnable.class));
                RUN = lookup.findVirtual(cont, "run", MethodType.methodType(void.class))
                    .asType(MethodType.methodType(void.class, Object.class));
                YIELD = lookup.findStatic(cont, "yield", MethodType.methodType(boolean.class, scope))
                    .asType(MethodType.methodType(boolean.class, Object.class));
            } catch (Throwable t) {
                throw new ExceptionInInitializerError("jdk.internal.vm.Continuation is not accessible: run with "
                    + "--add-exports=java.base/jdk.internal.vm=ALL-UNNAMED (" + t + ")");
            }
        }
    }
}
