package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The hostile review of system-scope pipelines in a shared region: crashes at the worst moments (children killed
 * or halting themselves, see RegionHostileChild), threads that end or regions that close without quit, copies in
 * flight across makes, corrupted words, and long runs. Every wait is bounded: a regression fails, never hangs.
 */
class RegionHostileTest {

    @TempDir
    Path dir;

    private final List<Process> children = new ArrayList<>();

    @AfterEach
    void killChildren() {
        children.forEach(Process::destroyForcibly);
    }

    private Process pipelineChild(Path file, int size, int rank, int stages, long batches, String... extra)
        throws Exception {
        Process p = RegionPipelineChild.start(file, size, rank, stages, 4096, batches, extra);
        children.add(p);
        return p;
    }

    private static BufferedReader out(Process p) {
        return new BufferedReader(new InputStreamReader(p.getInputStream()));
    }

    /** Runs rank {@code rank} of a RegionPipelineChild run in this JVM, on a thread of its own. */
    private static CompletableFuture<String> thread(SharedRegion region, Group group, int stages, long batches) {
        CompletableFuture<String> result = new CompletableFuture<>();
        Thread.ofPlatform().name("rank-" + group.threadRank()).start(() -> {
            try {
                result.complete(RegionPipelineChild.run(region, group,
                    RegionPipelineChild.roleOf(group.size(), group.threadRank()), stages, 4096, batches, false,
                    () -> { }));
            } catch (Throwable e) {
                result.completeExceptionally(e);
            }
        });
        return result;
    }

    /** Both ranks of a 1-producer, 1-consumer run on threads of this JVM: what each returned. */
    private static List<String> runHere(SharedRegion region, int stages, long batches) throws Exception {
        CompletableFuture<String> producer = thread(region, region.join(2, 0), stages, batches);
        CompletableFuture<String> consumer = thread(region, region.join(2, 1), stages, batches);
        return List.of(producer.get(20, TimeUnit.SECONDS), consumer.get(20, TimeUnit.SECONDS));
    }

    private static List<String> ran(int stages, long batches) {
        return List.of("produced " + batches, "ok " + batches + " " + RegionPipelineChild.expectedSum(4096, batches));
    }

    /** Finding 1: a make's proposals overwrote the dead makers' records, so the state refused every new make. */
    @Test
    void aStateWhoseProcessesWereAllKilledIsMadeOnAgain() {
        assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
            Path file = dir.resolve("r");
            SharedRegion.create(file, RegionPipelineChild.dataBytes(2, 2, 4096), SharedRegion.Sharing.OWNER).close();
            Process producer = pipelineChild(file, 2, 0, 2, 3, "hold");
            Process consumer = pipelineChild(file, 2, 1, 2, Long.MAX_VALUE / 2);
            BufferedReader produced = out(producer);
            assertEquals("joined", produced.readLine());
            assertEquals("holding", produced.readLine());
            BufferedReader consumed = out(consumer);
            assertEquals("joined", consumed.readLine());
            assertEquals("consuming", consumed.readLine());
            producer.destroyForcibly();
            consumer.destroyForcibly();
            assertEquals(true, producer.waitFor(10, TimeUnit.SECONDS) && consumer.waitFor(10, TimeUnit.SECONDS));
            try (SharedRegion region = SharedRegion.open(file)) {
                assertEquals(ran(2, 50), runHere(region, 2, 50));
            }
        });
    }

    /**
     * Finding 2: a rank that died between the make's two syncs left the places that rank 0 had formatted held, its
     * own and rank 0's, so that every later make was refused.
     */
    @Test
    void aRankDyingBetweenTheMakesSyncsDoesNotLockTheState() {
        assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
            Path file = dir.resolve("r");
            try (SharedRegion region = SharedRegion.create(file, RegionPipelineChild.dataBytes(2, 2, 4096),
                SharedRegion.Sharing.OWNER)) {
                Process dying = RegionHostileChild.start(file, 2, 1, "halt-in-make");
                children.add(dying);
                assertEquals("joined", out(dying).readLine());
                Group group = region.join(2, 0);
                PipelineSharedState state = PipelineSharedState.builder(ThreadScope.SYSTEM, 2).in(region, 0).build();
                IllegalStateException broken = assertThrows(IllegalStateException.class,
                    () -> Pipeline.make(group, state, PipelineRole.PRODUCER));
                assertTrue(broken.getMessage().contains("rank 1") && broken.getMessage().contains("died"),
                    broken.getMessage());
            }
            try (SharedRegion region = SharedRegion.open(file)) {       // a new group, the same state
                assertEquals(ran(2, 50), runHere(region, 2, 50));
            }
        });
    }

    /** Finding 3: handles whose threads ended without quit (and never waited) blocked the next make. */
    @Test
    void localThreadsThatEndedWithoutQuitDoNotBlockTheNextMake() {
        assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
            try (SharedRegion region = SharedRegion.create(dir.resolve("r"), RegionPipelineChild.dataBytes(2, 2, 4096),
                SharedRegion.Sharing.OWNER)) {
                Group producer = region.join(2, 0);
                Group consumer = region.join(2, 1);
                List<Thread> makers = new ArrayList<>();
                for (Group g : List.of(producer, consumer)) {
                    makers.add(Thread.ofPlatform().start(() -> Pipeline.make(g,
                        PipelineSharedState.builder(ThreadScope.SYSTEM, 2).in(region, 0).build(),
                        PipelineRole.values()[g.threadRank()])));           // ends without quit
                }
                for (Thread t : makers) {
                    t.join();
                }
                CompletableFuture<String> p = thread(region, producer, 2, 50);
                CompletableFuture<String> c = thread(region, consumer, 2, 50);
                assertEquals(ran(2, 50), List.of(p.get(20, TimeUnit.SECONDS), c.get(20, TimeUnit.SECONDS)));
            }
        });
    }

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
                Process producer = pipelineChild(file, 2, 0, 2, 0, "hold");     // holds batch 0
                Group group = region.join(2, 1);
                Pipeline pipe = Pipeline.make(group,
                    PipelineSharedState.builder(ThreadScope.SYSTEM, 2).in(region, 0).build(), PipelineRole.CONSUMER);
                BufferedReader lines = out(producer);
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
}
