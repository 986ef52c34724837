package dev.jpipeline.stress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import dev.jpipeline.Pipeline;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * The producer's look-ahead: a producer whose acquire of stage 0 (second round) also found stage 1 released later
 * acquires stage 1 without reading its barrier again. It must not overwrite stage 1 while the consumer still
 * reads it: the consumer's reads happen-before its release, which the look that found it released acquired.
 */
@JCStressTest
@Outcome(id = "1, 2", expect = ACCEPTABLE, desc = "the consumer read both stages before they were refilled")
@Outcome(expect = FORBIDDEN, desc = "a stage was refilled before its consumer released it")
@State
public class LookAheadKeepsReleasedStages {

    private final PipelineHandles pipes = new PipelineHandles(2);
    private int first;
    private int second;

    @Actor
    public void producer() {
        Pipeline pipe = pipes.makeProducer();
        pipe.producerAcquire();
        first = 1;
        pipe.producerCommit();
        pipe.producerAcquire();
        second = 2;
        pipe.producerCommit();
        pipe.producerAcquire();        // stage 0 again: waits for its release, may learn of stage 1's
        first = 99;
        pipe.producerCommit();
        pipe.producerAcquire();        // stage 1 again
        second = 99;
        pipe.producerCommit();
    }

    @Actor
    public void consumer(II_Result r) {
        Pipeline pipe = pipes.makeConsumer();
        pipe.consumerWait();
        r.r1 = first;
        pipe.consumerRelease();
        pipe.consumerWait();
        r.r2 = second;
        pipe.consumerRelease();
    }
}
