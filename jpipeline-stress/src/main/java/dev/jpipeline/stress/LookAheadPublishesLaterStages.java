package dev.jpipeline.stress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import dev.jpipeline.Pipeline;
import java.time.Duration;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;

/**
 * The consumer's look-ahead: a consumer whose wait for stage 0 also found stage 1 complete later returns from the
 * wait for stage 1 without reading its barrier again. The data of stage 1 must still be complete then: the look
 * that found it complete is the acquire. Both waits poll once, so that every order is explored.
 */
@JCStressTest
@Outcome(id = "-1, -1, -1", expect = ACCEPTABLE, desc = "stage 0 was not committed when the consumer looked")
@Outcome(id = "1, -1, -1", expect = ACCEPTABLE, desc = "stage 0 was ready, stage 1 not yet")
@Outcome(id = "1, 2, 3", expect = ACCEPTABLE, desc = "both stages ready, their data complete")
@Outcome(expect = FORBIDDEN, desc = "a stage was ready but its data stale or torn")
@State
public class LookAheadPublishesLaterStages {

    private final PipelineHandles pipes = new PipelineHandles(2);
    private int a;
    private int b;
    private int c;

    @Actor
    public void producer() {
        Pipeline pipe = pipes.makeProducer();
        pipe.producerAcquire();
        a = 1;
        pipe.producerCommit();
        pipe.producerAcquire();
        b = 2;
        c = 3;
        pipe.producerCommit();
    }

    @Actor
    public void consumer(III_Result r) {
        Pipeline pipe = pipes.makeConsumer();
        r.r1 = -1;
        r.r2 = -1;
        r.r3 = -1;
        if (pipe.consumerWaitFor(Duration.ZERO)) {
            r.r1 = a;
            pipe.consumerRelease();
            if (pipe.consumerWaitFor(Duration.ZERO)) {
                r.r2 = b;
                r.r3 = c;
            }
        }
    }
}
