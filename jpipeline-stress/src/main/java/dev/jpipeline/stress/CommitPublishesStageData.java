package dev.jpipeline.stress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import dev.jpipeline.Pipeline;
import java.time.Duration;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * Plain writes a producer makes before {@code producerCommit()} are visible to a consumer whose wait for that
 * stage succeeds. The consumer polls once ({@code consumerWaitFor(ZERO)}) so that both orders are explored.
 */
@JCStressTest
@Outcome(id = "-1, -1", expect = ACCEPTABLE, desc = "the stage was not committed yet when the consumer looked")
@Outcome(id = "1, 2", expect = ACCEPTABLE, desc = "the stage was ready and its data complete")
@Outcome(expect = FORBIDDEN, desc = "the stage was ready but its data stale or torn")
@State
public class CommitPublishesStageData {

    private final PipelineHandles pipes = new PipelineHandles(2);
    private int x;
    private int y;

    @Actor
    public void producer() {
        Pipeline pipe = pipes.makeProducer();
        pipe.producerAcquire();
        x = 1;
        y = 2;
        pipe.producerCommit();
    }

    @Actor
    public void consumer(II_Result r) {
        if (pipes.makeConsumer().consumerWaitFor(Duration.ZERO)) {
            r.r1 = x;
            r.r2 = y;
        } else {
            r.r1 = -1;
            r.r2 = -1;
        }
    }
}
