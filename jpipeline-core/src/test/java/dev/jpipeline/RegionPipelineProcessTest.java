package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * System-scope pipelines whose ranks run in several JVMs (children started with ProcessBuilder, see
 * RegionPipelineChild), with the crash cases: a consumer killed mid-run, a producer killed holding a stage, and the
 * region used again after a crash.
 */
@Timeout(120)
class RegionPipelineProcessTest {

    @TempDir
    Path dir;

    @RegisterExtension
    final ChildProcesses children = new ChildProcesses();

    private Process child(Path file, int size, int rank, int stages, int stageBytes, long batches, String... extra)
        throws Exception {
        return children.add(RegionPipelineChild.start(file, size, rank, stages, stageBytes, batches, extra));
    }

    /** Runs rank {@code rank} in this JVM, on a thread of its own. */
    private static CompletableFuture<String> thread(SharedRegion region, int size, int rank, int stages,
                                                    int stageBytes, long batches) {
        CompletableFuture<String> result = new CompletableFuture<>();
        Thread.ofPlatform().name("rank-" + rank).start(() -> {
            try {
                result.complete(RegionPipelineChild.run(region, region.join(size, rank),
                    RegionPipelineChild.roleOf(size, rank), stages, stageBytes, batches, false, () -> { }));
            } catch (Throwable e) {
                result.completeExceptionally(e);
            }
        });
        return result;
    }

    @Test
    void oneProducerHereOneConsumerInAnotherJvmDeliverEveryByte() throws Exception {
        Path file = dir.resolve("r");
        try (SharedRegion region = SharedRegion.create(file, RegionPipelineChild.dataBytes(2, 4, 8192),
            SharedRegion.Sharing.OWNER)) {
            Process consumer = child(file, 2, 1, 4, 8192, 3000);
            CompletableFuture<String> producer = thread(region, 2, 0, 4, 8192, 3000);
            assertEquals("produced 3000", producer.get(60, TimeUnit.SECONDS));
            BufferedReader lines = ChildProcesses.out(consumer);
            assertEquals("joined", lines.readLine());
            assertEquals("consuming", lines.readLine());
            assertEquals("ok 3000 " + RegionPipelineChild.expectedSum(8192, 3000), lines.readLine());
            assertTrue(consumer.waitFor(30, TimeUnit.SECONDS));
            assertEquals(0, consumer.exitValue());
        }
    }

    @Test
    void twoProducersTwoConsumersOverThreeJvmsDeliverEveryByte() throws Exception {
        Path file = dir.resolve("r");
        try (SharedRegion region = SharedRegion.create(file, RegionPipelineChild.dataBytes(4, 3, 3000),
            SharedRegion.Sharing.OWNER)) {
            Process producer = child(file, 4, 1, 3, 3000, 1000);
            Process consumer = child(file, 4, 3, 3, 3000, 1000);
            CompletableFuture<String> here0 = thread(region, 4, 0, 3, 3000, 1000);
            CompletableFuture<String> here2 = thread(region, 4, 2, 3, 3000, 1000);
            String ok = "ok 1000 " + RegionPipelineChild.expectedSum(3000, 1000);
            assertEquals("produced 1000", here0.get(60, TimeUnit.SECONDS));
            assertEquals(ok, here2.get(60, TimeUnit.SECONDS));
            assertEquals(List.of("joined", "produced 1000"), ChildProcesses.out(producer).lines().toList());
            assertEquals(List.of("joined", "consuming", ok), ChildProcesses.out(consumer).lines().toList());
        }
    }

    @Test
    void aConsumerKilledMidRunIsNamedToTheProducerWithinTwoSeconds() throws Exception {
        Path file = dir.resolve("r");
        try (SharedRegion region = SharedRegion.create(file, RegionPipelineChild.dataBytes(2, 4, 4096),
            SharedRegion.Sharing.OWNER)) {
            Process consumer = child(file, 2, 1, 4, 4096, Long.MAX_VALUE / 2);
            CompletableFuture<String> producer = thread(region, 2, 0, 4, 4096, Long.MAX_VALUE / 2);
            BufferedReader lines = ChildProcesses.out(consumer);
            assertEquals("joined", lines.readLine());
            assertEquals("consuming", lines.readLine());
            long killed = System.nanoTime();
            consumer.destroyForcibly();         // SIGKILL
            ExecutionException e = assertThrows(ExecutionException.class, () -> producer.get(10, TimeUnit.SECONDS));
            long tookMillis = (System.nanoTime() - killed) / 1_000_000;
            assertInstanceOf(IllegalStateException.class, e.getCause());
            String message = e.getCause().getMessage();
            assertTrue(message.contains("no consumer is left") && message.contains("rank 1 (pid " + consumer.pid()),
                message);
            assertTrue(tookMillis < 2000, "the producer heard of the death after " + tookMillis + " ms");
        }
    }

    @Test
    void aProducerKilledHoldingAStageFailsThatStageAndTheRegionServesAgain() throws Exception {
        Path file = dir.resolve("r");
        int stages = 3;
        int stageBytes = 4096;
        long dataBytes = RegionPipelineChild.dataBytes(2, stages, stageBytes);
        SharedRegion.create(file, dataBytes, SharedRegion.Sharing.OWNER).close();
        try (SharedRegion region = SharedRegion.open(file)) {
            Process producer = child(file, 2, 0, stages, stageBytes, 5, "hold");
            Group group = region.join(2, 1);
            PipelineSharedState state = PipelineSharedState.builder(ThreadScope.SYSTEM, stages).in(region, 0).build();
            Pipeline pipe = Pipeline.make(group, state, PipelineRole.CONSUMER);
            MemorySegment buffers = region.data().asSlice(PipelineSharedState.regionBytes(stages, 2));
            for (long b = 0; b < 5; b++) {
                pipe.consumerWait();
                MemorySegment stage = buffers.asSlice((b % stages) * stageBytes, stageBytes);
                for (int i = 0; i < stageBytes; i++) {
                    assertEquals(RegionPipelineChild.expected(b, i), stage.get(ValueLayout.JAVA_BYTE, i));
                }
                pipe.consumerRelease();
            }
            BufferedReader lines = ChildProcesses.out(producer);
            assertEquals("joined", lines.readLine());
            assertEquals("holding", lines.readLine());
            producer.destroyForcibly();
            StageFailedException failed = assertThrows(StageFailedException.class, pipe::consumerWait);
            assertEquals(5, failed.batch());
            assertEquals(5 % stages, failed.stage());
            assertTrue(failed.getCause().getMessage().contains("producer rank 0 (pid " + producer.pid())
                && failed.getCause().getMessage().contains("died after acquiring stage 2 (batch 5)"),
                failed.getCause().getMessage());
            pipe.consumerRelease();
            IllegalStateException gone = assertThrows(IllegalStateException.class, pipe::consumerWait);
            assertTrue(gone.getMessage().contains("no producer is left"), gone.getMessage());
            assertTrue(pipe.quit());
        }
        // the crashed run's region serves a new group and a new pipeline on the same state
        try (SharedRegion region = SharedRegion.open(file)) {
            Process producer = child(file, 2, 0, stages, stageBytes, 200);
            CompletableFuture<String> consumer = thread(region, 2, 1, stages, stageBytes, 200);
            assertEquals("ok 200 " + RegionPipelineChild.expectedSum(stageBytes, 200),
                consumer.get(60, TimeUnit.SECONDS));
            assertEquals(List.of("joined", "produced 200"), ChildProcesses.out(producer).lines().toList());
        }
    }
}
