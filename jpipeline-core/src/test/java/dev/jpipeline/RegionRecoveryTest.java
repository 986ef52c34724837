package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.internal.RegionProbe;
import java.io.BufferedReader;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Survivors of a dead rank of a system-scope pipeline in a shared region: a process killed (SIGKILL, in a child JVM,
 * see {@link RegionDyingRankChild}) or a thread that ended without quit, at the worst moments: while its consumers
 * poll with short timeouts, while its batches wait for their copies, between an arrival at a stage word and its
 * cursor's update. Each survivor is told, naming the dead rank's pid or thread, and the batches it left unfinished
 * fail; none waits forever. Every wait is bounded.
 *
 * <p>"Finding N" names a finding of the hostile review of system-scope pipelines in a shared region
 * (RegionHostileTest, refiled by component in issue 28); "issue 26, finding N" one of issue 26's.
 */
class RegionRecoveryTest {

    @TempDir
    Path dir;

    @RegisterExtension
    final ChildProcesses children = new ChildProcesses();

    /**
     * Finding 5: a consumer polling with timeouts shorter than the dead-process check's 100 ms never ran the check
     * (its clock restarted with every wait), so it polled forever for a producer that had been killed.
     */
    @Test
    void aConsumerPollingWithShortTimeoutsHearsOfAKilledProducer() {
        assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
            Path file = dir.resolve("r");
            try (SharedRegion region = SharedRegion.create(file, RegionPipelineChild.dataBytes(2, 2, 4096),
                SharedRegion.Sharing.OWNER)) {
                Process producer = children.add(RegionPipelineChild.start(file, 2, 0, 2, RegionRuns.STAGE_BYTES, 0,
                    "hold"));                   // holds batch 0
                Group group = region.join(2, 1);
                Pipeline pipe = Pipeline.make(group,
                    RegionRuns.state(region, 2), PipelineRole.CONSUMER);
                BufferedReader lines = ChildProcesses.out(producer);
                assertEquals("joined", lines.readLine());
                assertEquals("holding", lines.readLine());
                producer.destroyForcibly();
                assertTrue(producer.waitFor(10, TimeUnit.SECONDS));
                long killed = System.nanoTime();
                StageFailedException failed = assertThrows(StageFailedException.class, () -> {
                    long giveUp = System.nanoTime() + 5_000_000_000L;
                    while (!pipe.consumerWaitFor(Duration.ofMillis(5)) && System.nanoTime() < giveUp) {
                        Thread.onSpinWait();
                    }
                });
                long tookMillis = (System.nanoTime() - killed) / 1_000_000;
                assertEquals(0, failed.batch());
                assertTrue(failed.getCause().getMessage().contains("rank 0 (pid " + producer.pid()),
                    failed.getCause().getMessage());
                assertTrue(tookMillis < 2000, "the consumer heard of the death after " + tookMillis + " ms");
                pipe.consumerRelease();
                assertTrue(pipe.quit());
            }
        });
    }

    /**
     * Finding 6: with two mappings of one file in a process, a waiter on one mapping did not see the handles made
     * over the other (RegionLocals were per SharedRegion object), so a producer thread that ended holding a stage
     * left its consumer waiting forever.
     */
    @Test
    void aWaiterOnOneMappingLeavesForAnEndedThreadOfAnother() {
        assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
            Path file = dir.resolve("r");
            try (SharedRegion first = SharedRegion.create(file, RegionPipelineChild.dataBytes(2, 2, 4096),
                     SharedRegion.Sharing.OWNER);
                 SharedRegion second = SharedRegion.open(file)) {
                Group producerRank = first.join(2, 0);
                Group consumerRank = second.join(2, 1);
                Thread producer = Thread.ofPlatform().name("producer on the first mapping").start(() -> {
                    Pipeline pipe = Pipeline.make(producerRank, RegionRuns.state(first, 2), PipelineRole.PRODUCER);
                    pipe.producerAcquire();
                    pipe.producerCommit();
                    pipe.producerAcquire();         // ends holding batch 1, without quit
                });
                String outcome = Bounded.outcome("consumer", Duration.ofSeconds(10), () -> {
                    Pipeline pipe = Pipeline.make(consumerRank, RegionRuns.state(second, 2), PipelineRole.CONSUMER);
                    pipe.consumerWait();
                    pipe.consumerRelease();
                    try {
                        pipe.consumerWait();            // batch 1: held by a thread that ends
                        return "no failure";
                    } catch (StageFailedException e) {
                        return "failed batch " + e.batch() + ": " + e.getCause().getMessage();
                    } finally {
                        pipe.quit();
                    }
                });
                producer.join();
                assertTrue(outcome.startsWith("failed batch 1: ")
                    && outcome.contains("its thread 'producer on the first mapping' ended"), outcome);
            }
        });
    }

    /**
     * Known limit, fixed: a producer that died in a pipeline of two producers failed the batch it held, but later
     * batches completed with the other producer's share only, and the consumers took them for whole. Each of them
     * now fails, naming the dead producer.
     */
    @Test
    void aProducerDyingAmongTwoFailsTheBatchesThatLackItsShare() {
        assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
            Path file = dir.resolve("r");
            try (SharedRegion region = SharedRegion.create(file, RegionPipelineChild.dataBytes(4, 2, 4096),
                SharedRegion.Sharing.OWNER)) {
                Process dying = children.add(RegionPipelineChild.start(file, 4, 1, 2, RegionRuns.STAGE_BYTES, 2,
                    "hold"));                   // holds batch 2, half written
                CompletableFuture<String> producer = RegionRuns.rank(region, region.join(4, 0), 2, 10);
                PipelineSharedState state = RegionRuns.state(region, 2);
                List<Bounded.Run> consumers = new ArrayList<>();
                for (int r = 2; r < 4; r++) {
                    Group g = region.join(4, r);
                    consumers.add(Bounded.start("consumer " + r, () -> {
                        Pipeline pipe = Pipeline.make(g, state, PipelineRole.CONSUMER);
                        StringBuilder log = new StringBuilder();
                        for (int b = 0; b < 10; b++) {
                            String waited = Outcomes.of(pipe::consumerWait);
                            log.append(waited.equals("returned") ? "ok " : waited.startsWith("StageFailedException")
                                && waited.contains("rank 1 (pid " + dying.pid()) ? "failed " : waited + " ");
                            if (waited.startsWith("IllegalStateException")) {
                                break;
                            }
                            pipe.consumerRelease();
                        }
                        pipe.quit();
                        return log.toString().trim();
                    }));
                }
                BufferedReader lines = ChildProcesses.out(dying);
                assertEquals("joined", lines.readLine());
                assertEquals("holding", lines.readLine());
                dying.destroyForcibly();
                producer.handle((r, e) -> r).get(20, TimeUnit.SECONDS);
                long deadline = System.nanoTime() + 20_000_000_000L;
                for (Bounded.Run c : consumers) {
                    assertEquals("ok ok" + " failed".repeat(8), c.resultBy(deadline));
                }
            }
        });
    }

    /**
     * Issue 26, finding 1: a producer killed in producer_acquire while the batch it waits to overwrite still waits
     * for its copy (the steady state of a copy-bound run). The survivor that left for it took the arrival the
     * producer had made at that stage's word in the round before for a commit of the round it was acquiring (the
     * word was a phase behind the round asked about, and "not at the round" was read as "past it"): it counted one
     * commit too many, so the pending batch was never failed, the drop of that stage threw "cannot drop a party
     * from phase 2 of a barrier at phase 0" to one consumer, and the other waited forever. Every consumer is told
     * of each batch whose copy never landed, then that no producer is left, naming the dead pid.
     */
    @Test
    void aProducerKilledInAcquireWhileItsBatchesWaitForTheirCopiesIsNamedToEveryConsumer() {
        consumersOfAKilledProducerAreTold("unlanded-acquire", "acquiring", false, "unlanded unlanded gone");
    }

    /** The same with the producer killed holding batch 1, a copy tied to it, while batch 0's copy is pending. */
    @Test
    void aProducerKilledHoldingABatchWhileTheOneBeforeWaitsForItsCopyIsNamedToEveryConsumer() {
        consumersOfAKilledProducerAreTold("unlanded-hold", "holding", false, "unlanded uncommitted gone");
    }

    /**
     * The same with the producer killed between its last commit's arrival and its cursors' update (its cursors
     * rewound to what they held then), the copies of both its batches pending: the survivor counts that commit
     * from the word.
     */
    @Test
    void aProducerKilledBetweenACommitAndItsCursorWithCopiesPendingIsNamedToEveryConsumer() {
        consumersOfAKilledProducerAreTold("unlanded-rewound", "rewound", false, "unlanded unlanded gone");
    }

    /**
     * The same with the batch landed (no copy): the word is past the round, so its batch counts as committed and
     * is delivered, not failed as a batch acquired and never committed. One consumer reads it before the kill (a
     * read of a complete batch does not wait, so it does not look for the dead), then waits for the next batch
     * and leaves for the producer; the other reads it only after that.
     */
    @Test
    void aProducerKilledBetweenALandedCommitAndItsCursorDeliversThatBatch() {
        consumersOfAKilledProducerAreTold("landed-rewound", "rewound", true, "ok gone");
    }

    /**
     * The consumer side's correction: a consumer killed between its release's arrival and its count's update. The
     * survivor counts that release from the word (dropping the consumer from the round it had released instead
     * would throw), and the producer is told that no consumer is left, naming the pid.
     */
    @Test
    void aConsumerKilledBetweenAReleaseAndItsCountIsNamedToTheProducer() {
        assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
            Path file = dir.resolve("r");
            try (SharedRegion region = SharedRegion.create(file, RegionPipelineChild.dataBytes(2,
                RegionDyingRankChild.STAGES, RegionDyingRankChild.STAGE_BYTES), SharedRegion.Sharing.OWNER)) {
                Process consumer = RegionDyingRankChild.start(file, 2, 1, "released-rewound");
                children.add(consumer);
                Group group = region.join(2, 0);
                CountDownLatch killed = new CountDownLatch(1);
                Bounded.Run producer = Bounded.start("producer", () -> {
                    Pipeline pipe = Pipeline.make(group, RegionRuns.state(region, RegionDyingRankChild.STAGES),
                        PipelineRole.PRODUCER);
                    int committed = 0;
                    try {
                        for (; committed < 10; committed++) {
                            if (committed == 1 && !killed.await(20, TimeUnit.SECONDS)) {
                                return "the consumer was not killed";
                            }
                            pipe.producerAcquire();
                            pipe.producerCommit();
                        }
                        return "committed " + committed;
                    } catch (IllegalStateException e) {
                        return "committed " + committed + ", then " + (e.getMessage().contains("no consumer is "
                            + "left") && e.getMessage().contains("rank 1 (pid " + consumer.pid() + " ")
                            && e.getMessage().contains("died without quit") ? "gone" : Bounded.describe(e));
                    } finally {
                        pipe.quit();
                    }
                });
                BufferedReader lines = ChildProcesses.out(consumer);
                assertEquals("joined", lines.readLine());
                assertEquals("rewound", lines.readLine());
                consumer.destroyForcibly();
                assertTrue(consumer.waitFor(10, TimeUnit.SECONDS));
                killed.countDown();
                // batches 1 and 2 need only batch 0 released; batch 3 needs batch 1, which nobody is left to release
                assertEquals("committed 3, then gone", producer.result(Duration.ofSeconds(20)));
            }
        });
    }

    /**
     * Runs a RegionDyingRankChild producer (rank 0 of 3) in {@code mode} and two consumers on threads here (ranks 1
     * and 2), kills the producer once it printed {@code said} (in {@code unlanded-acquire}, once it sleeps in
     * producer_acquire), and returns what each consumer was told, a word per wait: {@code ok} (a batch),
     * {@code unlanded} (a batch whose copy never landed), {@code uncommitted} (a batch acquired and never
     * committed), {@code gone} (no producer is left), each naming the dead pid, or else the exception. Both
     * consumers wait from before the kill, or ({@code staggered}) consumer 1 does, and consumer 2 starts once
     * consumer 1 has been told everything (after a survivor left for the producer). Asserts that each was told
     * {@code expected}, within a minute.
     */
    private void consumersOfAKilledProducerAreTold(String mode, String said, boolean staggered, String expected) {
        assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
            Path file = dir.resolve("r");
            try (SharedRegion region = SharedRegion.create(file, RegionPipelineChild.dataBytes(3,
                RegionDyingRankChild.STAGES, RegionDyingRankChild.STAGE_BYTES), SharedRegion.Sharing.OWNER)) {
                Process producer = RegionDyingRankChild.start(file, 3, 0, mode);
                children.add(producer);
                String pid = "rank 0 (pid " + producer.pid() + " ";
                PipelineSharedState state = RegionRuns.state(region, RegionDyingRankChild.STAGES);
                CountDownLatch go1 = new CountDownLatch(1);
                CountDownLatch go2 = new CountDownLatch(1);
                List<Bounded.Run> consumers = new ArrayList<>();
                for (int r = 1; r < 3; r++) {
                    Group g = region.join(3, r);
                    CountDownLatch go = r == 1 ? go1 : go2;
                    consumers.add(Bounded.start("consumer " + r, () -> {
                        Pipeline pipe = Pipeline.make(g, state, PipelineRole.CONSUMER);
                        if (!go.await(20, TimeUnit.SECONDS)) {
                            return "the producer was not killed";
                        }
                        List<String> told = new ArrayList<>();
                        try {
                            for (int b = 0; b < 6; b++) {
                                try {
                                    pipe.consumerWait();
                                    told.add("ok");
                                } catch (StageFailedException e) {
                                    String why = e.getCause().getMessage();
                                    told.add(!why.contains(pid) ? Bounded.describe(e) + " cause: " + why
                                        : why.contains("never landed") ? "unlanded"
                                        : why.contains("without committing it") ? "uncommitted" : why);
                                }
                                pipe.consumerRelease();
                            }
                        } catch (IllegalStateException e) {
                            told.add(e.getMessage().contains("no producer is left") && e.getMessage().contains(pid)
                                && e.getMessage().contains("died without quit") ? "gone" : Bounded.describe(e));
                        } finally {
                            pipe.quit();
                            go2.countDown();        // staggered: consumer 2 starts once consumer 1 was told
                        }
                        return String.join(" ", told);
                    }));
                }
                BufferedReader lines = ChildProcesses.out(producer);
                assertEquals("joined", lines.readLine());
                assertEquals(said, lines.readLine());
                go1.countDown();
                if (!staggered) {
                    go2.countDown();
                }
                // the consumers asleep on their first batch that is not complete: 0, or (staggered, consumer 1 alone) 1
                awaitSleepers(region, RegionProbe.producedWordAt(region.data(), 0, staggered ? 1 : 0),
                    staggered ? 1 : 2);
                if (mode.equals("unlanded-acquire")) {
                    // the producer asleep in producer_acquire of batch 2, waiting for a consumer's release of batch 0
                    awaitSleepers(region, RegionProbe.consumedWordAt(region.data(), 0, 0), 1);
                }
                producer.destroyForcibly();         // SIGKILL
                assertTrue(producer.waitFor(10, TimeUnit.SECONDS));
                long deadline = System.nanoTime() + 20_000_000_000L;
                List<String> told = new ArrayList<>();
                for (Bounded.Run c : consumers) {
                    told.add(c.resultBy(deadline));
                }
                assertEquals(List.of(expected, expected), told);    // before the close, which a hung consumer refuses
            }
        });
    }

    /**
     * Issue 28, finding 5: a producer whose thread ended without quit in another process that lives on is left for
     * by that process's EndedThreadWatch, so its consumer here is told, although nothing in the producer's process
     * waits (a waiter's look leaves only for ranks of its own process whose thread ended, and for ranks whose process
     * died).
     */
    @Test
    void aConsumerIsToldOfAProducerThreadThatEndedInAnotherLiveProcess() {
        assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
            Path file = dir.resolve("r");
            try (SharedRegion region = SharedRegion.create(file, RegionPipelineChild.dataBytes(2,
                RegionDyingRankChild.STAGES, RegionDyingRankChild.STAGE_BYTES), SharedRegion.Sharing.OWNER)) {
                Process producer = children.add(RegionDyingRankChild.start(file, 2, 0, "ended-thread"));
                BufferedReader lines = ChildProcesses.out(producer);
                assertEquals("joined", lines.readLine());
                Group group = region.join(2, 1);
                String outcome = Bounded.outcome("consumer", Duration.ofSeconds(10), () -> {
                    Pipeline pipe = Pipeline.make(group, RegionRuns.state(region, RegionDyingRankChild.STAGES),
                        PipelineRole.CONSUMER);
                    try {
                        pipe.consumerWait();
                        pipe.consumerRelease();
                        assertEquals("ended", lines.readLine());
                        try {
                            pipe.consumerWait();            // batch 1: held by the thread that ended
                            return "batch 1 returned";
                        } catch (StageFailedException e) {
                            return "failed batch " + e.batch() + ": " + e.getCause().getMessage();
                        }
                    } finally {
                        pipe.quit();
                    }
                });
                assertTrue(outcome.startsWith("failed batch 1: ") && outcome.contains("ended producer"), outcome);
            }
        });
    }

    /** Waits (up to 10 s) until at least {@code count} threads sleep in futex on the stage word at {@code cellAt}. */
    private static void awaitSleepers(SharedRegion region, long cellAt, int count) {
        long giveUp = System.nanoTime() + 10_000_000_000L;
        while (RegionProbe.sleepersOn(region.data(), cellAt) < count) {
            assertTrue(System.nanoTime() < giveUp, "fewer than " + count + " threads sleep on the stage word at "
                + cellAt + " after 10 s");
            Thread.yield();
        }
    }
}
