package dev.jpipeline.simt;

import dev.jpipeline.copy.CopyEngine;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Watches one kernel launch: which threads live, which are parked in a jpipeline wait, and whether anything is
 * still moving.
 *
 * <pre>
 * A launch is hung when, for the whole patience interval, every live thread is parked in a jpipeline wait
 * (pipeline, barrier, __syncthreads, __syncwarp, grid sync), no thread has woken up, and the copy engine has no
 * copy in flight: then nothing can ever wake them. The launching thread checks this on each tick of its own
 * wait; on a hang (or on a thread's failure) it aborts the launch: every thread still parked is unparked and
 * unwinds with KernelAbortedException, every thread that parks later does too.
 * </pre>
 */
final class LaunchMonitor {

    private final AtomicInteger live = new AtomicInteger();
    private final AtomicInteger blocked = new AtomicInteger();
    /** Counts wake-ups: a hang is declared only if it stays unchanged over the patience interval. */
    private final AtomicLong wakeUps = new AtomicLong();
    private final Queue<KernelThread> threads = new ConcurrentLinkedQueue<>();
    private final Queue<Thread> javaThreads = new ConcurrentLinkedQueue<>();
    /** Set once when the launch is aborted: read by every park of the launch's threads. */
    private volatile String abortReason;

    void started(KernelThread kt, Thread thread) {
        live.incrementAndGet();
        threads.add(kt);
        javaThreads.add(thread);
    }

    void finished(KernelThread kt) {
        kt.finished = true;
        live.decrementAndGet();
    }

    void blocked() {
        blocked.incrementAndGet();
    }

    void unblocked() {
        blocked.decrementAndGet();
        wakeUps.incrementAndGet();
    }

    int live() {
        return live.get();
    }

    long wakeUps() {
        return wakeUps.get();
    }

    /** Whether, right now, every live thread is parked and no copy is in flight. */
    boolean allBlocked() {
        int n = live.get();
        return n > 0 && blocked.get() >= n && CopyEngine.shared().copiesInFlight() == 0
            && threads.stream().filter(t -> !t.finished).allMatch(KernelThread::isBlocked);
    }

    void checkAborted() {
        String reason = abortReason;
        if (reason != null) {
            throw new KernelAbortedException(reason);
        }
    }

    boolean aborted() {
        return abortReason != null;
    }

    /** Aborts the launch: wakes every thread so that it unwinds. */
    void abort(String reason) {
        abortReason = reason;
        for (Thread t : javaThreads) {
            LockSupport.unpark(t);
        }
    }

    /** Where every thread is, one line each (finished threads are summarized). */
    String report() {
        StringBuilder b = new StringBuilder();
        int finished = 0;
        for (KernelThread t : threads) {
            if (t.finished) {
                finished++;
            } else {
                b.append("\n  ").append(t.describe());
            }
        }
        if (finished > 0) {
            b.append("\n  (").append(finished).append(" threads had finished)");
        }
        return b.toString();
    }
}
