package dev.jpipeline.internal;

import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * A parked thread in a {@link Waitable}'s Treiber stack of waiters, and the two stack operations every waitable
 * shares. A waiter that gives up (time-out, interrupt, hang report) clears {@link #thread} so that signallers
 * skip it and later pushes unlink it.
 *
 * <pre>
 * Wake-ups are never lost (the Dekker pattern): a waiter pushes its node (volatile CAS), then polls the condition
 * (volatile read) before parking; a signaller changes the condition (volatile write or CAS), then reads the stack
 * (volatile read). At least one of the two sees the other's write.
 * </pre>
 */
public final class Waiter {
    /** Written by the waiter when it gives up, read by signallers: volatile, so that a cleared node is skipped. */
    volatile Thread thread;
    /** Set once before the node is published by a CAS, never changed after: plain. */
    Waiter next;

    Waiter(Thread thread) {
        this.thread = thread;
    }

    /**
     * Pushes {@code node} on the stack whose head {@code head} accesses in {@code holder}, first unlinking given-up
     * nodes at the top, so that a polling loop cannot grow the stack without bound.
     */
    static void push(VarHandle head, Object holder, Waiter node) {
        for (;;) {
            Waiter top = (Waiter) head.getVolatile(holder);
            while (top != null && top.thread == null) {
                Waiter next = top.next;
                top = head.compareAndSet(holder, top, next) ? next : (Waiter) head.getVolatile(holder);
            }
            node.next = top;
            if (head.compareAndSet(holder, top, node)) {
                return;
            }
        }
    }

    /** Detaches the whole stack and unparks every waiter still waiting. */
    static void signalAll(VarHandle head, Object holder) {
        for (Waiter w = (Waiter) head.getAndSet(holder, (Waiter) null); w != null; w = w.next) {
            Thread t = w.thread;
            if (t != null) {
                LockSupport.unpark(t);
            }
        }
    }
}
