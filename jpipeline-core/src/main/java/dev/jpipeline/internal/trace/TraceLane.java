package dev.jpipeline.internal.trace;

import dev.jpipeline.trace.StageOperation;
import dev.jpipeline.trace.TraceEvent;
import java.util.List;
import jdk.jfr.FlightRecorder;

/**
 * Where one pipeline handle records its operations: a bounded ring for the handle's own thread and one for the
 * copies that land on copy-engine threads (its lane of copies). Made by a {@link TraceSink}; read by the tracer
 * that made it.
 *
 * <pre>
 *   owner thread ── record() ──────▶ [ own ring    ] ─┐
 *                                                      ├─▶ tracer: drain(), events(), dropped()
 *   copy workers ── copyLanded() ──▶ [ copies ring ] ─┘
 * </pre>
 *
 * <p>Each ring keeps the newest {@code capacity} events and overwrites the oldest, counting what it overwrote
 * (see {@code TraceRing} for the algorithm): recording never blocks, never takes a lock and allocates nothing per
 * event (storage comes in chunks of 256 events, allocated on first use). While a JDK Flight Recorder recording
 * has ever been started in this JVM, each event is also a {@code dev.jpipeline.Stage} JFR event.
 *
 * <p>Memory consistency effects: actions of a thread before it records an event happen-before the actions that
 * follow a read (drain or snapshot) that returns the event.
 */
public final class TraceLane {

    private static final StageOperation[] OPERATIONS = StageOperation.values();

    /** The tracer clock's zero ({@link System#nanoTime()}); final, so safely published with the lane. */
    private final long origin;
    private final String thread;
    private final int rank;
    private final String role;
    /** Written by the owner thread only (single writer). */
    private final TraceRing own;
    /** Written by any copy worker (multiple writers). */
    private final TraceRing copies;

    /**
     * A lane for a pipeline handle.
     *
     * @param origin   the tracer clock's zero, a {@link System#nanoTime()} value
     * @param thread   the name of the handle's thread
     * @param rank     the thread's rank in its group
     * @param role     "producer", "consumer", "unified" or "partitioned"
     * @param capacity events each of the lane's two rings keeps, at least 1
     */
    public TraceLane(long origin, String thread, int rank, String role, int capacity) {
        this.origin = origin;
        this.thread = thread;
        this.rank = rank;
        this.role = role;
        this.own = new TraceRing(capacity);
        this.copies = new TraceRing(capacity);
    }

    /** The tracer's clock: nanoseconds since the tracer was created. */
    public long now() {
        return System.nanoTime() - origin;
    }

    /**
     * Records an operation of the lane's thread that started at {@code startNanos} (from {@link #now()}) and ends
     * now. Called only by the lane's owner thread (the ring has a single writer); no lock, no allocation per
     * event.
     */
    public void record(StageOperation op, long startNanos, int stage, long batch) {
        long spent = now() - startNanos;
        own.writeOwned(op.ordinal(), stage, startNanos, spent, batch);
        emitJfr(op, spent, stage, batch);
    }

    /**
     * Records a copy of this lane's thread that was submitted at {@code startNanos} and has just landed. Called
     * by any thread (copy workers; several at once); bounded like {@link #record}, with no queue behind it.
     */
    public void copyLanded(long startNanos, int stage, long batch) {
        long spent = now() - startNanos;
        copies.writeShared(StageOperation.COPY.ordinal(), stage, startNanos, spent, batch);
        emitJfr(StageOperation.COPY, spent, stage, batch);
    }

    private void emitJfr(StageOperation operation, long spent, int stage, long batch) {
        if (!FlightRecorder.isInitialized()) {
            return;     // no recording has ever started: spare the JVM JFR's start-up (~0.2 s at the first event)
        }
        StageEvent event = new StageEvent();
        if (event.shouldCommit()) {
            event.operation = operation.name();
            event.stage = stage;
            event.batch = batch;
            event.rank = rank;
            event.role = role;
            event.spent = spent;
            event.commit();
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // Reading, for the tracer: one reader at a time (the tracer serialises its reads), concurrent with writers.

    /**
     * Adds the events recorded since the previous drain to {@code out} (each ring's oldest first) and moves past
     * them; events overwritten before a drain reached them count in {@link #dropped()}.
     *
     * @return how many events were added
     */
    public long drainTo(List<? super TraceEvent> out) {
        return own.drain((op, stage, start, duration, batch) -> out.add(event(op, stage, start, duration, batch)))
            + copies.drain((op, stage, start, duration, batch) -> out.add(event(op, stage, start, duration, batch)));
    }

    /** Adds every event the lane still holds to {@code out}, drained or not, without moving the drain. */
    public void retainedTo(List<? super TraceEvent> out) {
        own.retained((op, stage, start, duration, batch) -> out.add(event(op, stage, start, duration, batch)));
        copies.retained((op, stage, start, duration, batch) -> out.add(event(op, stage, start, duration, batch)));
    }

    /** Events of this lane overwritten before a drain handed them out. */
    public long dropped() {
        return own.dropped() + copies.dropped();
    }

    private TraceEvent event(int op, int stage, long start, long duration, long batch) {
        return new TraceEvent(thread, rank, role, OPERATIONS[op], start, duration, stage, batch);
    }
}
