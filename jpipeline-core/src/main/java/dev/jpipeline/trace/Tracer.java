package dev.jpipeline.trace;

import dev.jpipeline.internal.trace.TraceLane;
import dev.jpipeline.internal.ApiAccess;
import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * Records what the threads of a pipeline do, stage by stage: every acquire and wait (with how long it waited),
 * commit, release and copy. Attach one with {@code PipelineSharedState.builder(...).tracer(tracer)}; pipelines
 * without a tracer pay nothing but a null check per operation. No CUDA counterpart (Nsight Systems plays this
 * role on a GPU).
 *
 * <p>Memory is bounded. Each pipeline handle records into a lane of its own: a ring of {@link #eventsPerLane()}
 * events for its thread, and one as large for its copies (which land on copy-engine threads). A full ring
 * overwrites its oldest events and counts them in {@link #dropped()}; recording never blocks, takes no lock and
 * allocates nothing per event. A tracer holds at most 2 &times; {@code eventsPerLane} events (40 bytes each)
 * per pipeline handle made with it, allocated 256 events at a time as they are recorded; a tracer kept across
 * many pipelines keeps every handle's lane, so make one per run or per pipeline.
 *
 * <p>Read the events while the pipeline runs with {@link #drain(Consumer)}, which hands over each event once,
 * or take a snapshot of the newest events with {@link #events()} or {@link #writeChromeTrace(Path)}. While a
 * JDK Flight Recorder recording has been started, each operation is also a JFR event
 * ({@code dev.jpipeline.Stage}), so {@code -XX:StartFlightRecording} shows them.
 *
 * <p>Memory consistency effects: actions in a thread before it records an event (for example, a pipeline
 * operation that returned) happen-before actions that follow a {@link #drain} or {@link #events()} that returns
 * the event.
 */
// "exports": TraceSink and TraceLane are deliberately not exported; only the pipeline engine records events
@SuppressWarnings("exports")
public final class Tracer {

    /** Events each ring of a lane keeps by default: 65,536 (2.5 MiB once full). */
    public static final int DEFAULT_EVENTS_PER_LANE = 1 << 16;
    /** Fewest events per lane {@link #create(int)} accepts. */
    public static final int MIN_EVENTS_PER_LANE = 16;
    /** Most events per lane {@link #create(int)} accepts: 16,777,216 (640 MiB per full ring). */
    public static final int MAX_EVENTS_PER_LANE = 1 << 24;

    private final long origin = System.nanoTime();
    private final int eventsPerLane;
    /** Every lane made so far; appended by pipeline creation on any thread, read by the readers. */
    private final Queue<TraceLane> lanes = new ConcurrentLinkedQueue<>();
    /** Serialises the readers: a lane's drain position and dropped count are read state of one reader. */
    private final ReentrantLock reading = new ReentrantLock();

    private Tracer(int eventsPerLane) {
        this.eventsPerLane = eventsPerLane;
    }

    /**
     * A new tracer keeping {@link #DEFAULT_EVENTS_PER_LANE} events per lane; its clock starts now.
     *
     * @return a new tracer
     */
    public static Tracer create() {
        return new Tracer(DEFAULT_EVENTS_PER_LANE);
    }

    /**
     * A new tracer keeping the newest {@code eventsPerLane} events of each pipeline handle (and as many of its
     * copies); its clock starts now.
     *
     * @param eventsPerLane how many of its newest events each lane keeps
     * @return a new tracer
     * @throws IllegalArgumentException when {@code eventsPerLane} is outside {@value #MIN_EVENTS_PER_LANE}..
     *                                  {@value #MAX_EVENTS_PER_LANE}
     */
    public static Tracer create(int eventsPerLane) {
        if (eventsPerLane < MIN_EVENTS_PER_LANE || eventsPerLane > MAX_EVENTS_PER_LANE) {
            throw new IllegalArgumentException("events per lane must be " + MIN_EVENTS_PER_LANE + ".."
                + MAX_EVENTS_PER_LANE + " (each pipeline handle keeps its newest events), got " + eventsPerLane);
        }
        return new Tracer(eventsPerLane);
    }

    /**
     * Events each ring of a lane keeps: the newest ones of a pipeline handle's thread, and of its copies.
     *
     * @return the events kept per ring
     */
    public int eventsPerLane() {
        return eventsPerLane;
    }

    /**
     * For the pipeline engine, which calls it once per pipeline handle: a new lane for the handle. The lane's
     * type is not exported, so code outside jpipeline cannot record events through it.
     *
     * @param thread the handle's thread name
     * @param rank   the handle's rank in its group
     * @param role   the handle's role
     * @return the new lane (the TraceSink the engine reaches through ApiAccess.sink)
     */
    TraceLane lane(String thread, int rank, String role) {
        TraceLane lane = new TraceLane(origin, thread, rank, role, eventsPerLane);
        lanes.add(lane);
        return lane;
    }

    static {    // the tracer's door: the engine gets lanes without a public method taking engine types
        ApiAccess.installTracerDoor(t -> t::lane);
    }

    /**
     * Hands {@code consumer} every event recorded since the previous drain (or since the tracer was created),
     * ordered by start within this call, and returns how many it handed over. Safe to call while pipelines
     * run, from any thread; drains run one at a time. An event is recorded when it ends (a wait when it
     * returns, a copy when it has landed), so a later drain can hand over an event that started before the
     * last one of an earlier drain. Events that were overwritten before a drain reached them are not handed
     * over; they count in {@link #dropped()}. Drain at least every {@link #eventsPerLane()} events of the
     * busiest thread to lose none. The consumer must not drain this tracer.
     *
     * <p>Memory consistency effects: see the class description.
     *
     * @param consumer called once per event, in order of start
     * @return the number of events handed to {@code consumer}
     */
    public long drain(Consumer<? super TraceEvent> consumer) {
        Objects.requireNonNull(consumer, "consumer");
        reading.lock();
        try {
            List<TraceEvent> fresh = new ArrayList<>();
            for (TraceLane lane : lanes) {
                lane.drainTo(fresh);
            }
            fresh.sort(Comparator.comparingLong(TraceEvent::startNanos));
            fresh.forEach(consumer);
            return fresh.size();
        } finally {
            reading.unlock();
        }
    }

    /**
     * A snapshot of the events the tracer still holds, ordered by start: the newest {@link #eventsPerLane()}
     * of each pipeline handle's thread and of its copies, whether drained or not. Complete once the traced
     * threads are done; while they run, it holds what had been recorded when each lane was read. Events
     * overwritten before they were drained count in {@link #dropped()}: when that is 0, nothing is missing.
     *
     * <p>Memory consistency effects: see the class description.
     *
     * @return the retained events, ordered by start
     */
    public List<TraceEvent> events() {
        List<TraceEvent> all = new ArrayList<>();
        reading.lock();
        try {
            for (TraceLane lane : lanes) {
                lane.retainedTo(all);
            }
        } finally {
            reading.unlock();
        }
        all.sort(Comparator.comparingLong(TraceEvent::startNanos));
        return all;
    }

    /**
     * The number of events overwritten before a {@link #drain} handed them over: events that neither a drain
     * nor {@link #events()} can return any more. Without drains, that is every event recorded beyond the newest
     * {@link #eventsPerLane()} of each ring.
     *
     * @return the number of events lost
     */
    public long dropped() {
        reading.lock();
        try {
            long dropped = 0;
            for (TraceLane lane : lanes) {
                dropped += lane.dropped();
            }
            return dropped;
        } finally {
            reading.unlock();
        }
    }

    /**
     * Writes the events of {@link #events()} in the Chrome / Perfetto trace-event JSON format (open it in
     * ui.perfetto.dev or chrome://tracing): one track per thread, named by role and rank, and per producer one
     * track per copy in flight at once (so no two spans of a track overlap partly, which Perfetto would drop);
     * spans for waits, copies and a consumer's computing ({@code compute}, from its wait's return to its release). The top-level {@code otherData} object gives {@code droppedEvents} ({@link #dropped()}) and
     * {@code eventsPerLane}.
     *
     * @param file the file to write (created or replaced)
     * @throws IOException when the file cannot be written
     */
    public void writeChromeTrace(Path file) throws IOException {
        try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            writeChromeTrace(w);
        }
    }

    /**
     * Like {@link #writeChromeTrace(Path)}, to a writer (which it does not close).
     *
     * @param w where to write
     * @throws IOException when the writer fails
     */
    public void writeChromeTrace(Writer w) throws IOException {
        writeChromeTrace(w, events(), dropped(), eventsPerLane);
    }

    /**
     * Writes {@code events} (ordered by start) as a Chrome trace whose every track nests, as Perfetto needs: a
     * track per thread, named by role and rank ("producer 0 (thread)"), and per producer one track per copy in
     * flight at once ("copies of producer 0, slot k (thread)", see {@link #copySlots}). A consumer's time from its
     * wait's return to its release is a {@code compute} span.
     */
    static void writeChromeTrace(Writer w, List<TraceEvent> events, long dropped, int eventsPerLane)
        throws IOException {
        w.write("{\"displayTimeUnit\":\"ms\",\"otherData\":{\"droppedEvents\":" + dropped + ",\"eventsPerLane\":"
            + eventsPerLane + "},\"traceEvents\":[");
        boolean first = true;
        int[] slots = copySlots(events);
        Map<String, Integer> tids = new HashMap<>();
        Map<String, TraceEvent> previous = new HashMap<>();     // per thread, its latest own event
        for (int i = 0; i < events.size(); i++) {
            TraceEvent e = events.get(i);
            boolean copy = e.operation() == StageOperation.COPY;
            String track = copy ? "copies of " + role(e) + " " + e.rank() + ", slot " + slots[i] + " ("
                + e.thread() + ")" : role(e) + " " + e.rank() + " (" + e.thread() + ")";
            String key = copy ? e.thread() + "\u0000" + slots[i] : e.thread();
            Integer tid = tids.get(key);
            if (tid == null) {
                tid = tids.size();
                tids.put(key, tid);
                w.write(first ? "\n" : ",\n");
                first = false;
                w.write("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":" + tid
                    + ",\"args\":{\"name\":\"" + escape(track) + "\"}}");
            }
            if (!copy) {
                TraceEvent before = previous.put(e.thread(), e);
                if (e.operation() == StageOperation.RELEASE && before != null
                    && before.operation() == StageOperation.WAIT && before.stage() == e.stage()) {
                    long from = before.startNanos() + before.durationNanos();
                    if (from <= e.startNanos()) {
                        span(w, "compute", e, tid, from, e.startNanos() - from);
                    }
                }
            }
            span(w, e.operation().name().toLowerCase(Locale.ROOT), e, tid, e.startNanos(), e.durationNanos());
        }
        w.write("\n]}\n");
    }

    /**
     * The role a track is named by: the handle's, or for a count-partitioned pipeline's thread (whose role says
     * "partitioned") the role its operation shows.
     */
    private static String role(TraceEvent e) {
        if (!e.role().equals("partitioned")) {
            return e.role();
        }
        return switch (e.operation()) {
            case ACQUIRE, COMMIT, COPY -> "producer";
            case WAIT, RELEASE -> "consumer";
        };
    }

    private static void span(Writer w, String name, TraceEvent e, int tid, long start, long duration)
        throws IOException {
        w.write(",\n{\"name\":\"" + name + "\",\"cat\":\"stage " + e.stage() + "\",\"ph\":\"X\",\"pid\":1,\"tid\":" + tid
            + ",\"ts\":" + micros(start) + ",\"dur\":" + micros(duration)
            + ",\"args\":{\"stage\":" + e.stage() + ",\"batch\":" + e.batch() + ",\"rank\":" + e.rank()
            + ",\"role\":\"" + escape(e.role()) + "\"}}");
    }

    /**
     * The slot of each copy in flight: per thread, copies that overlap in time get different slots, and a copy
     * takes the lowest slot whose previous copy has landed by the time it starts. So the copies of one slot never
     * overlap, and a slot count is the depth of copies in flight. Used to give each slot a track (or row) of its
     * own, which timeline viewers such as Perfetto need: they drop spans of one track that overlap partly.
     *
     * @param events events ordered by start
     * @return per event (same index), its copy slot from 0, or -1 for an event that is not a copy
     */
    public static int[] copySlots(List<TraceEvent> events) {
        int[] slots = new int[events.size()];
        Map<String, List<Long>> ends = new HashMap<>();         // per thread, when each slot's last copy landed
        for (int i = 0; i < slots.length; i++) {
            TraceEvent e = events.get(i);
            if (e.operation() != StageOperation.COPY) {
                slots[i] = -1;
                continue;
            }
            List<Long> free = ends.computeIfAbsent(e.thread(), t -> new ArrayList<>());
            int slot = 0;
            while (slot < free.size() && free.get(slot) > e.startNanos()) {
                slot++;
            }
            long end = e.startNanos() + e.durationNanos();
            if (slot == free.size()) {
                free.add(end);
            } else {
                free.set(slot, end);
            }
            slots[i] = slot;
        }
        return slots;
    }

    /**
     * The lane an event is drawn in: its thread, or its thread's copies.
     *
     * @param e an event
     * @return the lane's name: the thread's, with " copies" for a copy
     */
    public static String lane(TraceEvent e) {
        return e.operation() == StageOperation.COPY ? e.thread() + " copies" : e.thread();
    }

    private static String micros(long nanos) {
        return String.format(Locale.ROOT, "%.3f", nanos / 1000.0);
    }

    /** {@code s} as the inside of a JSON string: quotes, backslashes and control characters escaped (RFC 8259). */
    static String escape(String s) {
        StringBuilder b = new StringBuilder(s.length() + 8);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.toString();
    }
}
