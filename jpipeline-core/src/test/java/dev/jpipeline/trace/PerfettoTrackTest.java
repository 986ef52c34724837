package dev.jpipeline.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.StringWriter;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The Chrome trace loaded the way Perfetto loads it: per track (pid, tid), complete ("X") events must nest (one
 * that starts inside another ends inside it too, or Perfetto drops it as slice_drop_overlapping_complete_event),
 * and async begin/end events must pair.
 */
class PerfettoTrackTest {

    private static TraceEvent ev(String thread, int rank, String role, StageOperation op, long start, long dur,
                                 int stage, long batch) {
        return new TraceEvent(thread, rank, role, op, start, dur, stage, batch);
    }

    /** A producer with three copies in flight at once, partly overlapping; a consumer computing between wait and release. */
    private static List<TraceEvent> run() {
        List<TraceEvent> events = new ArrayList<>(List.of(
            ev("jpipeline-team-0", 0, "producer", StageOperation.ACQUIRE, 0, 1_000, 0, 0),
            ev("jpipeline-team-0", 0, "producer", StageOperation.COPY, 1_000, 10_000, 0, 0),
            ev("jpipeline-team-0", 0, "producer", StageOperation.COMMIT, 1_500, 100, 0, 0),
            ev("jpipeline-team-0", 0, "producer", StageOperation.ACQUIRE, 2_000, 500, 1, 1),
            ev("jpipeline-team-0", 0, "producer", StageOperation.COPY, 2_500, 10_000, 1, 1),
            ev("jpipeline-team-0", 0, "producer", StageOperation.COMMIT, 3_000, 100, 1, 1),
            ev("jpipeline-team-0", 0, "producer", StageOperation.ACQUIRE, 3_500, 500, 2, 2),
            ev("jpipeline-team-0", 0, "producer", StageOperation.COPY, 4_000, 10_000, 2, 2),
            ev("jpipeline-team-0", 0, "producer", StageOperation.COMMIT, 4_500, 100, 2, 2),
            ev("jpipeline-team-0", 0, "producer", StageOperation.COPY, 11_500, 1_000, 0, 3),
            ev("jpipeline-team-1", 0, "consumer", StageOperation.WAIT, 0, 11_000, 0, 0),
            ev("jpipeline-team-1", 0, "consumer", StageOperation.RELEASE, 20_000, 200, 0, 0)));
        events.sort(Comparator.comparingLong(TraceEvent::startNanos));
        return events;
    }

    @Test
    void everyTrackNestsAndAsyncEventsPair() throws Exception {
        JsonNode trace = write(run());
        Map<String, List<JsonNode>> tracks = new HashMap<>();
        Map<String, Integer> open = new HashMap<>();
        int copies = 0;
        for (JsonNode e : trace.get("traceEvents")) {
            String ph = e.get("ph").asText();
            String track = e.get("pid").asText() + "/" + e.get("tid").asText();
            switch (ph) {
                case "X" -> tracks.computeIfAbsent(track, t -> new ArrayList<>()).add(e);
                case "b" -> open.merge(e.get("cat").asText() + "/" + e.get("id").asText(), 1, Integer::sum);
                case "e" -> open.merge(e.get("cat").asText() + "/" + e.get("id").asText(), -1, Integer::sum);
                default -> { }
            }
            copies += e.get("name").asText().equals("copy") && !ph.equals("e") ? 1 : 0;
        }
        assertEquals(4, copies, "every copy is in the trace");
        open.forEach((id, n) -> assertEquals(0, n, "async events pair: " + id));
        tracks.forEach((track, slices) -> {
            slices.sort(Comparator.<JsonNode>comparingLong(s -> nanos(s, "ts"))
                .thenComparing(Comparator.<JsonNode>comparingLong(s -> nanos(s, "dur")).reversed()));
            Deque<Long> ends = new ArrayDeque<>();
            for (JsonNode s : slices) {
                long ts = nanos(s, "ts"), end = ts + nanos(s, "dur");
                while (!ends.isEmpty() && ends.peek() <= ts) {
                    ends.pop();
                }
                assertTrue(ends.isEmpty() || end <= ends.peek(),
                    "track " + track + ": " + s + " partly overlaps a slice ending at " + ends.peek());
                ends.push(end);
            }
        });
    }

    @Test
    void tracksAreNamedByRoleAndRankAndTheConsumersComputeSpanIsCompute() throws Exception {
        JsonNode trace = write(run());
        Set<String> names = new HashSet<>();
        Map<String, JsonNode> byName = new HashMap<>();
        for (JsonNode e : trace.get("traceEvents")) {
            if (e.get("ph").asText().equals("M")) {
                names.add(e.get("args").get("name").asText());
            } else {
                byName.putIfAbsent(e.get("name").asText(), e);
            }
        }
        assertTrue(names.contains("producer 0 (jpipeline-team-0)"), names.toString());
        assertTrue(names.contains("consumer 0 (jpipeline-team-1)"), names.toString());
        assertTrue(names.contains("copies of producer 0, slot 0 (jpipeline-team-0)"), names.toString());
        assertTrue(names.contains("copies of producer 0, slot 2 (jpipeline-team-0)"), names.toString());
        assertEquals(5, names.size(), "the fourth copy reuses a free slot: " + names);
        JsonNode compute = byName.get("compute");
        assertEquals(11.0, compute.get("ts").asDouble(), "from the wait's return");
        assertEquals(9.0, compute.get("dur").asDouble(), "to the release");
        assertEquals(0.2, byName.get("release").get("dur").asDouble(), "the release itself");
    }

    @Test
    void aCountPartitionedThreadIsNamedByTheRoleItsOperationsShow() throws Exception {
        JsonNode trace = write(List.of(
            ev("t0", 0, "partitioned", StageOperation.ACQUIRE, 0, 10, 0, 0),
            ev("t0", 0, "partitioned", StageOperation.COPY, 10, 10, 0, 0),
            ev("t1", 1, "partitioned", StageOperation.WAIT, 0, 50, 0, 0)));
        Set<String> names = new HashSet<>();
        for (JsonNode e : trace.get("traceEvents")) {
            if (e.get("ph").asText().equals("M")) {
                names.add(e.get("args").get("name").asText());
            }
        }
        assertEquals(Set.of("producer 0 (t0)", "copies of producer 0, slot 0 (t0)", "consumer 1 (t1)"), names);
    }

    /** A time field in nanoseconds, as Perfetto converts it. */
    private static long nanos(JsonNode event, String field) {
        return Math.round(event.get(field).asDouble() * 1000);
    }

    private static JsonNode write(List<TraceEvent> events) throws Exception {
        StringWriter json = new StringWriter();
        Tracer.writeChromeTrace(json, events, 0, 16);
        return new ObjectMapper().readTree(json.toString());
    }
}
