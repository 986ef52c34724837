package dev.jpipeline.stress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import dev.jpipeline.Pipeline;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;

/**
 * A producer's {@code producerAcquire()} of a stage never returns while a consumer of that stage has not
 * released it: with one stage and batch 0 committed, the producer's acquire of batch 1 must see everything the
 * consumer did before its release, and the consumer must never read batch 1's data while it still holds batch 0.
 */
@JCStressTest
@Outcome(id = "1, 10, 1", expect = ACCEPTABLE, desc = "acquire returned after the release and saw its effects")
@Outcome(expect = FORBIDDEN, desc = "acquire overtook the release, or the consumer saw the next batch early")
@State
public class AcquireWaitsForRelease {

    private final PipelineHandles pipes = new PipelineHandles(1);
    private int stage;
    private int consumerFinished;
    private int consumerSawRelease;

    @Actor
    public void producer(III_Result r) {
        Pipeline pipe = pipes.makeProducer();
        pipe.producerAcquire();
        stage = 10;                                  // batch 0
        pipe.producerCommit();
        pipe.producerAcquire();                      // batch 1: needs the release of batch 0
        r.r1 = consumerFinished;
        stage = 20;
        pipe.producerCommit();
        r.r3 = consumerSawRelease;
    }

    @Actor
    public void consumer(III_Result r) {
        Pipeline pipe = pipes.makeConsumer();
        pipe.consumerWait();
        r.r2 = stage;
        consumerFinished = 1;
        consumerSawRelease = 1;
        pipe.consumerRelease();
    }
}
