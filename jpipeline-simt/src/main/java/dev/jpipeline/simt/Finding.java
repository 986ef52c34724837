package dev.jpipeline.simt;

import java.util.List;
import java.util.Objects;

/**
 * A bug that checked execution found under one schedule: what, where, the decisions that led to it, and how to
 * replay it. No CUDA counterpart (compute-sanitizer reports similar findings on a GPU, without a replayable
 * schedule).
 *
 * @param kind     the class of bug
 * @param schedule the schedule that shows it: replaying it shows the same finding
 * @param message  what happened, naming the threads, the sites and, for memory, the offset and the last writer
 * @param trace    the last scheduling decisions before the finding and the accesses they ordered, oldest first
 * @param replay   a line that replays the schedule (a command, or a call for a test)
 */
public record Finding(FindingKind kind, Schedule schedule, String message, List<String> trace, String replay) {

    /**
     * Checks the components and copies the trace.
     *
     * @throws NullPointerException when a component is null
     */
    public Finding {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(schedule, "schedule");
        Objects.requireNonNull(message, "message");
        trace = List.copyOf(trace);
        Objects.requireNonNull(replay, "replay");
    }

    /**
     * The finding as a report: kind, schedule, message, trace and replay line.
     *
     * @return several lines, without a final line break
     */
    public String report() {
        StringBuilder b = new StringBuilder();
        b.append(kind).append(" under schedule ").append(schedule).append(": ").append(message);
        if (!trace.isEmpty()) {
            b.append("\n  last decisions and accesses (oldest first):");
            for (String step : trace) {
                b.append("\n    ").append(step);
            }
        }
        b.append("\n  replay: ").append(replay);
        return b.toString();
    }
}
