package dev.jpipeline.stress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import dev.jpipeline.internal.trace.TraceLane;
import dev.jpipeline.trace.Tracer;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;

/**
 * A lane's copy ring (many writers) is full; two copy workers overwrite its four oldest events, and one of them
 * reads the ring (a snapshot and a drain) before its own two copies land, while the other writes. No event may be
 * read torn or handed over twice, and every event is handed over or counted dropped. Two actors, so that it runs
 * on a 2-CPU machine too (jcstress skips tests with more actors than CPUs).
 */
@JCStressTest
@Outcome(id = "0, 0, 1", expect = ACCEPTABLE, desc = "whole events, each handed over once or counted dropped")
@Outcome(expect = FORBIDDEN, desc = "a torn or repeated event, or one neither handed over nor counted")
@State
public class TraceRingCopiesOverwrite {

    private static final int CAPACITY = 16;

    private final Tracer tracer = Tracer.create(CAPACITY);
    private final TraceLane lane = dev.jpipeline.internal.ApiAccess.sink(tracer).lane("producer", 0, "producer");
    private final TraceRingReader reader = new TraceRingReader(tracer);

    public TraceRingCopiesOverwrite() {
        for (int b = 0; b < CAPACITY; b++) {
            landed(b);
        }
    }

    private void landed(long batch) {
        lane.copyLanded(batch * 3, (int) (batch % 7), batch);
    }

    @Actor
    public void worker1() {
        landed(CAPACITY);
        landed(CAPACITY + 2);
    }

    @Actor
    public void worker2(III_Result r) {
        r.r1 = reader.tornInSnapshot();
        reader.drain();
        landed(CAPACITY + 1);
        landed(CAPACITY + 3);
    }

    @Arbiter
    public void accounting(III_Result r) {
        reader.drain();
        r.r2 = reader.bad();
        r.r3 = reader.accounted(CAPACITY + 4);
    }
}
