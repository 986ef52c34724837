package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.internal.EngineProbe;
import dev.jpipeline.internal.PhaseBarrier;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Sides of several threads split into groups, each with its own barrier per stage (StageSide): a wait looks at every
 * group, skipping the deserted ones. What that must not change: a dead producer is still noticed by a polling
 * consumer, and a group deserted long ago never passes for one that delivered. Every wait is bounded.
 */
class StageGroupsTest {

    private static final Duration BOUND = Duration.ofSeconds(30);

    /**
     * A consumer that polls with short timeouts notices a producer whose thread ended without quit, also when
     * another producer's group has delivered: rank 0 commits batch 0 and quits, rank 1's thread ends. The poll clock
     * runs across the polls of the whole side (one group found complete must not restart it), so within the
     * patience the dead rank is abandoned and the batch, which the live producer committed, is delivered.
     */
    @Test
    void aPollingConsumerNoticesADeadProducerWhenAnotherProducerGroupHasDelivered() {
        assertTimeoutPreemptively(BOUND, () -> {
            PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 1)
                .detectDeadlocks(Duration.ofMillis(200)).build();
            ThreadTeam team = ThreadTeam.ofPlatform(3);
            Thread live = Thread.ofPlatform().name("live-producer").start(() -> {
                Pipeline pipe = Pipeline.make(team.member(0), state, PipelineRole.PRODUCER);
                pipe.producerAcquire();
                pipe.producerCommit();
                pipe.quit();
            });
            Thread dying = Thread.ofPlatform().name("dying-producer").start(() -> {
                Pipeline.make(team.member(1), state, PipelineRole.PRODUCER);
                // ends without quit()
            });
            AtomicReference<Object> outcome = new AtomicReference<>();
            Thread consumer = Thread.ofPlatform().start(() -> {
                Pipeline pipe = Pipeline.make(team.member(2), state, PipelineRole.CONSUMER);
                try {
                    live.join();
                    dying.join();
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
                outcome.set(Teams.pollWaits(pipe, 5_000));     // the patience is 200 ms
            });
            consumer.join();
            assertTrue(String.valueOf(outcome.get()).startsWith("delivered"),
                "rank 0 committed batch 0 and rank 1 was abandoned: " + outcome.get());
        });
    }

    /**
     * Producer rank 0 quits before committing anything: its group's barrier stays at phase 0, expecting nobody,
     * forever. Producer rank 1 and the consumer run on (fast-forwarded here to 2^23 - 1 rounds of the one stage,
     * where phase 0 modulo 2^23 is the phase after the consumer's round), then rank 1 quits. No producer is left
     * and the batch was never committed: the consumer must be told so, not handed the stage because the deserted
     * group's frozen phase looks like the round's completion. The control is a round without that coincidence.
     */
    @Test
    void aBatchNobodyCommittedIsNotDeliveredAfterADesertedGroupWraps() {
        assertEquals("told", phantomOutcome((1 << 22) * 2 - 2).split(":")[0], "control: no wrap coincidence");
        String outcome = phantomOutcome((1 << 23) - 1);
        assertEquals("told", outcome.split(":")[0], outcome);
    }

    private static String phantomOutcome(int rounds) {
        return assertTimeoutPreemptively(BOUND, () -> {
            PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 1)
                .detectDeadlocks(Duration.ZERO).build();
            Pipeline[] pipes = new Pipeline[3];
            AtomicReference<String> outcome = new AtomicReference<>();
            ThreadTeam.ofPlatform(3).run(BOUND, g -> {
                int rank = g.threadRank();
                Pipeline pipe = Pipeline.make(g, state, rank < 2 ? PipelineRole.PRODUCER : PipelineRole.CONSUMER);
                pipes[rank] = pipe;
                if (rank == 0) {
                    pipe.quit();                    // deserts producer group 0 at phase 0
                }
                g.sync();
                if (rank == 2) {                    // fast-forward: `rounds` batches produced by rank 1, consumed
                    PhaseBarrier[][] produced = EngineProbe.groups(pipes[2].handle(), true);
                    PhaseBarrier[][] consumed = EngineProbe.groups(pipes[2].handle(), false);
                    if (EngineProbe.word(produced[0][0]) != 0) {
                        throw new AssertionError("group 0 should be at phase 0, expected 0");
                    }
                    EngineProbe.setWord(produced[1][0], ((long) rounds << 41) | (1L << 20));
                    EngineProbe.setWord(consumed[0][0], ((long) rounds << 41) | (1L << 20));
                    EngineProbe.setHeadRound(pipes[1].handle(), rounds);
                    EngineProbe.setTailRound(pipes[2].handle(), rounds);
                }
                g.sync();
                if (rank == 1) {
                    pipe.quit();                    // no producer is left
                }
                g.sync();
                if (rank == 2) {
                    try {
                        pipe.consumerWait();
                        outcome.set("returned: consumer_wait returned batch " + rounds + ", which nobody committed");
                    } catch (IllegalStateException e) {
                        outcome.set("told: " + e.getMessage());
                    }
                    pipe.quit();
                }
            });
            return outcome.get();
        });
    }
}
