package dev.jpipeline.cli;

import dev.jpipeline.trace.StageOperation;
import dev.jpipeline.trace.TraceEvent;
import dev.jpipeline.trace.Tracer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What a traced stream run says about itself: how long producers waited for free stages and consumers for data,
 * how busy the copies and the computation kept the machine, and a one-line reading.
 *
 * @param producerWaitNanos mean time a producer spent waiting in acquire
 * @param consumerWaitNanos mean time a consumer spent waiting for data
 * @param copyNanos         time during which at least one copy was in flight
 * @param computeNanos      the busiest consumer's time between its waits and releases
 * @param wallNanos         the run's duration
 */
record StallReport(long producerWaitNanos, long consumerWaitNanos, long copyNanos, long computeNanos,
                   long wallNanos) {

    static StallReport of(List<TraceEvent> events, int producers, int consumers, long wallNanos) {
        long acquire = 0;
        long wait = 0;
        List<long[]> copies = new ArrayList<>();
        Map<String, Long> waitEnd = new HashMap<>();
        Map<String, Long> compute = new HashMap<>();
        for (TraceEvent e : events) {
            switch (e.operation()) {
                case ACQUIRE -> acquire += e.durationNanos();
                case WAIT -> {
                    wait += e.durationNanos();
                    waitEnd.put(e.thread(), e.startNanos() + e.durationNanos());
                }
                case RELEASE -> {
                    Long end = waitEnd.remove(e.thread());
                    if (end != null) {
                        compute.merge(e.thread(), e.startNanos() - end, Long::sum);
                    }
                }
                case COPY -> copies.add(new long[] {e.startNanos(), e.startNanos() + e.durationNanos()});
                case COMMIT -> { }
            }
        }
        return new StallReport(acquire / Math.max(1, producers), wait / Math.max(1, consumers), union(copies),
            compute.values().stream().mapToLong(Long::longValue).max().orElse(0), wallNanos);
    }

    /**
     * The events from the latest first event of any lane on: the span in which no lane has lost events to its
     * tracer's bound (each lane keeps its newest events, so a busier lane's retained events start later).
     */
    static List<TraceEvent> completeWindow(List<TraceEvent> events) {
        Map<String, Long> firstStart = new HashMap<>();
        for (TraceEvent e : events) {
            firstStart.merge(Tracer.lane(e), e.startNanos(), Math::min);
        }
        long from = firstStart.values().stream().mapToLong(Long::longValue).max().orElse(0);
        return events.stream().filter(e -> e.startNanos() >= from).toList();
    }

    /** From the first start to the last end of the events, in nanoseconds (0 when there are none). */
    static long span(List<TraceEvent> events) {
        long from = Long.MAX_VALUE;
        long to = Long.MIN_VALUE;
        for (TraceEvent e : events) {
            from = Math.min(from, e.startNanos());
            to = Math.max(to, e.startNanos() + e.durationNanos());
        }
        return events.isEmpty() ? 0 : to - from;
    }

    /** The total length of the union of intervals. */
    private static long union(List<long[]> intervals) {
        intervals.sort((a, b) -> Long.compare(a[0], b[0]));
        long total = 0;
        long from = Long.MIN_VALUE;
        long to = Long.MIN_VALUE;
        for (long[] i : intervals) {
            if (i[0] > to) {
                total += Math.max(0, to - from);
                from = i[0];
                to = i[1];
            } else {
                to = Math.max(to, i[1]);
            }
        }
        return total + Math.max(0, to - from);
    }

    double producerWaitShare() {
        return producerWaitNanos / (double) wallNanos;
    }

    double consumerWaitShare() {
        return consumerWaitNanos / (double) wallNanos;
    }

    /** max(copy, compute) / wall: 1 when the longer of the two fills the whole run. */
    double overlapEfficiency() {
        return Math.max(copyNanos, computeNanos) / (double) wallNanos;
    }

    /** A one-line reading of the figures. */
    String reading() {
        double p = producerWaitShare();
        double c = consumerWaitShare();
        String waits = String.format(Locale.ROOT, "consumers waited %.0f%% of the run for data, producers %.0f%% for "
            + "free stages", 100 * c, 100 * p);
        double copying = copyNanos / (double) wallNanos;
        if (c > 0.2 && (c > 1.5 * p || copying > 0.5)) {
            // consumers starve while copies fill the run: the stages are held by copies still in flight
            return "copy-bound: " + waits + String.format(Locale.ROOT, ", copies in flight %.0f%% of the run; more "
                + "stages would not help, a faster source or more copy workers would.", 100 * copying);
        }
        if (p > 0.2 && p > 1.5 * c) {
            return "compute-bound: " + waits + "; more consumers (or a cheaper operation) would help, more stages "
                + "would not.";
        }
        if (p > 0.1 && c > 0.1) {
            return "alternating stalls: " + waits + "; more stages would smooth the hand-offs.";
        }
        return "balanced: " + waits + "; the pipeline keeps both copy and compute busy.";
    }
}
