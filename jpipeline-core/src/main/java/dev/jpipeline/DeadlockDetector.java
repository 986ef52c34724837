package dev.jpipeline;

import dev.jpipeline.internal.PhaseBarrier;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Opt-in hang diagnosis for one pipeline ({@link PipelineSharedState.Builder#detectDeadlocks}).
 *
 * <pre>
 * A pipeline whose threads keep to their roles cannot deadlock on its own: a consumer waiting for batch b
 * waits for a producer stuck acquiring an earlier batch, which waits for a consumer stuck on a batch at least S
 * earlier, and so on down to the first round, which never waits (unified threads that would wait for themselves
 * are refused outright). So when every participant is stuck, one of them has left without saying so: its
 * thread ended without quit(), or it blocks somewhere outside the pipeline forever.
 *
 * Each handle reports here only on its slow path: a wait that has parked for the patience interval marks its
 * rank as stalled (with what it waits for) and asks check(); quit() marks the rank as gone. check() declares a
 * deadlock when every rank is stalled, has quit, or belongs to a thread that is no longer alive, and no stage
 * barrier has changed over one more patience interval (the stalled caller's previous look). Then every stalled
 * thread gets an IllegalStateException with the same report instead of waiting forever.
 * </pre>
 */
final class DeadlockDetector {

    /** Status of a rank that has quit. */
    private static final String QUIT = "has quit";

    private final long patienceNanos;
    /** Per rank: the thread that owns the handle; set once when the handle is made. */
    private final AtomicReferenceArray<Thread> owners;
    /** Per rank: null while running, what it waits for while stalled, or {@link #QUIT}. */
    private final AtomicReferenceArray<String> status;

    DeadlockDetector(long patienceNanos, int groupSize) {
        this.patienceNanos = patienceNanos;
        this.owners = new AtomicReferenceArray<>(groupSize);
        this.status = new AtomicReferenceArray<>(groupSize);
    }

    long patienceNanos() {
        return patienceNanos;
    }

    void register(int rank, Thread owner) {
        owners.set(rank, owner);
    }

    void stalled(int rank, String waitingFor) {
        status.set(rank, waitingFor);
    }

    void resumed(int rank) {
        status.set(rank, null);
    }

    void quit(int rank) {
        status.set(rank, QUIT);
    }

    /**
     * Called by a stalled thread after each patience interval.
     *
     * @param before the barrier snapshot of this thread's previous look, or null
     * @return the snapshot to pass next time (null when some rank is still running)
     * @throws IllegalStateException when the pipeline is deadlocked
     */
    long[] check(StageRing ring, long[] before) {
        for (int rank = 0; rank < owners.length(); rank++) {
            if (status.get(rank) == null) {
                Thread owner = owners.get(rank);
                if (owner == null || owner.isAlive()) {
                    return null;
                }
            }
        }
        long[] now = snapshot(ring);
        if (before != null && Arrays.equals(before, now)) {
            throw new IllegalStateException(report(ring));
        }
        return now;
    }

    private static long[] snapshot(StageRing ring) {
        int stages = ring.produced.length;
        long[] words = new long[2 * stages];
        for (int s = 0; s < stages; s++) {
            words[2 * s] = ring.produced[s].snapshot();
            words[2 * s + 1] = ring.consumed[s].snapshot();
        }
        return words;
    }

    private String report(StageRing ring) {
        StringBuilder b = new StringBuilder("pipeline deadlock: every thread of the ").append(ring.kind)
            .append(" pipeline is stuck and no stage has changed for ").append(patienceNanos / 1_000_000)
            .append(" ms");
        for (int rank = 0; rank < owners.length(); rank++) {
            String s = status.get(rank);
            b.append("\n  rank ").append(rank).append(": ")
                .append(s != null ? s : "its thread " + owners.get(rank).getName() + " has ended without quit()");
        }
        for (int s = 0; s < ring.produced.length; s++) {
            PhaseBarrier p = ring.produced[s];
            PhaseBarrier c = ring.consumed[s];
            b.append("\n  stage ").append(s).append(": produced phase ").append(p.phase()).append(" has ")
                .append(p.arrived()).append('/').append(p.expected()).append(" commits, consumed phase ")
                .append(c.phase()).append(" has ").append(c.arrived()).append('/').append(c.expected())
                .append(" releases");
        }
        return b.toString();
    }
}
