package dev.jpipeline.stress;

import dev.jpipeline.trace.TraceEvent;
import dev.jpipeline.trace.Tracer;
import java.util.HashSet;
import java.util.Set;

/**
 * The reader's side of the trace-ring stress tests: what it handed over, checked event by event. Every event
 * is written with {@code start = batch * 3} and {@code stage = batch % 7}, so a torn read shows.
 */
final class TraceRingReader {

    private final Tracer tracer;
    private final Set<Long> seen = new HashSet<>();
    private int bad;

    TraceRingReader(Tracer tracer) {
        this.tracer = tracer;
    }

    /** Drains, counting torn or repeated events. */
    void drain() {
        tracer.drain(e -> {
            if (torn(e) || !seen.add(e.batch())) {
                bad++;
            }
        });
    }

    /** Torn or repeated events handed over so far. */
    int bad() {
        return bad;
    }

    /** 1 when every one of {@code recorded} events was handed over once or counted dropped, else 0. */
    int accounted(long recorded) {
        return seen.size() + tracer.dropped() == recorded ? 1 : 0;
    }

    /** Torn events in a snapshot. */
    int tornInSnapshot() {
        int torn = 0;
        for (TraceEvent e : tracer.events()) {
            torn += torn(e) ? 1 : 0;
        }
        return torn;
    }

    static boolean torn(TraceEvent e) {
        return e.startNanos() != e.batch() * 3 || e.stage() != (int) (e.batch() % 7);
    }
}
