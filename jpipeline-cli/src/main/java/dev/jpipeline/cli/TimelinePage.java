package dev.jpipeline.cli;

import dev.jpipeline.trace.StageOperation;
import dev.jpipeline.trace.TraceEvent;
import dev.jpipeline.trace.Tracer;
import java.io.IOException;
import java.io.InputStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.function.ToIntFunction;
import java.util.function.ToLongFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;

/**
 * A self-contained HTML page (one file, no network access) that shows a traced run as a timeline, drawn by
 * Apache ECharts, whose minified script is read from its webjar on the class path and inlined with its licence
 * header. Lanes are grouped by role: each producer followed by its copies, then the consumers. Waits are grey,
 * the rest is coloured by stage: a producer's time from acquire to commit (issuing its copies), a consumer's
 * from wait to release (computing), and the copies in flight, stacked: a producer's copies in flight at once take
 * a row each ("copies of producer 0", "copies of producer 0 #2", ...), so the rows show the depth. The page zooms and pans, shows each span's
 * details on hover, and sums up the stalls per role and the copy bandwidth.
 */
final class TimelinePage {

    private static final String ECHARTS_POM = "META-INF/maven/org.webjars/echarts/pom.properties";
    private static final Pattern SLOT = Pattern.compile("\\{\\{(title|data|echarts)}}");

    /** What a span shows, in the page's order (its {@code KINDS}). */
    private enum Kind { PRODUCER_WAIT, CONSUMER_WAIT, ISSUE, COMPUTE, COPY }

    /**
     * A lane: one thread, or one row of a thread's copies (row {@code slot}: copies in flight at once take rows
     * 0, 1, 2, ..., so the rows a producer's copies fill show how many were in flight).
     */
    private record Lane(String thread, int rank, boolean copies, int slot) {

        /** The lane of event {@code e}, whose copy slot ({@link Tracer#copySlots}) is {@code slot}. */
        static Lane of(TraceEvent e, int slot) {
            boolean copy = e.operation() == StageOperation.COPY;
            return new Lane(e.thread(), e.rank(), copy, copy ? slot : 0);
        }

        Lane owner() {
            return new Lane(thread, rank, false, 0);
        }
    }

    private TimelinePage() {
    }

    /**
     * Writes the page.
     *
     * @param file      where
     * @param events    the trace, ordered by start
     * @param stages    the pipeline's stage count (one colour each)
     * @param copyBytes the bytes a {@link StageOperation#COPY} event moved
     * @param title     the run, for the page's heading
     */
    static void write(Path file, List<TraceEvent> events, int stages, ToLongFunction<TraceEvent> copyBytes,
                      String title) throws IOException {
        int[] copySlots = Tracer.copySlots(events);
        Map<Lane, String> roles = lanes(events, copySlots);
        Map<Lane, Integer> lanes = new HashMap<>();
        roles.keySet().forEach(lane -> lanes.put(lane, lanes.size()));
        StringBuilder spans = new StringBuilder();
        Map<Lane, Long> busyFrom = new HashMap<>();
        for (int i = 0; i < events.size(); i++) {
            TraceEvent e = events.get(i);
            Lane lane = Lane.of(e, copySlots[i]);
            int l = lanes.get(lane);
            long end = e.startNanos() + e.durationNanos();
            switch (e.operation()) {
                case ACQUIRE -> span(spans, l, Kind.PRODUCER_WAIT, e.startNanos(), end, e, 0);
                case WAIT -> span(spans, l, Kind.CONSUMER_WAIT, e.startNanos(), end, e, 0);
                case COPY -> span(spans, l, Kind.COPY, e.startNanos(), end, e, copyBytes.applyAsLong(e));
                case COMMIT, RELEASE -> {
                    Long from = busyFrom.remove(lane);
                    if (from != null) {
                        Kind kind = e.operation() == StageOperation.COMMIT ? Kind.ISSUE : Kind.COMPUTE;
                        span(spans, l, kind, from, e.startNanos(), e, 0);
                    }
                }
            }
            if (e.operation() == StageOperation.ACQUIRE || e.operation() == StageOperation.WAIT) {
                busyFrom.put(lane, end);
            }
        }
        String data = "{\"title\":" + json(title) + ",\"stages\":" + stages + ",\"lanes\":" + laneJson(roles)
            + ",\"spans\":[" + (spans.isEmpty() ? "" : spans.substring(1)) + "]}";
        Map<String, String> slots = Map.of("title", html(title), "data", data, "echarts", echarts());
        Matcher m = SLOT.matcher(read(TimelinePage.class.getResourceAsStream("timeline.html"), "timeline.html"));
        StringBuilder page = new StringBuilder();
        while (m.find()) {
            m.appendReplacement(page, Matcher.quoteReplacement(slots.get(m.group(1))));
        }
        m.appendTail(page);
        Files.writeString(file, page, StandardCharsets.UTF_8);
    }

    /**
     * The lanes in order (each producer followed by its rows of copies, then the consumers), with their roles;
     * {@code slots} holds each event's copy slot.
     */
    private static Map<Lane, String> lanes(List<TraceEvent> events, int[] slots) {
        Map<Lane, String> roles = new HashMap<>();
        for (TraceEvent e : events) {
            roles.merge(Lane.of(e, 0).owner(), role(e), (a, b) -> a.equals(b) ? a : e.role());
        }
        ToIntFunction<Lane> group = l -> switch (roles.get(l.owner())) {
            case "producer" -> 0;
            case "consumer" -> 1;
            default -> 2;
        };
        Map<Lane, String> lanes = new LinkedHashMap<>();
        IntStream.range(0, events.size()).mapToObj(i -> Lane.of(events.get(i), slots[i])).distinct()
            .sorted(Comparator.comparingInt(group).thenComparingInt(Lane::rank).thenComparing(Lane::copies)
                .thenComparingInt(Lane::slot))
            .forEach(lane -> lanes.put(lane, roles.get(lane.owner())));
        return lanes;
    }

    /** The role an event shows by its operation: a partitioned pipeline's threads all say "partitioned". */
    private static String role(TraceEvent e) {
        return switch (e.operation()) {
            case ACQUIRE, COMMIT, COPY -> "producer";
            case WAIT, RELEASE -> "consumer";
        };
    }

    /**
     * The lanes as JSON objects: label ("producer 0", "copies of producer 0", and "copies of producer 0 #2" for
     * the second row of copies in flight at once), role, thread name.
     */
    private static String laneJson(Map<Lane, String> lanes) {
        StringBuilder json = new StringBuilder("[");
        Map<String, Integer> perRole = new HashMap<>();
        Map<Lane, Integer> indexes = new HashMap<>();
        lanes.forEach((lane, role) -> {
            int index = indexes.computeIfAbsent(lane.owner(), owner -> perRole.merge(role, 1, Integer::sum) - 1);
            String label = (lane.copies() ? "copies of " : "") + role + " " + index
                + (lane.slot() > 0 ? " #" + (lane.slot() + 1) : "");
            json.append(json.length() > 1 ? "," : "").append("{\"label\":").append(json(label))
                .append(",\"role\":").append(json(lane.copies() ? "copies" : role))
                .append(",\"thread\":").append(json(lane.thread())).append('}');
        });
        return json.append(']').toString();
    }

    /** Appends {@code ,[lane, kind, start µs, end µs, stage, batch, bytes]}. */
    private static void span(StringBuilder spans, int lane, Kind kind, long from, long to, TraceEvent e, long bytes) {
        spans.append(String.format(Locale.ROOT, ",[%d,%d,%.3f,%.3f,%d,%d,%d]", lane, kind.ordinal(), from / 1e3,
            to / 1e3, e.stage(), e.batch(), bytes));
    }

    /** A JSON string literal that is also safe inside an HTML {@code <script>}: no raw {@code < > &}. */
    static String json(String s) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c < 0x20 || c == '<' || c == '>' || c == '&' || c == '\u2028' || c == '\u2029' || c == 0x7f) {
                out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
            } else {
                out.append(c == '"' || c == '\\' ? "\\" : "").append(c);
            }
        }
        return out.append('"').toString();
    }

    /** Text escaped for HTML content and attribute values; control characters become U+FFFD. */
    private static String html(String s) {
        StringBuilder out = new StringBuilder();
        for (char c : s.toCharArray()) {
            out.append(switch (c) {
                case '<' -> "&lt;";
                case '>' -> "&gt;";
                case '&' -> "&amp;";
                case '"' -> "&quot;";
                case '\'' -> "&#39;";
                default -> c < 0x20 || c == 0x7f ? "\ufffd" : String.valueOf(c);
            });
        }
        return out.toString();
    }

    /** ECharts' echarts.min.js (Apache-2.0, its licence header kept), from the org.webjars:echarts jar. */
    private static String echarts() throws IOException {
        ClassLoader loader = TimelinePage.class.getClassLoader();
        Properties pom = new Properties();
        pom.load(new StringReader(read(loader.getResourceAsStream(ECHARTS_POM), ECHARTS_POM)));
        String name = "META-INF/resources/webjars/echarts/" + pom.getProperty("version") + "/echarts.min.js";
        String script = read(loader.getResourceAsStream(name), name);
        if (script.toLowerCase(Locale.ROOT).contains("</script")) {
            throw new IllegalStateException(name + " contains </script and cannot be inlined");
        }
        return script;
    }

    private static String read(InputStream resource, String name) throws IOException {
        if (resource == null) {
            throw new IllegalStateException(name + " is missing from the class path");
        }
        try (InputStream in = resource) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
