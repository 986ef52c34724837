package dev.jpipeline.internal;

import dev.jpipeline.internal.copy.CopyWorkers;
import dev.jpipeline.internal.wait.Waiting;
import java.util.Iterator;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The one hang detector of jpipeline: a pipeline's (core) and a kernel launch's (SIMT) both use it.
 *
 * <pre>
 * Participants are the threads that can move the watched thing forward: a pipeline's handles, a launch's CUDA
 * threads. The thing is hung when, for half the patience,
 *   - every participant is stuck: waiting in it (stalledIn() != null), gone (quit, finished), or faulted (it got
 *     a misuse exception and has not waited since);
 *   - at least one participant is waiting;
 *   - no copy is in flight in any copy engine (a landing copy is progress);
 *   - the progress signature (a pipeline's barrier words; a launch's wake-up count) has not changed.
 * A participant whose thread has ended without leaving is first abandoned on its behalf (a pipeline handle quits,
 * failing a stage it held): that is progress, and the peers see it instead of a hang report.
 *
 * check() is called only from slow paths: by a waiter whose wait has stalled (a quarter of the patience, then
 * every quarter; see Waiting), or by a launch's watching thread. Waits shorter than that never reach it, so the
 * detector costs nothing on the fast path. A report, once made, is final: every later check returns it.
 *
 * Registering is O(1) (a launch registers every CUDA thread it starts, 262,144 for a 1024 x 256 grid), and a
 * check forgets the participants that have left, counting them for the report: a gone participant is stuck for
 * good and needs no abandoning, so dropping it changes no verdict, and a check costs O(participants present).
 * </pre>
 */
public final class HangDetector {

    /** One thread's part in what the detector watches. Its methods are called from other threads. */
    public interface Participant {

        /** The thread that acts for this participant, or null while it has none yet. */
        Thread thread();

        /** Whether it has left (quit, finished): nobody waits for it any more. */
        boolean isGone();

        /** What it waits for, while one of its waits has stalled; else null. */
        String stalledIn();

        /** The misuse exception it got and has not recovered from (it has not waited since), or null. */
        Throwable fault();

        /**
         * Whether the thread acting for it has ended (by default: its Java thread is no longer alive). The ending
         * happens-before a true answer, so its state is readable when {@link #abandon()} runs.
         */
        default boolean ownerEnded() {
            Thread t = thread();
            return t != null && !t.isAlive();
        }

        /** Its thread has ended without leaving: leave on its behalf. Called at most once. */
        void abandon();

        /** One line for the report: who it is. */
        String name();
    }

    private final long patienceNanos;
    private final String headline;
    private final LongSupplier progress;
    private final Supplier<String> state;
    /** Participants not yet seen gone by a check (weakly consistent iteration; register may run concurrently). */
    private final Queue<Participant> participants = new ConcurrentLinkedQueue<>();
    /** Guarded by this: participants a check found gone and dropped, for the report's count. */
    private int left;

    /** Guarded by this: when every participant was first seen stuck (0: not stuck), and the signature then. */
    private long stuckSince;
    private long signature;
    /** The report, once made: final. Volatile for the watching threads' cheap look. */
    private volatile String report;

    /**
     * @param patienceNanos how long a hang must persist before it is reported (see the class description)
     * @param headline      the report's first words ("pipeline deadlock: every thread of the UNIFIED pipeline of
     *                      4 threads is stuck")
     * @param progress      a signature that changes whenever the watched thing moves
     * @param state         the watched thing's state, appended to the report
     */
    public HangDetector(long patienceNanos, String headline, LongSupplier progress, Supplier<String> state) {
        if (patienceNanos <= 0) {
            throw new IllegalArgumentException("hang detection patience must be positive, got " + patienceNanos
                + " ns");
        }
        this.patienceNanos = patienceNanos;
        this.headline = headline;
        this.progress = progress;
        this.state = state;
    }

    /** How long a hang must persist before it is reported. */
    public long patienceNanos() {
        return patienceNanos;
    }

    /** Adds a participant. */
    public void register(Participant p) {
        participants.add(p);
    }

    /** The report, if a hang has been declared. */
    public String report() {
        return report;
    }

    /**
     * Looks once: abandons participants whose threads have ended, then declares a hang if the watched thing has
     * been stuck for half the patience.
     *
     * @return the hang report, or null while there is none
     */
    public synchronized String check() {
        if (report != null) {
            return report;
        }
        boolean abandoned = false;
        for (Iterator<Participant> it = participants.iterator(); it.hasNext(); ) {
            Participant p = it.next();
            if (p.isGone() && p.stalledIn() == null) {
                it.remove();            // left for good: stuck, never waiting again (see the class comment)
                left++;
            } else if (!p.isGone() && p.ownerEnded()) {
                p.abandon();            // the ending happens-before ownerEnded(): its state is readable
                abandoned = true;
            }
        }
        if (abandoned || !allStuck() || CopyWorkers.copiesInFlight() > 0) {
            stuckSince = 0;
            return null;
        }
        long now = System.nanoTime();
        long sig = progress.getAsLong();
        if (stuckSince == 0 || sig != signature) {
            stuckSince = now;
            signature = sig;
            return null;
        }
        if (now - stuckSince < patienceNanos / 2) {
            return null;
        }
        report = describe(now - stuckSince);
        for (Participant p : participants) {
            Thread t = p.thread();
            if (t != null) {
                java.util.concurrent.locks.LockSupport.unpark(t);     // waiting participants see it at once
            }
        }
        return report;
    }

    private boolean allStuck() {
        boolean someoneWaits = false;
        for (Participant p : participants) {
            if (p.stalledIn() != null) {
                someoneWaits = true;
            } else if (!p.isGone() && p.fault() == null) {
                return false;           // running: it may still act
            }
        }
        return someoneWaits;
    }

    private String describe(long stuckNanos) {
        StringBuilder b = new StringBuilder(headline).append(" and nothing has changed for ")
            .append(stuckNanos / 1_000_000).append(" ms:");
        int gone = left;
        for (Participant p : participants) {
            String waiting = p.stalledIn();
            Throwable fault = p.fault();
            if (waiting == null && p.isGone()) {
                gone++;
                continue;
            }
            b.append("\n  ").append(p.name()).append(": ");
            if (waiting != null) {
                b.append(waiting);
            } else if (fault != null) {
                b.append("got ").append(fault).append(" and has not used the pipeline since");
            } else {
                b.append("running");
            }
        }
        if (gone > 0) {
            b.append("\n  (").append(gone).append(gone == 1 ? " has" : " have").append(" left)");
        }
        String s = state.get();
        if (s != null && !s.isEmpty()) {
            b.append("\n  ").append(s);
        }
        return b.toString();
    }
}
