package dev.jpipeline.internal;

import java.util.List;

/**
 * Leaves, every {@link #PERIOD_NANOS}, for this process's region handles whose thread ended without quit: a daemon
 * thread that runs while any region handle of the process is live. Other processes cannot see this process's
 * threads, and this process's own waiters (RegionReaper) look only while one of them waits: without this, a consumer
 * in another process would wait forever for a producer thread here that ended while nothing here waited.
 *
 * <pre>
 * Start and stop: a handle is listed (RegionLocals) before watching() is called; the watch stops only when, under
 * the lock, it finds no handle listed, and watching() starts one, under the same lock, when none runs. So a handle
 * listed while the watch is stopping either is seen by its last look or starts the next watch.
 * A leave that fails (a corrupted region word) is left to the waiters, which report it; the watch goes on.
 * </pre>
 */
final class EndedThreadWatch {

    /** How often the watch looks: as often as a region waiter looks for dead processes. */
    static final long PERIOD_NANOS = SharedWord.CHECK_NANOS;

    private static final Object LOCK = new Object();
    /** Whether a watch thread runs. Guarded by LOCK. */
    private static boolean running;

    private EndedThreadWatch() {
    }

    /** A region handle was listed: makes sure a watch runs. */
    static void watching() {
        synchronized (LOCK) {
            if (!running) {
                running = true;
                Thread.ofPlatform().daemon().name("jpipeline-region-ended-threads").start(EndedThreadWatch::run);
            }
        }
    }

    private static void run() {
        while (true) {
            java.util.concurrent.locks.LockSupport.parkNanos(PERIOD_NANOS);
            List<RegionLocals> all = RegionLocals.all();
            for (RegionLocals locals : all) {
                try {
                    locals.abandonEnded();
                } catch (RuntimeException | InternalError e) {
                    // a corrupted or truncated region: its waiters report it, the watch goes on for the others
                }
            }
            synchronized (LOCK) {
                if (RegionLocals.none()) {
                    running = false;
                    return;
                }
            }
        }
    }

}
