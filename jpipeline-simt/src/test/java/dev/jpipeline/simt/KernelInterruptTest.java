package dev.jpipeline.simt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.fail;

import dev.jpipeline.Barrier;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A kernel thread's Java interrupt status (the idiom after catching an InterruptedException is
 * {@code Thread.currentThread().interrupt()}) is its own: jpipeline's waits keep it for the kernel code to see and
 * never change how they behave, it ends with the CUDA thread, and no launch spins on it. Before the fix a set status
 * made the runtime's own parks return at once: the waits for the block's turn and an idle strand's wait spun, each
 * holding its virtual-thread carrier, until no carrier was left for the thread holding the turn; the launch, and
 * every later launch in the JVM, hung with no hang report.
 *
 * <p>Each launch runs on its own thread, joined with a bound: a hang fails the test instead of the build.
 */
@Timeout(60)
class KernelInterruptTest {

    private static final long BOUND_SECONDS = 20;

    /** Runs {@code launch} on a daemon thread and fails when it has not ended within the bound. */
    private static void within(String what, Runnable launch) throws InterruptedException {
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread t = Thread.ofPlatform().daemon().name("launch: " + what).start(() -> {
            try {
                launch.run();
            } catch (Throwable e) {
                thrown.set(e);
            }
        });
        t.join(TimeUnit.SECONDS.toMillis(BOUND_SECONDS));
        if (t.isAlive()) {
            fail(what + " did not end within " + BOUND_SECONDS + " s (launcher at "
                + java.util.Arrays.toString(t.getStackTrace()) + ")");
        }
        if (thrown.get() != null) {
            throw new AssertionError(what + " failed", thrown.get());
        }
    }

    /** A later launch in the same JVM works: nothing of the interrupted launch lingers (no carrier is held). */
    private static void laterLaunchesRun() throws InterruptedException {
        AtomicInteger ran = new AtomicInteger();
        within("a plain launch after it", () -> Kernel.launch(Dim3.of(4), Dim3.of(64), 0, ctx -> {
            ctx.syncThreads();
            ran.incrementAndGet();
        }));
        assertEquals(4 * 64, ran.get());
    }

    @Test
    void threadsThatInterruptThemselvesKeepTheirStatusThroughSyncThreadsAndTheLaunchEnds() throws Exception {
        Dim3 grid = Dim3.of(8);     // more blocks than slots: finished threads' strands run later blocks' threads
        Dim3 block = Dim3.of(64);
        AtomicInteger kept = new AtomicInteger();
        AtomicInteger leaked = new AtomicInteger();
        within("a launch whose even threads interrupt themselves", () -> Kernel.launch(grid, block, 0, ctx -> {
            boolean mine = ctx.threadRank() % 2 == 0;
            if (Thread.currentThread().isInterrupted()) {
                leaked.incrementAndGet();   // an interrupt this CUDA thread never got
            }
            if (mine) {
                Thread.currentThread().interrupt();
            }
            ctx.syncThreads();
            ctx.syncWarp();
            ctx.syncThreads();
            if (Thread.currentThread().isInterrupted() != mine) {
                leaked.incrementAndGet();
            } else if (mine) {
                kept.incrementAndGet();
            }
        }));
        assertEquals(0, leaked.get(), "threads that saw an interrupt status not their own, or lost their own");
        assertEquals(grid.volume() * block.volume() / 2, kept.get());
        laterLaunchesRun();
    }

    @Test
    void aFinishedThreadsInterruptStatusEndsWithItAndReachesNoLaterThread() throws Exception {
        // No thread blocks: each slot runs its blocks' threads as calls on one strand, one after another.
        Dim3 grid = Dim3.of(4);
        Dim3 block = Dim3.of(32);
        AtomicInteger leaked = new AtomicInteger();
        within("a launch whose even threads finish interrupted", () -> Kernel.launch(grid, block, 0, ctx -> {
            if (Thread.currentThread().isInterrupted()) {
                leaked.incrementAndGet();
            }
            if (ctx.threadRank() % 2 == 0) {
                Thread.currentThread().interrupt();
            }
        }));
        assertEquals(0, leaked.get(), "threads that started with another thread's interrupt status");
        laterLaunchesRun();
    }

    @Test
    void anInterruptFromOutsideWhileParkedIsKeptAndDoesNotSpin() throws Exception {
        int n = 64;
        AtomicReferenceArray<Thread> parked = new AtomicReferenceArray<>(n);
        AtomicInteger kept = new AtomicInteger();
        within("a launch whose parked threads are interrupted", () -> Kernel.launch(Dim3.of(1), Dim3.of(n), 0, ctx -> {
            int t = ctx.threadRank();
            if (t < n - 1) {
                parked.set(t, Thread.currentThread());
            } else {
                // the last thread starts after every other one has parked in the barrier (one turn at a time,
                // unstarted threads first): it interrupts them where they wait for the turn
                for (int r = 0; r < n - 1; r++) {
                    parked.get(r).interrupt();
                }
            }
            ctx.syncThreads();
            if (t < n - 1 && Thread.currentThread().isInterrupted()) {
                kept.incrementAndGet();
            }
        }));
        assertEquals(n - 1, kept.get(), "interrupted threads that still saw their status after the barrier");
        laterLaunchesRun();
    }

    @Test
    void anIdleStrandInterruptedFromOutsideDropsTheInterruptAndDoesNotSpin() throws Exception {
        int n = 64;
        AtomicReferenceArray<Thread> strands = new AtomicReferenceArray<>(n);
        AtomicInteger laterThreadsRan = new AtomicInteger();
        within("a launch whose finished threads' strands are interrupted", () -> Kernel.launch(Dim3.of(1),
            Dim3.of(n), 0, ctx -> {
                Barrier finished = ctx.shared("finished", () -> new Barrier(n));
                int t = ctx.threadRank();
                strands.set(t, Thread.currentThread());
                ctx.syncThreads();              // every thread blocks once: each keeps a strand of its own
                if (t < n - 1) {
                    finished.arrive();          // then finishes: its strand goes idle (no thread is left to start)
                    return;
                }
                finished.arriveAndWait();       // the others have all finished
                for (int r = 0; r < n - 1; r++) {
                    strands.get(r).interrupt();
                }
                Thread.yield();                 // needs a carrier again: none is left if the idle strands spin
                laterThreadsRan.incrementAndGet();
            }));
        assertEquals(1, laterThreadsRan.get());
        laterLaunchesRun();
    }

    @Test
    void checkedExecutionKeepsTheStatusAtEverySchedulingPoint() throws Exception {
        int n = 16;
        AtomicReference<Exploration<Integer>> explored = new AtomicReference<>();
        within("checked launches whose threads interrupt themselves", () -> explored.set(
            CheckedExecution.explore(20, 1, () -> {
                AtomicInteger kept = new AtomicInteger();
                Kernel.launch(Dim3.of(2), Dim3.of(n), 0, ctx -> {
                    MemorySegment s = ctx.sharedArray("s", 4L * n);
                    int t = ctx.threadRank();
                    Thread.currentThread().interrupt();
                    ctx.storeInt(s, t, t);              // scheduling points, with the status set
                    ctx.syncThreads();
                    int mirror = ctx.loadInt(s, n - 1 - t);
                    ctx.syncThreads();
                    if (mirror == n - 1 - t && Thread.currentThread().isInterrupted()) {
                        kept.incrementAndGet();
                    }
                });
                return kept.get();
            })));
        Exploration<Integer> e = explored.get();
        assertNull(e.finding(), () -> "finding: " + e.finding());
        assertEquals(20, e.schedulesRun());
        assertEquals(2 * n, e.firstResult(), "threads that read their mirror and still saw their status");
        laterLaunchesRun();
    }
}
