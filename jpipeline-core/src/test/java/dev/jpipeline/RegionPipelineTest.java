package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** System-scope pipelines in a shared region, with every rank on a thread of this JVM. */
@Timeout(60)
class RegionPipelineTest {

    @TempDir
    Path dir;

    /** Runs every rank of a group of {@code size} on threads; returns what each printed. */
    private List<String> runThreads(Path file, int size, int stages, int stageBytes, long batches) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(size);
        try (SharedRegion region = SharedRegion.create(file,
                 RegionPipelineChild.dataBytes(size, stages, stageBytes), SharedRegion.Sharing.OWNER)) {
            List<Future<String>> results = new ArrayList<>();
            for (int r = 0; r < size; r++) {
                int rank = r;
                results.add(pool.submit(() -> RegionPipelineChild.run(region, region.join(size, rank),
                    RegionPipelineChild.roleOf(size, rank), stages, stageBytes, batches, false, () -> { })));
            }
            List<String> out = new ArrayList<>();
            for (Future<String> f : results) {
                out.add(f.get(30, TimeUnit.SECONDS));
            }
            return out;
        } finally {
            pool.shutdownNow();
            assertTrue(pool.awaitTermination(5, TimeUnit.SECONDS), "the ranks' threads did not end");
        }
    }

    @Test
    void oneProducerOneConsumerDeliverEveryByte() throws Exception {
        List<String> out = runThreads(dir.resolve("r"), 2, 4, 4096, 2000);
        assertEquals(List.of("produced 2000", "ok 2000 " + RegionPipelineChild.expectedSum(4096, 2000)), out);
    }

    @Test
    void twoProducersTwoConsumersDeliverEveryByte() throws Exception {
        List<String> out = runThreads(dir.resolve("r"), 4, 3, 1000, 500);
        String ok = "ok 500 " + RegionPipelineChild.expectedSum(1000, 500);
        assertEquals(List.of("produced 500", "produced 500", ok, ok), out);
    }

    @Test
    void aStateMustFitAndBeSystemScope() throws Exception {
        try (SharedRegion region = SharedRegion.create(dir.resolve("r"), 4096, SharedRegion.Sharing.OWNER)) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PipelineSharedState.builder(ThreadScope.BLOCK, 2).in(region, 0));
            assertTrue(e.getMessage().contains("SYSTEM"), e.getMessage());
            e = assertThrows(IllegalArgumentException.class,
                () -> PipelineSharedState.builder(ThreadScope.SYSTEM, 2).in(region, 64));
            assertTrue(e.getMessage().contains("multiple of 128"), e.getMessage());
            PipelineSharedState big = PipelineSharedState.builder(ThreadScope.SYSTEM, 255).in(region, 0).build();
            Group alone = region.join(1, 0);
            e = assertThrows(IllegalArgumentException.class, () -> Pipeline.make(alone, big));
            assertTrue(e.getMessage().contains("needs"), e.getMessage());
        }
        assertTrue(Files.exists(dir.resolve("r")));
    }
}
