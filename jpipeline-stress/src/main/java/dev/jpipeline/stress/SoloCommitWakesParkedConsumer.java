package dev.jpipeline.stress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import dev.jpipeline.Pipeline;
import dev.jpipeline.WaitStrategy;
import java.time.Duration;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * A one-producer pipeline's commit is a release store (no CAS), whose read of the waiters' stack can miss a
 * consumer that parks at that moment. Under {@link WaitStrategy#BLOCKING} the consumer parks at once; however
 * the two interleave, it must get the stage with its data well within its one-second wait (its parks are bounded,
 * so a missed signal costs about 100 us).
 */
@JCStressTest
@Outcome(id = "1, 42", expect = ACCEPTABLE, desc = "the consumer got the stage and its data")
@Outcome(id = "0, -1", expect = FORBIDDEN, desc = "a lost wake-up: the consumer slept through its wait")
@Outcome(expect = FORBIDDEN, desc = "the stage was ready but its data stale")
@State
public class SoloCommitWakesParkedConsumer {

    private final PipelineHandles pipes = new PipelineHandles(1, WaitStrategy.BLOCKING);
    private int data;

    @Actor
    public void producer() {
        Pipeline pipe = pipes.makeProducer();
        pipe.producerAcquire();
        data = 42;
        pipe.producerCommit();
    }

    @Actor
    public void consumer(II_Result r) {
        Pipeline pipe = pipes.makeConsumer();
        boolean ready = pipe.consumerWaitFor(Duration.ofSeconds(1));
        r.r1 = ready ? 1 : 0;
        r.r2 = ready ? data : -1;
    }
}
