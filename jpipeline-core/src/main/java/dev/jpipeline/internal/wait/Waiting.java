package dev.jpipeline.internal.wait;

import dev.jpipeline.WaitStrategy;

/**
 * The one wait routine of jpipeline: stage barriers (in this process or in a region several processes map),
 * {@code Barrier}, thread-scope batches, a region group's syncs and the copy engine's idle workers all wait here, so that every wait honours deadlines and interrupts the same way, every park is
 * seen by the thread's {@link ParkListener} (the SIMT runtime), and every long wait by its {@link StallWatch}
 * (the hang detector).
 *
 * <pre>
 * Algorithm
 *
 *   poll                               the fast path: a met condition returns at once, nothing else is touched
 *   help (untimed, uninterruptible)    waitable.helpProgress(): the waiter does what it waits for where it can (a
 *                                      copy no worker has started), then polls; again at every clock read and
 *                                      before every park, so a copy queued meanwhile is found too. The poll after
 *                                      a help comes whatever the help did: helping may park on a lock, and such a
 *                                      park may take a signal's unpark meant for this wait. A timed or an
 *                                      interruptible wait never helps: a copy it performed could outlast its
 *                                      deadline, and an interrupt must end it at once
 *   idle phase (platform threads)      strategy.idle(attempt) spins or yields while it returns true, polling after
 *                                      each; the clock (deadline, interrupt, stall) is read after attempts 0 (timed
 *                                      waits) or 15 (untimed), then at doubling intervals up to every 256, and after
 *                                      every attempt once idling turns out slow (a strategy that sleeps)
 *   park phase                         push a Waiter (again only after a signal detached it), poll again (no lost
 *                                      wake-up, see Waiter), tell the listener, park until signalled, the deadline,
 *                                      or the next stall check (Waitable.park: LockSupport, or a futex sleep on a
 *                                      word several processes map); a wait that ends with its node published
 *                                      dequeues it. Where a signal may miss a push (Waitable.signalsMayMissAPush:
 *                                      solo arrivals are release stores), each park is also bounded: 100 us, then
 *                                      doubling up to Waitable.maxParkNanos, polling after each; where an interrupt
 *                                      does not end a park (a futex sleep), an interruptible wait's parks last at
 *                                      most 10 ms
 * </pre>
 *
 * Busy machines: a strategy that backs off (WaitStrategy.backsOffWhenBusy) parks at once while Oversubscription
 * says the machine was lately seen oversubscribed, and its waits read the clock in the idle phase to see it: idling
 * that took a time slice between two clock reads marks the machine busy and sends the wait to park.
 *
 * <p>Interrupts: an interruptible wait returns {@link WaitStatus#INTERRUPTED} (status cleared); an uninterruptible
 * wait remembers the interrupt and re-asserts it before returning. Stall checks: with a watch, the wait calls
 * {@link StallWatch#stalled} a quarter of the watch's patience after it began, then every quarter; the first
 * clock read happens only after 256 unsuccessful attempts, so that short waits never read the clock.
 */
public final class Waiting {

    /** Attempts between two reads of the clock in the idle phase, once the first looks found idling fast. */
    private static final int CLOCK_EVERY = 1 << 8;
    /**
     * An untimed wait's first clock read comes after 16 attempts (a timed wait's after the first), so that a
     * hand-off that succeeds after a short spin never reads the clock.
     */
    private static final int FIRST_UNTIMED_CLOCK = 15;
    /** Idling this long between two clock reads means a slow strategy (one that sleeps): read it after each idle. */
    private static final long SLOW_IDLE_NANOS = 50_000;
    /**
     * The first park of a wait whose signal may miss its push lasts at most this long: a store that was on its way
     * when the waiter polled has arrived long before (a store buffer drains in well under a microsecond).
     */
    private static final long FIRST_BOUNDED_PARK_NANOS = 100_000;
    /** How late an interruptible wait may see an interrupt that does not end its park (Waitable.interruptEndsPark). */
    static final long INTERRUPT_CHECK_NANOS = 10_000_000;

    private Waiting() {
    }

    /**
     * Waits until {@code waitable}'s condition {@code token} is met.
     *
     * @param deadline      a {@link System#nanoTime()} deadline, {@link Deadlines#NO_DEADLINE} or
     *                      {@link Deadlines#POLL_ONCE}
     * @param interruptible whether an interrupt ends the wait
     * @param strategy      how a platform thread idles before it parks
     * @param site          what a {@link ParkListener} and a hang report are told the thread waits in
     * @param watch         the hang detector's hook, or null
     */
    public static WaitStatus await(Waitable waitable, long token, long deadline, boolean interruptible,
                                   WaitStrategy strategy, Object site, StallWatch watch) {
        WaitStatus status = waitable.poll(token);
        if (status != null) {
            return status;
        }
        if (deadline == Deadlines.POLL_ONCE) {
            return WaitStatus.TIMED_OUT;
        }
        return slow(waitable, token, deadline, interruptible, strategy, site, watch);
    }

    /** Everything after the first poll: kept out of {@link #await} so that the fast path stays small. */
    private static WaitStatus slow(Waitable waitable, long token, long deadline, boolean interruptible,
                                   WaitStrategy strategy, Object site, StallWatch watch) {
        Thread me = Thread.currentThread();
        boolean backOff = strategy.backsOffWhenBusy();
        // a virtual thread never holds its carrier; nor spins a waiter that backs off on a machine seen busy
        boolean parking = me.isVirtual() || backOff && Oversubscription.busy();
        ParkListener listener = parking ? ParkListener.current() : null;
        long nextCheck = 0;                     // when the next stall check is due; 0 until the clock was read
        long lastClock = 0;                     // when the clock was last read; 0 before the first read
        int clockMask = deadline == Deadlines.NO_DEADLINE ? FIRST_UNTIMED_CLOCK : 0;
        boolean stalled = false;
        boolean interrupted = false;
        boolean parked = false;                 // whether the listener was told of a park
        Waiter node = null;                     // this wait's node while it is on the stack
        long maxPark = waitable.maxParkNanos();
        long parkBound = waitable.signalsMayMissAPush() ? Math.min(FIRST_BOUNDED_PARK_NANOS, maxPark) : 0;  // 0: none
        boolean interruptBound = interruptible && !waitable.interruptEndsPark();
        boolean helps = deadline == Deadlines.NO_DEADLINE && !interruptible;
        try {
            if (helps && waitable.helpProgress()) {
                WaitStatus helped = waitable.poll(token);
                if (helped != null) {
                    return helped;
                }
            }
            for (int attempt = 0; ; ) {
                WaitStatus status;
                if (!parking) {
                    if (!strategy.idle(attempt)) {
                        parking = true;
                        listener = ParkListener.current();
                        continue;
                    }
                    status = waitable.poll(token);
                    if (status != null) {
                        return status;
                    }
                    boolean clockDue = (attempt & clockMask) == clockMask;
                    if (clockDue && clockMask < CLOCK_EVERY - 1) {
                        clockMask = clockMask * 2 + 1;      // 0, 1, 3, ... 255: early looks, then every 256
                    }
                    attempt = attempt == Integer.MAX_VALUE ? attempt : attempt + 1;
                    if (!clockDue) {
                        continue;
                    }
                } else {
                    if (node == null || node.detached) {
                        node = new Waiter(me, listener);  // a signal detached the old one: be woken by the next signal
                        waitable.enqueue(node);
                    }
                    status = waitable.poll(token);
                    if (status != null) {
                        return status;
                    }
                }
                if (helps) {
                    boolean helped = waitable.helpProgress();
                    // poll again whatever the help did: it may have parked (a contended lock), and that park may
                    // have taken the unpark of a signal that came after the poll above: parking now would sleep
                    // through it (the signal detached this wait's node, so no later signal comes)
                    status = waitable.poll(token);
                    if (status != null) {
                        return status;
                    }
                    if (helped) {
                        lastClock = 0;          // the copy's time is no idling: measure idling afresh
                    }
                }
                // The clock: interrupts, the deadline, stall checks.
                if (Thread.interrupted()) {
                    if (interruptible) {
                        return WaitStatus.INTERRUPTED;
                    }
                    interrupted = true;
                }
                long now = deadline == Deadlines.NO_DEADLINE && watch == null && !(backOff && !parking) ? 0
                    : listener != null ? listener.nanoTime() : System.nanoTime();
                boolean seenBusy = false;
                if (now != 0) {
                    if (lastClock != 0 && now - lastClock > SLOW_IDLE_NANOS && !parking) {
                        // descheduled while idling: spinning only takes a core from others
                        seenBusy = backOff && Oversubscription.sawIdling(now - lastClock, now);
                        clockMask = 0;          // the strategy idles slowly: read the clock after every idle
                    }
                    lastClock = now;
                }
                if (Deadlines.passed(deadline, now)) {
                    return WaitStatus.TIMED_OUT;
                }
                if (watch != null) {
                    long quarter = Math.max(1, watch.patienceNanos() / 4);
                    if (nextCheck == 0) {
                        nextCheck = now + quarter;
                    } else if (now - nextCheck >= 0) {
                        nextCheck = now + quarter;
                        stalled = true;
                        watch.stalled(site);        // may throw a hang report
                    }
                }
                if (!parking) {
                    if (seenBusy) {
                        parking = true;         // to the park phase, which pushes this wait's node first
                        listener = ParkListener.current();
                    }
                    continue;
                }
                long limit = nextCheck != 0 && (deadline == Deadlines.NO_DEADLINE || nextCheck - deadline < 0)
                    ? nextCheck : deadline;
                if (parkBound != 0 || interruptBound) {
                    long bound = (listener != null ? listener.nanoTime() : System.nanoTime())
                        + (parkBound == 0 ? INTERRUPT_CHECK_NANOS
                        : interruptBound ? Math.min(parkBound, INTERRUPT_CHECK_NANOS) : parkBound);
                    if (limit == Deadlines.NO_DEADLINE || bound - limit < 0) {
                        limit = bound;
                    }
                    parkBound = Math.min(2 * parkBound, maxPark);
                }
                if (listener != null) {
                    parked = true;
                    listener.parking(site);
                    listener.park(waitable, limit, deadline);
                    listener.unparked();        // may throw (an aborted kernel launch)
                } else {
                    waitable.park(token, limit);
                }
                status = waitable.poll(token);
                if (status != null) {
                    return status;
                }
            }
        } finally {
            end(waitable, node, parked ? listener : null, stalled ? watch : null, interrupted ? me : null);
        }
    }

    /**
     * The end of a wait, however it ends: each step runs even if one before it throws (the uncount of a wait word
     * whose region was truncated faults like the poll that ended the wait), so that the listener hears of the end,
     * the node is unpublished, the watch told and the interrupt an uninterruptible wait remembered re-asserted.
     *
     * @param listener the listener told of a park, or null; {@code watch} the watch told of a stall, or null;
     *                 {@code interrupted} the thread to re-interrupt, or null
     */
    private static void end(Waitable waitable, Waiter node, ParkListener listener, StallWatch watch,
                            Thread interrupted) {
        try {
            if (listener != null) {
                listener.waitEnded();
            }
        } finally {
            try {
                if (node != null) {
                    node.thread = null;             // signallers skip it from now on
                    if (!node.detached) {
                        waitable.dequeue(node);     // still published: unlink it (and others like it), or uncount it
                    }
                }
            } finally {
                try {
                    if (watch != null) {
                        watch.resumed();
                    }
                } finally {
                    if (interrupted != null) {
                        interrupted.interrupt();
                    }
                }
            }
        }
    }
}
