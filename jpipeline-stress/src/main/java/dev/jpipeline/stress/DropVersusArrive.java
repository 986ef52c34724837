package dev.jpipeline.stress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import dev.jpipeline.internal.PhaseBarrier;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.IIII_Result;

/**
 * A party's arrival races another party leaving the same phase, in the three ways a party can leave. Each
 * barrier expects 3 parties and party C has already arrived at phase 0; party A arrives, party B leaves:
 * <pre>
 *   leaving                      barrier   B's arrival at phase 0
 *   dropFromRound(0)             quit      none: B leaves before arriving
 *   arriveAndDrop()              last      B's last arrival is this one
 *   dropFromRound(1)             withdraw  made before the race: the drop withdraws it if phase 0 is still open
 * </pre>
 * Whatever the order, phase 0 completes exactly once (the phase is 1, not 0 or 2), the next phase expects the two
 * remaining parties with no arrival counted, and A's arrival is at phase 0. Each barrier's word is reported as a
 * {@link BarrierWord} (phase, expected, arrived as three digits); the last result holds A's three arrival phases
 * as three digits the same way.
 */
@JCStressTest
@Outcome(id = "120, 120, 120, 0", expect = ACCEPTABLE,
    desc = "phase 0 completed once in every barrier, 2 parties expected, nothing arrived at phase 1")
@Outcome(expect = FORBIDDEN, desc = "a phase completed twice or never, or a count is wrong after the race")
@State
public class DropVersusArrive {

    private final PhaseBarrier quit;
    private final PhaseBarrier last;
    private final PhaseBarrier withdraw;
    private int arrivedAt;

    public DropVersusArrive() {
        this(new PhaseBarrier(3), new PhaseBarrier(3), new PhaseBarrier(3));
    }

    /** The race on three fresh barriers that expect 3 parties each (a subclass's, in other memory). */
    protected DropVersusArrive(PhaseBarrier quit, PhaseBarrier last, PhaseBarrier withdraw) {
        this.quit = quit;
        this.last = last;
        this.withdraw = withdraw;
        quit.arrive(1);                 // C
        last.arrive(1);                 // C
        withdraw.arrive(1);             // C
        withdraw.arrive(1);             // B, who will withdraw this arrival if phase 0 is still open
    }

    @Actor
    public void partyA() {
        arrivedAt = quit.arrive(1) * 100 + last.arrive(1) * 10 + withdraw.arrive(1);
    }

    @Actor
    public void partyB() {
        quit.dropFromRound(0);
        last.arriveAndDrop();
        withdraw.dropFromRound(1);
    }

    @Arbiter
    public void observe(IIII_Result r) {
        r.r1 = BarrierWord.of(quit);
        r.r2 = BarrierWord.of(last);
        r.r3 = BarrierWord.of(withdraw);
        r.r4 = arrivedAt;
    }
}
