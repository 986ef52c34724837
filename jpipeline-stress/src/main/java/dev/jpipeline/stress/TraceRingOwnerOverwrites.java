package dev.jpipeline.stress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import dev.jpipeline.internal.trace.TraceLane;
import dev.jpipeline.trace.StageOperation;
import dev.jpipeline.trace.Tracer;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;

/**
 * A lane's own ring (one writer) is full; its owner overwrites the two oldest events while a reader drains and
 * takes a snapshot. No event may be read torn or handed over twice, and every event is handed over or counted
 * dropped.
 */
@JCStressTest
@Outcome(id = "0, 0, 1", expect = ACCEPTABLE, desc = "whole events, each handed over once or counted dropped")
@Outcome(expect = FORBIDDEN, desc = "a torn or repeated event, or one neither handed over nor counted")
@State
public class TraceRingOwnerOverwrites {

    private static final int CAPACITY = 16;

    private final Tracer tracer = Tracer.create(CAPACITY);
    private final TraceLane lane = dev.jpipeline.internal.ApiAccess.sink(tracer).lane("owner", 0, "producer");
    private final TraceRingReader reader = new TraceRingReader(tracer);

    public TraceRingOwnerOverwrites() {
        for (int b = 0; b < CAPACITY; b++) {
            record(b);
        }
    }

    private void record(long batch) {
        lane.record(StageOperation.COMMIT, batch * 3, (int) (batch % 7), batch);
    }

    @Actor
    public void owner() {
        record(CAPACITY);
        record(CAPACITY + 1);
    }

    @Actor
    public void reader(III_Result r) {
        r.r1 = reader.tornInSnapshot();
        reader.drain();
    }

    @Arbiter
    public void accounting(III_Result r) {
        reader.drain();
        r.r2 = reader.bad();
        r.r3 = reader.accounted(CAPACITY + 2);
    }
}
