package dev.jpipeline.stress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import dev.jpipeline.Pipeline;
import java.time.Duration;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * A stage of a unified pipeline of two threads is ready only when both have committed it, and then both parts are
 * visible: each thread arrives at a barrier word of its own (its group), and a wait reads both words. Each thread
 * writes its part, commits, and polls once ({@code consumerWaitFor(ZERO)}); r1 is what the first thread read of
 * the second's part, r2 what the second read of the first's, -1 where the stage did not look ready.
 */
@JCStressTest
@Outcome(id = "2, 1", expect = ACCEPTABLE, desc = "both saw the stage ready, with both parts")
@Outcome(id = {"2, -1", "-1, 1"}, expect = ACCEPTABLE, desc = "one looked before the other's commit reached it")
@Outcome(id = "-1, -1", expect = ACCEPTABLE_INTERESTING,
    desc = "each looked before the other's commit reached it (the commits are stores, the looks loads)")
@Outcome(expect = FORBIDDEN, desc = "a thread saw the stage ready with the other's part missing")
@State
public class EveryThreadPublishesItsPart {

    private final PipelineHandles pipes = new PipelineHandles(2);
    private int first;
    private int second;

    @Actor
    public void firstThread(II_Result r) {
        Pipeline pipe = pipes.makeUnified(0);
        pipe.producerAcquire();
        first = 1;
        pipe.producerCommit();
        r.r1 = pipe.consumerWaitFor(Duration.ZERO) ? second : -1;
    }

    @Actor
    public void secondThread(II_Result r) {
        Pipeline pipe = pipes.makeUnified(1);
        pipe.producerAcquire();
        second = 2;
        pipe.producerCommit();
        r.r2 = pipe.consumerWaitFor(Duration.ZERO) ? first : -1;
    }
}
