package dev.jpipeline.cli;

import dev.jpipeline.ThreadTeam;
import dev.jpipeline.trace.StageOperation;
import dev.jpipeline.trace.TraceEvent;
import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What a child JVM of a {@code --processes} run tells its parent: one {@code KEY VALUE} line per fact on its
 * standard output, written by the child with {@link #print} and {@link #printEvents}, read by the parent line by
 * line with {@link #accept}. Times are {@code System.nanoTime()} values, one clock for every process of the
 * machine. The keys:
 * <ul>
 *   <li>{@code made NANOS}: the child's first pipeline handle was made (once);</li>
 *   <li>{@code progress BYTES}: bytes consumed so far (consumers, a few times a second);</li>
 *   <li>{@code event RANK OPERATION START DURATION STAGE BATCH ROLE THREAD}: a traced pipeline operation;</li>
 *   <li>{@code dropped N}: older events its tracer did not keep;</li>
 *   <li>{@code value TEXT}, {@code bytes N}, {@code batches N}: what the consumers computed and consumed;</li>
 *   <li>{@code ended NANOS}: its last thread finished;</li>
 *   <li>{@code failure TEXT}: why it failed (it then exits with status 1); the first one counts.</li>
 * </ul>
 */
final class ChildReport {

    static final String MADE = "made";
    static final String PROGRESS = "progress";
    static final String EVENT = "event";
    static final String DROPPED = "dropped";
    static final String VALUE = "value";
    static final String BYTES = "bytes";
    static final String BATCHES = "batches";
    static final String ENDED = "ended";
    static final String FAILURE = "failure";

    private final Map<String, String> values = new HashMap<>();
    private final List<TraceEvent> events = new ArrayList<>();

    /** Child side: where the facts go, this JVM's standard output, buffered (each fact is flushed, events in bulk). */
    static PrintStream toParent() {
        return new PrintStream(new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 16), false,
            StandardCharsets.UTF_8);
    }

    /** Child side: writes one fact; {@code value} must be a single line. */
    static void print(PrintStream out, String key, Object value) {
        out.println(key + " " + String.valueOf(value).replace('\n', ' ').replace('\r', ' '));
        out.flush();
    }

    /** Child side: writes {@code events}, whose times count from {@code origin} (a {@code System.nanoTime()}). */
    static void printEvents(PrintStream out, List<TraceEvent> events, long origin) {
        for (TraceEvent e : events) {
            out.println(EVENT + " " + e.rank() + " " + e.operation() + " " + (origin + e.startNanos()) + " "
                + e.durationNanos() + " " + e.stage() + " " + e.batch() + " " + e.role() + " " + e.thread());
        }
        out.flush();
    }

    /**
     * Child side: {@code e} in one line for a {@code failure} fact: a thread's failure in a team as the thread's
     * exception, and each cause whose message the line does not hold yet.
     */
    static String describe(Throwable e) {
        Throwable shown = e instanceof ThreadTeam.TeamFailure && e.getCause() != null ? e.getCause() : e;
        StringBuilder b = new StringBuilder(shown.toString());
        for (Throwable cause = shown.getCause(); cause != null && cause != shown; cause = cause.getCause()) {
            if (cause.getMessage() == null || !b.toString().contains(cause.getMessage())) {
                b.append(" (cause: ").append(cause).append(')');
            }
            shown = cause;
        }
        return b.toString();
    }

    /**
     * Parent side: takes in one line of the child's output.
     *
     * @throws IllegalArgumentException when the line is not a fact of this protocol (naming it)
     */
    synchronized void accept(String line) {
        int space = line.indexOf(' ');
        String key = space < 0 ? line : line.substring(0, space);
        String value = space < 0 ? "" : line.substring(space + 1);
        try {
            switch (key) {
                case EVENT -> {
                    String[] f = value.split(" ", 8);
                    events.add(new TraceEvent(f[7], Integer.parseInt(f[0]), f[6], StageOperation.valueOf(f[1]),
                        Long.parseLong(f[2]), Long.parseLong(f[3]), Integer.parseInt(f[4]), Long.parseLong(f[5])));
                }
                case MADE, PROGRESS, DROPPED, BYTES, BATCHES, ENDED -> values.put(key,
                    Long.toString(Long.parseLong(value)));
                case VALUE -> values.put(key, value);
                case FAILURE -> values.putIfAbsent(key, value);             // the first: the others follow from it
                default -> throw new IllegalArgumentException("no such key");
            }
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("a line that is not a child's report (" + e.getMessage() + "): "
                + line, e);
        }
    }

    /** The text of {@code key}, or null when the child has not said it. */
    synchronized String text(String key) {
        return values.get(key);
    }

    /** The number of {@code key}, or {@code absent} when the child has not said it. */
    synchronized long number(String key, long absent) {
        String value = values.get(key);
        return value == null ? absent : Long.parseLong(value);
    }

    /** The child's traced events, times in {@code System.nanoTime()}. */
    synchronized List<TraceEvent> events() {
        return List.copyOf(events);
    }
}
