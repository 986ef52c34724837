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
 * how busy the copies and the computation kept the machine, and a one-line reading that follows from those
 * figures. The reading names a bottleneck only when the figures clear its thresholds by a margin (see
 * {@link #reading(Remedies)}); figures between the thresholds get "no clear bottleneck", so that two runs of the
 * same job measuring a few percent apart do not get opposite readings.
 *
 * @param producerWaitNanos mean time a producer spent waiting in acquire
 * @param consumerWaitNanos time the busiest consumer spent waiting for data
 * @param copyNanos         time during which at least one copy was in flight, or a producer filled a stage itself
 *                          (between its acquire and its commit)
 * @param computeNanos      the busiest consumer's time between its waits and releases
 * @param wallNanos         the span the figures cover
 * @param batches           the stages the figures cover
 */
record StallReport(long producerWaitNanos, long consumerWaitNanos, long copyNanos, long computeNanos,
                   long wallNanos, long batches) {

    /** Below this share of the run, a side is not held up: it waits or works "little". */
    static final double LOW = 0.15;
    /** From this share on, a side waits or works "a lot". The gap to {@link #LOW} is the classification margin. */
    static final double HIGH = 0.35;
    /** Fewer stages than this, or a shorter run than {@link #SHORTEST_NANOS}, is too short to judge. */
    static final long FEWEST_BATCHES = 16;
    /** The shortest run worth a reading: 20 ms, below which start-up and warm-up dominate. */
    static final long SHORTEST_NANOS = 20_000_000L;

    /**
     * Room for more threads: the run's {@code threads} (producers, consumers, and the copy engine's workers where
     * copies may run there), the machine's {@code processors}, and {@code load}, the machine's load average before
     * the run (other work; 0 where unknown). A core is spare only where the run's threads and the load leave one.
     *
     * @param threads    the run's threads
     * @param processors the processors the JVM may use
     * @param load       the run queue's average before the run
     */
    record CoreRoom(int threads, int processors, double load) {

        /** Room on a machine with cores to spare (tests and callers that do not know). */
        static final CoreRoom SPARE = new CoreRoom(0, Integer.MAX_VALUE, 0);

        /** Whether a core is left for one more thread. */
        boolean spare() {
            return threads + load + 1 <= processors;
        }

        /**
         * The copy workers an engine of {@code engineWorkers} may grow to before its threads outnumber the free
         * processors: its workers plus the cores the run's threads and the load leave free.
         */
        int copyWorkersCap(int engineWorkers) {
            return engineWorkers + (int) Math.max(0, Math.floor(processors - threads - load));
        }

        /** The cap on more copy workers, as an advice phrase ("" where the processors are not known). */
        String copyWorkersLimit(int engineWorkers) {
            return processors == Integer.MAX_VALUE ? ""
                : String.format(Locale.ROOT, ", at most %d: %d processors", copyWorkersCap(engineWorkers), processors);
        }

        /** Why more threads would not help, for the advice. */
        String why() {
            return String.format(Locale.ROOT, "no core is free for more threads: this run has %d on %d processors%s",
                threads, processors, load >= 0.5 ? String.format(Locale.ROOT, ", beside a load of %.1f", load) : "");
        }

        /**
         * The room of a run of {@code threads} threads on this machine, its load read from {@code /proc/loadavg}
         * (0 where there is none).
         */
        static CoreRoom now(int threads) {
            double load = 0;
            try {
                String line = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/loadavg"));
                load = Double.parseDouble(line.substring(0, line.indexOf(' ')));
            } catch (java.io.IOException | RuntimeException unknown) {
                // no load average on this system: judge by the run's threads alone
            }
            return new CoreRoom(threads, Runtime.getRuntime().availableProcessors(), load);
        }
    }

    /** What would help a copy-bound or a compute-bound run of this shape, as advice phrases. */
    record Remedies(String copy, String compute) {

        /** {@link #of(StreamSource, CopyPolicyOption, StreamOp, int, CoreRoom)} on a machine with cores to spare. */
        static Remedies of(StreamSource source, CopyPolicyOption policy, StreamOp op, int engineWorkers) {
            return of(source, policy, op, engineWorkers, CoreRoom.SPARE);
        }

        /**
         * The remedies of a run of {@code op} over {@code source}, its copies placed by {@code policy} on an engine
         * of {@code engineWorkers} workers: more copy workers only where copies run on the engine, more consumers
         * only where the operation is split across them, and more threads of any kind only where {@code room} has
         * a core to spare.
         */
        static Remedies of(StreamSource source, CopyPolicyOption policy, StreamOp op, int engineWorkers,
                           CoreRoom room) {
            if (!room.spare()) {                // never more threads where no core is free
                String copy = switch (source) {
                    case StreamSource.Memory m -> "fewer threads (" + room.why() + ")";
                    default -> "a faster source (" + room.why() + ")";
                };
                return new Remedies(copy, "a cheaper --op (" + room.why() + ")");
            }
            String copy = switch (source) {
                case StreamSource.File f -> policy == CopyPolicyOption.PRODUCER
                    ? "more --producers (each reads its share) or a faster source"
                    : "more --copy-workers (the reads run on the copy engine's " + engineWorkers
                        + room.copyWorkersLimit(engineWorkers) + ") or a faster source";
                case StreamSource.Sequential s -> "a faster source (one producer reads it in order)";
                case StreamSource.Memory m -> switch (policy) {
                    case PRODUCER -> "more --producers (each copies its share)";
                    case ENGINE -> "more --copy-workers (now " + engineWorkers + room.copyWorkersLimit(engineWorkers)
                        + ")";
                    case AUTO -> "more --producers or --copy-workers (now " + engineWorkers
                        + room.copyWorkersLimit(engineWorkers) + ")";
                };
            };
            String compute = op.splitsAcrossConsumers() ? "more --consumers (or a cheaper --op)"
                : "a cheaper --op (" + op + " runs on one consumer, so more --consumers would not)";
            return new Remedies(copy, compute);
        }
    }

    /**
     * The figures of a traced run: {@code events} over {@code wallNanos}, of a run of {@code batches} stages (the
     * figures' own count is the stages the busiest consumer released in {@code events}, fewer when they are a
     * window of the run). The consumers' wait is the busiest consumer's (the one that computes longest): with an
     * operation only one consumer computes, the others' waits say nothing about the pipeline.
     */
    static StallReport of(List<TraceEvent> events, int producers, long wallNanos, long batches) {
        long acquire = 0;
        List<long[]> copies = new ArrayList<>();
        Map<String, Long> acquireEnd = new HashMap<>();
        Map<String, Long> waitEnd = new HashMap<>();
        Map<String, Long> waits = new HashMap<>();
        Map<String, Long> compute = new HashMap<>();
        Map<String, Long> releases = new HashMap<>();
        for (TraceEvent e : events) {
            switch (e.operation()) {
                case ACQUIRE -> {
                    acquire += e.durationNanos();
                    acquireEnd.put(e.thread(), e.startNanos() + e.durationNanos());
                }
                case COMMIT -> {
                    // filling a stage on the producer itself (a synchronous read or copy) is copying too
                    Long end = acquireEnd.remove(e.thread());
                    if (end != null && e.startNanos() > end) {
                        copies.add(new long[] {end, e.startNanos()});
                    }
                }
                case WAIT -> {
                    waits.merge(e.thread(), e.durationNanos(), Long::sum);
                    waitEnd.put(e.thread(), e.startNanos() + e.durationNanos());
                }
                case RELEASE -> {
                    releases.merge(e.thread(), 1L, Long::sum);
                    Long end = waitEnd.remove(e.thread());
                    if (end != null) {
                        compute.merge(e.thread(), e.startNanos() - end, Long::sum);
                    }
                }
                case COPY -> copies.add(new long[] {e.startNanos(), e.startNanos() + e.durationNanos()});
            }
        }
        String busiest = compute.entrySet().stream().max(Map.Entry.comparingByValue()).map(Map.Entry::getKey)
            .orElse(null);
        if (busiest == null) {
            return new StallReport(acquire / Math.max(1, producers), 0, union(copies), 0, wallNanos, batches);
        }
        return new StallReport(acquire / Math.max(1, producers), waits.getOrDefault(busiest, 0L), union(copies),
            compute.get(busiest), wallNanos, Math.min(batches, releases.getOrDefault(busiest, 0L)));
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
        return share(producerWaitNanos);
    }

    double consumerWaitShare() {
        return share(consumerWaitNanos);
    }

    /** max(copy, compute) / wall: 1 when the longer of the two fills the whole run. */
    double overlapEfficiency() {
        return share(Math.max(copyNanos, computeNanos));
    }

    private double share(long nanos) {
        return wallNanos == 0 ? 0 : nanos / (double) wallNanos;
    }

    /**
     * A one-line reading of the figures, with the advice in {@code remedies} where it applies. Shares of the run:
     * p producers' wait, c the busiest consumer's wait, copying, computing (the busiest consumer's).
     * <ul>
     *   <li>nothing streamed, or fewer than {@value #FEWEST_BATCHES} stages or 20 ms: no reading;
     *   <li>copy-bound: c and copying at least {@value #HIGH}, copying exceeding computing by the margin
     *       ({@value #HIGH} - {@value #LOW});
     *   <li>compute-bound: p and computing at least {@value #HIGH}, c at most {@value #LOW};
     *   <li>hand-off-bound: p and c at least {@value #HIGH}, copying and computing at most {@value #LOW}: the
     *       stages are too small for what a hand-off costs;
     *   <li>balanced: p and c at most {@value #LOW};
     *   <li>otherwise no clear bottleneck, the figures lying within the margins.
     * </ul>
     */
    String reading(Remedies remedies) {
        if (batches == 0) {
            return "nothing streamed: no reading.";
        }
        if (batches < FEWEST_BATCHES || wallNanos < SHORTEST_NANOS) {
            return String.format(Locale.ROOT, "too short to judge: the figures cover %d stage%s in %.1f ms, and a "
                + "reading needs at least %d stages and %d ms.", batches, batches == 1 ? "" : "s", wallNanos / 1e6,
                FEWEST_BATCHES,
                SHORTEST_NANOS / 1_000_000);
        }
        double p = producerWaitShare();
        double c = consumerWaitShare();
        double copying = share(copyNanos);
        double computing = share(computeNanos);
        String figures = String.format(Locale.ROOT, "producers waited %.0f%% of the run for free stages, the "
            + "busiest consumer %.0f%% for data; copies in flight %.0f%%, the busiest consumer computing %.0f%%",
            100 * p, 100 * c,
            100 * copying, 100 * computing);
        if (c >= HIGH && copying >= HIGH && copying - computing >= HIGH - LOW) {
            return "copy-bound: " + figures + "; " + remedies.copy() + " would help, more stages would not.";
        }
        if (p >= HIGH && c <= LOW && computing >= HIGH) {
            return "compute-bound: " + figures + "; " + remedies.compute() + " would help, more stages would not.";
        }
        if (p >= HIGH && c >= HIGH && copying <= LOW && computing <= LOW) {
            return "hand-off-bound: " + figures + "; the stages are too small for what a hand-off costs: a larger "
                + "--chunk would help.";
        }
        if (p <= LOW && c <= LOW) {
            return "balanced: " + figures + "; neither side waits for the other.";
        }
        return "no clear bottleneck: " + figures + String.format(Locale.ROOT, " (a bottleneck is named only when "
            + "its waits and work are clearly high, from %.0f%%, or low, to %.0f%%).", 100 * HIGH, 100 * LOW);
    }
}
