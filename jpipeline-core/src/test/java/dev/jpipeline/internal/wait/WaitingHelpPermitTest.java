package dev.jpipeline.internal.wait;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.jpipeline.WaitStrategy;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.Test;

/**
 * A waiter's help ({@link Waitable#helpProgress}) runs between its last poll and its park. Helping takes the copy
 * engine's {@code ReentrantLock}, and a contended lock parks: that park can consume the unpark of a signal that came
 * meanwhile, so the wait must poll again after helping, whatever the help did. Found as a hang on a 16-core host
 * pinned to 2 CPUs beside a CPU hog (a thread-scope pipeline reading the user's channel: its consumer parked in
 * {@code consumerWait} for a batch that had landed, while the copy worker sat idle).
 */
class WaitingHelpPermitTest {

    /**
     * A condition that a "landing" completes from inside the waiter's second help: it completes, detaches and
     * unparks the waiter's node as a signaller does, and then the help parks on a contended lock, as claimFor's
     * lock.lock() does when a worker holds the queue lock, consuming that unpark. The help itself finds nothing to
     * do and says so (false).
     */
    private static final class SignalDuringHelp implements Waitable {
        volatile boolean done;
        final AtomicReference<Waiter> node = new AtomicReference<>();
        final AtomicInteger helps = new AtomicInteger();
        final ReentrantLock queueLock = new ReentrantLock();

        @Override
        public WaitStatus poll(long token) {
            return done ? WaitStatus.COMPLETE : null;
        }

        @Override
        public void enqueue(Waiter waiter) {
            node.set(waiter);
        }

        @Override
        public void dequeue(Waiter waiter) {
        }

        @Override
        public boolean helpProgress() {
            if (helps.incrementAndGet() == 2) {             // the first help comes before any node is pushed
                Thread waiter = Thread.currentThread();
                Thread holder = Thread.ofPlatform().start(() -> {
                    queueLock.lock();                        // a worker holding the engine's lock...
                    try {
                        done = true;                         // ...that has just landed the awaited copy
                        Waiter w = node.getAndSet(null);
                        if (w != null) {
                            w.detached = true;
                            LockSupport.unpark(w.thread);
                        }
                        // the waiter now blocks on the lock: let it park there before unlocking
                        long until = System.nanoTime() + 5_000_000_000L;
                        while (!queueLock.hasQueuedThread(waiter) && System.nanoTime() - until < 0) {
                            Thread.onSpinWait();
                        }
                    } finally {
                        queueLock.unlock();
                    }
                });
                while (!queueLock.isLocked() && holder.isAlive()) {
                    Thread.onSpinWait();                     // observed: the holder has the lock
                }
                queueLock.lock();                            // contended: parks, and may take the signal's unpark
                queueLock.unlock();
                try {
                    holder.join();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return false;                                    // nothing of the waiter's to perform
        }
    }

    @Test
    void aSignalWhoseUnparkAContendedLockInsideTheHelpTookStillEndsTheWait() throws Exception {
        for (int round = 0; round < 20; round++) {
            SignalDuringHelp waitable = new SignalDuringHelp();
            AtomicReference<WaitStatus> status = new AtomicReference<>();
            Thread waiter = Thread.ofPlatform().start(() -> status.set(
                Waiting.await(waitable, 0, Deadlines.NO_DEADLINE, false, WaitStrategy.BLOCKING, waitable, null)));
            waiter.join(10_000);
            boolean hung = waiter.isAlive();
            if (hung) {
                waitable.done = true;
                LockSupport.unpark(waiter);                  // let the thread end before failing
                waiter.join(10_000);
            }
            assertFalse(hung, "round " + round + ": the wait missed a signal that came during its help");
            assertEquals(WaitStatus.COMPLETE, status.get());
        }
    }
}
