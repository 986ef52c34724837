package dev.jpipeline.internal;

/**
 * A parked thread in a {@link PhaseBarrier}'s Treiber stack of waiters. A waiter that gives up (time-out,
 * interrupt) clears {@link #thread} so that signallers skip it and later pushes unlink it.
 */
final class Waiter {
    /** Written by the waiter when it gives up, read by signallers: volatile so a cleared node is seen. */
    volatile Thread thread;
    /** Set once before the node is published by a CAS, never changed after: plain. */
    Waiter next;

    Waiter(Thread thread) {
        this.thread = thread;
    }
}
