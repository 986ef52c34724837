package dev.jpipeline.trace;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import jdk.jfr.FlightRecorder;

/**
 * One pipeline handle's events, appended by its own thread without locks or allocation per event (the arrays
 * double when full). Read by {@link Tracer#events()} once the thread is done with the pipeline.
 */
public final class TraceBuffer {

    private final Tracer tracer;
    private final String thread;
    private final int rank;
    private final String role;
    /** Per event: operation ordinal, start, duration, stage, batch: 5 longs. Owner-confined. */
    private long[] events = new long[5 * 256];
    private int size;

    TraceBuffer(Tracer tracer, String thread, int rank, String role) {
        this.tracer = tracer;
        this.thread = thread;
        this.rank = rank;
        this.role = role;
    }

    /** The tracer's clock: nanoseconds since it was created. */
    public long now() {
        return System.nanoTime() - tracer.origin();
    }

    /** Records an operation that started at {@code start} (from {@link #now()}) and ends now. */
    public void record(StageOperation operation, long start, int stage, long batch) {
        long end = now();
        if (size == events.length) {
            events = Arrays.copyOf(events, events.length * 2);
        }
        events[size] = operation.ordinal();
        events[size + 1] = start;
        events[size + 2] = end - start;
        events[size + 3] = stage;
        events[size + 4] = batch;
        size += 5;
        emitJfr(operation, end - start, stage, batch);
    }

    /** Records a copy that was submitted at {@code start} and has just landed (called by any thread). */
    public void copyLanded(long start, int stage, long batch) {
        long end = now();
        tracer.addShared(new TraceEvent(thread, rank, role, StageOperation.COPY, start, end - start, stage, batch));
        emitJfr(StageOperation.COPY, end - start, stage, batch);
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

    List<TraceEvent> events() {
        List<TraceEvent> list = new ArrayList<>(size / 5);
        StageOperation[] operations = StageOperation.values();
        for (int i = 0; i < size; i += 5) {
            list.add(new TraceEvent(thread, rank, role, operations[(int) events[i]], events[i + 1], events[i + 2],
                (int) events[i + 3], events[i + 4]));
        }
        return list;
    }
}
