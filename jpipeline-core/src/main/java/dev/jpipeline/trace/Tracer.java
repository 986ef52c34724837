package dev.jpipeline.trace;

import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Records what the threads of a pipeline do, stage by stage: every acquire and wait (with how long it waited),
 * commit, release and copy. Attach one with {@code PipelineSharedState.builder(...).tracer(tracer)}; pipelines
 * without a tracer pay nothing but a null check per operation. No CUDA counterpart (Nsight Systems plays this
 * role on a GPU).
 *
 * <p>Each pipeline handle appends to a buffer of its own, without locks; copies, which land on copy-engine
 * threads, go to a lock-free queue. Read the events ({@link #events()}) or export them
 * ({@link #writeChromeTrace(Path)}) once the pipeline's threads are done. While a tracer is attached, each
 * operation is also a JDK Flight Recorder event ({@code dev.jpipeline.Stage}), so
 * {@code -XX:StartFlightRecording} shows them.
 */
public final class Tracer {

    private final long origin = System.nanoTime();
    private final Queue<TraceBuffer> buffers = new ConcurrentLinkedQueue<>();
    private final Queue<TraceEvent> shared = new ConcurrentLinkedQueue<>();

    private Tracer() {
    }

    /** A new tracer; its clock starts now. */
    public static Tracer create() {
        return new Tracer();
    }

    long origin() {
        return origin;
    }

    void addShared(TraceEvent event) {
        shared.add(event);
    }

    /** A buffer for one pipeline handle (made by the pipeline when it is created with this tracer). */
    public TraceBuffer buffer(String thread, int rank, String role) {
        TraceBuffer buffer = new TraceBuffer(this, thread, rank, role);
        buffers.add(buffer);
        return buffer;
    }

    /** Every recorded event, ordered by start time. Call once the traced threads are done. */
    public List<TraceEvent> events() {
        List<TraceEvent> all = new ArrayList<>(shared);
        for (TraceBuffer b : buffers) {
            all.addAll(b.events());
        }
        all.sort(Comparator.comparingLong(TraceEvent::startNanos));
        return all;
    }

    /**
     * Writes the events in the Chrome / Perfetto trace-event JSON format (open it in ui.perfetto.dev or
     * chrome://tracing): one lane per thread, copies on a lane per producer, spans for waits and copies.
     */
    public void writeChromeTrace(Path file) throws IOException {
        try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            writeChromeTrace(w);
        }
    }

    /** Like {@link #writeChromeTrace(Path)}, to a writer. */
    public void writeChromeTrace(Writer w) throws IOException {
        List<TraceEvent> events = events();
        w.write("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[");
        boolean first = true;
        List<String> lanes = new ArrayList<>();
        for (TraceEvent e : events) {
            String lane = lane(e);
            if (!lanes.contains(lane)) {
                lanes.add(lane);
                w.write(first ? "\n" : ",\n");
                first = false;
                w.write("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":" + lanes.indexOf(lane)
                    + ",\"args\":{\"name\":\"" + escape(lane) + "\"}}");
            }
            w.write(",\n{\"name\":\"" + e.operation().name().toLowerCase(java.util.Locale.ROOT)
                + "\",\"cat\":\"stage " + e.stage() + "\",\"ph\":\"X\",\"pid\":1,\"tid\":" + lanes.indexOf(lane)
                + ",\"ts\":" + micros(e.startNanos()) + ",\"dur\":" + micros(e.durationNanos())
                + ",\"args\":{\"stage\":" + e.stage() + ",\"batch\":" + e.batch() + ",\"rank\":" + e.rank()
                + ",\"role\":\"" + e.role() + "\"}}");
        }
        w.write("\n]}\n");
    }

    /** The lane an event is drawn in: its thread, or its thread's copies. */
    public static String lane(TraceEvent e) {
        return e.operation() == StageOperation.COPY ? e.thread() + " copies" : e.thread();
    }

    private static String micros(long nanos) {
        return String.format(java.util.Locale.ROOT, "%.3f", nanos / 1000.0);
    }

    static String escape(String s) {
        return s.replace("\\", "\\\\").replace("\"", "\\\"");
    }
}
