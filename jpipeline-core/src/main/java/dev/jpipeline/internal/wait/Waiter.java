package dev.jpipeline.internal.wait;

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
    /** Written by the waiter when its wait ends, read by signallers: volatile, so that a cleared node is skipped. */
    volatile Thread thread;
    /**
     * The next node down the stack: set before the node is published by a CAS; later only shortened by
     * {@link #sweep} past cleared nodes. Volatile, so that a signaller walking a detached stack sees a sweep's
     * shortcut whole (a racing sweep may leave a cleared node in, never drop a live one).
     */
    volatile Waiter next;
    /** Set by the signaller that detached this node from its stack, before it unparks the waiter. */
    volatile boolean detached;
    /** Wakes the waiter instead of {@link LockSupport#unpark}: the waiter's park listener, or null. */
    private final ParkListener wakeVia;
    /** Whether the waiter holds no Java stack ({@link #stackless}): only a signal's wakeVia call resumes it. */
    private final boolean stackless;

    Waiter(Thread thread, ParkListener wakeVia) {
        this(thread, wakeVia, false);
    }

    private Waiter(Thread thread, ParkListener wakeVia, boolean stackless) {
        this.thread = thread;
        this.wakeVia = wakeVia;
        this.stackless = stackless;
    }

    /**
     * A node for a wait that holds no Java stack (a compiled SIMT thread suspended at a sync: see jpipeline-simt's
     * BlockScheduler): a signal calls {@code wakeVia.wake} with the current thread, the one that pushes it, which
     * stands for the waiter only as a mark that it still waits. Push it with {@link Waitable#enqueue}, then poll
     * again before giving the stack up (the Dekker pattern above).
     */
    public static Waiter stackless(ParkListener wakeVia) {
        return new Waiter(Thread.currentThread(), java.util.Objects.requireNonNull(wakeVia, "wakeVia"), true);
    }

    /** Whether this node stands for a wait that holds no Java stack ({@link #stackless}). */
    public boolean isStackless() {
        return stackless;
    }

    /** The node below this one on its stack, or null (for tests and diagnostics: a snapshot, racy). */
    public Waiter below() {
        return next;
    }

    /** Whether a signal has taken this node off its stack: its wait's condition has changed since it was pushed. */
    public boolean isDetached() {
        return detached;
    }

    /** The wait no longer needs this node: signallers skip it, and a later push unlinks it. */
    public void cancel() {
        thread = null;
    }

    /**
     * Pushes {@code node} on the stack whose head {@code head} accesses in {@code holder}, first unlinking given-up
     * nodes at the top, so that a polling loop cannot grow the stack without bound.
     */
    public static void push(VarHandle head, Object holder, Waiter node) {
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

    /** Detaches the whole stack and wakes every waiter still waiting. */
    public static void signalAll(VarHandle head, Object holder) {
        for (Waiter w = (Waiter) head.getAndSet(holder, (Waiter) null); w != null; w = w.next) {
            w.detached = true;          // its waiter must push a new node to be woken again
            Thread t = w.thread;
            if (t == null) {
                continue;
            }
            if (w.wakeVia != null) {
                w.wakeVia.wake(t);
            } else {
                LockSupport.unpark(t);
            }
        }
    }

    /**
     * Unlinks cleared nodes (waits that ended by a deadline, an interrupt or an exception while their node was
     * still on the stack), so that a stage polled with short timeouts for a long time keeps a short stack. Nodes
     * on top are unlinked by CAS, nodes below by shortening their predecessor's link.
     */
    public static void sweep(VarHandle head, Object holder) {
        Waiter top = (Waiter) head.getVolatile(holder);
        while (top != null && top.thread == null) {
            top = head.compareAndSet(holder, top, top.next) ? top.next : (Waiter) head.getVolatile(holder);
        }
        for (Waiter p = top; p != null; ) {
            Waiter n = p.next;
            if (n != null && n.thread == null) {
                p.next = n.next;
            } else {
                p = n;
            }
        }
    }
}
