package dev.jpipeline.stress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import dev.jpipeline.WaitStrategy;
import dev.jpipeline.internal.PhaseBarrier;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.I_Result;

/**
 * A waiter enters {@code Waiting.await} under {@link WaitStrategy#BLOCKING} (so it pushes its waiter node and
 * parks at once) while the phase's only arrival completes the phase and signals the stack. However the two
 * interleave, the waiter must return soon after the arrival: either it saw the phase complete before parking, or
 * the arrival unparked it. A lost wake-up (the arrival read the stack before the push, and the waiter did not poll
 * after pushing) leaves it asleep until its deadline, {@value BoundedWait#PATIENCE_MS} ms later: that is reported
 * as TIMED_OUT even though its last poll then finds the phase complete ({@link BoundedWait}).
 */
@JCStressTest
@Outcome(id = "0", expect = ACCEPTABLE, desc = "COMPLETE: the waiter returned soon after the arrival")
@Outcome(id = "1", expect = FORBIDDEN, desc = "TIMED_OUT: a lost wake-up, the waiter slept until its deadline")
@Outcome(expect = FORBIDDEN, desc = "the wait ended otherwise (abandoned, interrupted)")
@State
public class ParkVersusSignal {

    private final PhaseBarrier barrier = new PhaseBarrier(1);

    @Actor
    public void waiter(I_Result r) {
        long deadline = BoundedWait.deadline();
        r.r1 = BoundedWait.outcome(barrier.await(0, deadline, false, WaitStrategy.BLOCKING, barrier, null), deadline);
    }

    @Actor
    public void arrival() {
        barrier.arrive(1);
    }
}
