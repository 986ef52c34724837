package dev.jpipeline.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.AsyncContractFulfillment;
import dev.jpipeline.Group;
import dev.jpipeline.MemcpyAsync;
import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.SharedRegion;
import dev.jpipeline.StageFailedException;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.internal.process.MappedAtomics;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A region whose file another process truncates while it is mapped (issue 26): every access past the new end is an
 * exception in the accessing thread that names the rule, never a fatal signal; in an interpreted JVM too, where
 * HotSpot leaves a compare-and-set's fault fatal unless MappedAtomics loads the word first.
 */
@Timeout(60)
class RegionTruncationTest {

    @TempDir
    Path dir;

    private static void truncate(Path file, long size) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
            channel.truncate(size);
        }
    }

    /** Starts RegionTruncationChild interpreted ({@code -Xint}), with its output merged. */
    private Process child(Path file, String mode) throws IOException {
        List<String> command = new ArrayList<>(ChildJvm.command(RegionTruncationChild.class, file.toString(), mode));
        command.removeIf(option -> option.startsWith("-XX:TieredStopAtLevel"));
        command.add(1, "-Xint");
        command.add(1, "-XX:-CreateCoredumpOnCrash");
        command.add(1, "-XX:ErrorFile=" + dir.resolve("hs_err_%p.log"));     // a crash (the bug) litters nothing
        return new ProcessBuilder(command).redirectErrorStream(true).start();
    }

    private static String finish(Process child, BufferedReader out) throws Exception {
        assertTrue(child.waitFor(40, TimeUnit.SECONDS), "the child did not end");
        String rest = out.lines().collect(Collectors.joining("\n"));
        assertEquals(0, child.exitValue(), "the child died (134: a fatal signal):\n" + rest);
        return rest;
    }

    @Test
    void anInterpretedCompareAndSetPastATruncatedEndThrowsInsteadOfEndingTheJvm() throws Exception {
        Process child = child(dir.resolve("mapped"), "cas");
        BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
        String printed = finish(child, out);
        assertTrue(printed.contains("threw java.lang.InternalError: a fault occurred in an unsafe memory access"),
            printed);
    }

    @Test
    void anInterpretedPipelineWhoseRegionWasTruncatedFailsNamingTheRule() throws Exception {
        Path file = dir.resolve("region");
        SharedRegion.create(file, 1 << 16, SharedRegion.Sharing.OWNER).close();
        Process child = child(file, "pipeline");
        BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
        String line;
        StringBuilder seen = new StringBuilder();
        while ((line = out.readLine()) != null && !line.equals("ready")) {
            seen.append(line).append('\n');
        }
        assertEquals("ready", line, "the child never made its pipeline:\n" + seen);
        truncate(file, 4096);                              // the header stays; the pipeline's state is gone
        try (OutputStream in = child.getOutputStream()) {
            in.write('\n');
        }
        String printed = finish(child, out);
        assertTrue(printed.contains("threw java.lang.IllegalStateException: Pipeline[")
            && printed.contains("its file was truncated by another process while this process mapped it"), printed);
    }

    @Test
    void aPipelineAGroupAndAJoinOfATruncatedRegionEachFailNamingTheRule() throws Exception {
        Path file = dir.resolve("region");
        SharedRegion region = SharedRegion.create(file, 1 << 16, SharedRegion.Sharing.OWNER);
        Group group = region.join(1, 0);
        Pipeline pipe = Pipeline.make(group, PipelineSharedState.builder(ThreadScope.SYSTEM, 2).in(region, 0).build());
        truncate(file, 4096);
        IllegalStateException lost = assertThrows(IllegalStateException.class, pipe::producerAcquire);
        assertTrue(lost.getMessage().contains("its file was truncated by another process while this process mapped "
            + "it") && lost.getCause() instanceof InternalError, lost.getMessage());
        truncate(file, 0);
        lost = assertThrows(IllegalStateException.class, group::sync);
        assertTrue(lost.getMessage().startsWith("sync of rank 0 of region " + file), lost.getMessage());
        lost = assertThrows(IllegalStateException.class, () -> region.join(2, 1));
        assertTrue(lost.getMessage().contains("(the file is now 0 bytes, " + (4096 + (1 << 16)) + " bytes are "
            + "mapped here)"), lost.getMessage());
        lost = assertThrows(IllegalStateException.class, region::close);
        assertTrue(lost.getMessage().startsWith("close of region " + file), lost.getMessage());
        assertTrue(!region.data().scope().isAlive(), "a region that could not be left is unmapped all the same");
    }

    @Test
    void aMakeInARegionTruncatedWhileMappedThrowsTheIllegalStateExceptionNamingTheTruncation() throws Exception {
        Path file = dir.resolve("region");
        try (SharedRegion region = SharedRegion.create(file, 1 << 16, SharedRegion.Sharing.OWNER)) {
            Group group = region.join(1, 0);
            try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
                channel.truncate(4096);                 // the header stays; the pipeline's state is gone
            }
            IllegalStateException lost = assertThrows(IllegalStateException.class, () -> Pipeline.make(group,
                PipelineSharedState.builder(ThreadScope.SYSTEM, 2).in(region, 0).build()));
            assertTrue(lost.getMessage().contains("its file was truncated by another process while this process "
                + "mapped it"), lost.getMessage());
        } catch (IllegalStateException closeOfATruncatedRegion) {
            // close() may report the truncation too; the assertion above is what this test is about
            if (!closeOfATruncatedRegion.getMessage().startsWith("close of region")) {
                throw closeOfATruncatedRegion;
            }
        }
    }

    @Test
    void aSmallCopyIntoABufferTruncatedAwayFailsItsStageNotTheCall() throws Exception {
        Path file = dir.resolve("region");
        long dataBytes = 1 << 16;
        SharedRegion region = SharedRegion.create(file, dataBytes, SharedRegion.Sharing.OWNER);
        long header = java.nio.file.Files.size(file) - dataBytes;
        long state = (PipelineSharedState.regionBytes(2, 1) + 4095) & -4096L;
        Pipeline pipe = Pipeline.make(region.join(1, 0),
            PipelineSharedState.builder(ThreadScope.SYSTEM, 2).in(region, 0).build());
        pipe.producerAcquire();
        truncate(file, header + state);                 // the pipeline's state stays; the buffers after it are gone
        MemorySegment stage = region.data().asSlice(state + 4096, 64);
        assertEquals(AsyncContractFulfillment.NONE,
            MemcpyAsync.memcpyAsync(stage, Arena.ofAuto().allocate(64), 64, pipe), "copied inline");
        pipe.producerCommit();
        StageFailedException failed = assertThrows(StageFailedException.class, pipe::consumerWait);
        // a region's stage failure is a record in the region, for every process: it carries the fault's text
        assertTrue(String.valueOf(failed.getCause()).contains("a fault occurred in an unsafe memory access"),
            String.valueOf(failed.getCause()));
        pipe.consumerRelease();
        pipe.quit();
        closeTruncated(region);
    }

    /**
     * Issue 28, finding 2: an uninterruptible wait that a fault ended (its region's file truncated while it slept)
     * lost the interrupt it had remembered: the wait's end uncounts it on the wake word, which faulted too, and
     * that fault skipped the re-assertion of the interrupt. The waiter now keeps its interrupt status whatever the
     * end of its wait throws.
     */
    @Test
    void anUninterruptibleWaitEndedByATruncationKeepsItsInterrupt() throws Exception {
        Path file = dir.resolve("region");
        SharedRegion region = SharedRegion.create(file, 1 << 16, SharedRegion.Sharing.OWNER);
        PipelineSharedState state = PipelineSharedState.builder(ThreadScope.SYSTEM, 2).in(region, 0).build();
        Group producerRank = region.join(2, 0);
        Group consumerRank = region.join(2, 1);
        java.util.concurrent.CountDownLatch made = new java.util.concurrent.CountDownLatch(2);
        java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
        Thread producer = Thread.ofPlatform().daemon().start(() -> {
            Pipeline pipe = Pipeline.make(producerRank, state, dev.jpipeline.PipelineRole.PRODUCER);
            made.countDown();
            try {
                done.await();           // alive, never committing: the consumer waits until the truncation
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        java.util.concurrent.CompletableFuture<String> consumer = new java.util.concurrent.CompletableFuture<>();
        Thread.ofPlatform().daemon().start(() -> {
            Pipeline pipe = Pipeline.make(consumerRank, state, dev.jpipeline.PipelineRole.CONSUMER);
            made.countDown();
            Thread.currentThread().interrupt();         // an uninterruptible wait remembers it
            try {
                pipe.consumerWait();
                consumer.complete("returned");
            } catch (IllegalStateException e) {
                consumer.complete((e.getMessage().contains("its file was truncated") ? "truncation" : e.toString())
                    + ", interrupted " + Thread.currentThread().isInterrupted());
            } catch (Throwable t) {
                consumer.complete(t.toString());
            }
        });
        assertTrue(made.await(10, TimeUnit.SECONDS));
        long cell = RegionProbe.producedWordAt(region.data(), 0, 0);
        long giveUp = System.nanoTime() + 10_000_000_000L;
        while (RegionProbe.sleepersOn(region.data(), cell) == 0) {     // the consumer counted, asleep in futex
            assertTrue(System.nanoTime() < giveUp, "the consumer never slept on its stage word");
            Thread.yield();
        }
        truncate(file, 4096);                           // the header stays; the pipeline's state is gone
        assertEquals("truncation, interrupted true", consumer.get(10, TimeUnit.SECONDS));
        done.countDown();
        producer.join(10_000);
        closeTruncated(region);
    }

    /**
     * Issue 28, finding 3: closing a region whose file was truncated threw, as it should, but left this process's
     * registry of the file's handles (RegionLocals) behind, with the handles made over the lost mapping in it. A
     * region created anew at the same path usually gets the freed inode, so the same file key: it inherited the
     * stale handles, and its first make left for those the close had not reached (their threads had ended) in the
     * unmapped memory, failing with "Already closed".
     */
    @Test
    void aTruncatedRegionsCloseForgetsItsHandlesSoARegionCreatedAnewAtItsPathWorks() throws Exception {
        Path file = dir.resolve("region");
        SharedRegion region = SharedRegion.create(file, 1 << 16, SharedRegion.Sharing.OWNER);
        Object key = java.nio.file.Files.readAttributes(file, java.nio.file.attribute.BasicFileAttributes.class)
            .fileKey();
        PipelineSharedState state = PipelineSharedState.builder(ThreadScope.SYSTEM, 2).in(region, 0).build();
        List<Thread> ended = new ArrayList<>();
        for (int rank = 0; rank < 2; rank++) {
            Group group = region.join(2, rank);
            ended.add(Thread.ofPlatform().start(() -> Pipeline.make(group, state)));     // ends without quit
        }
        for (Thread t : ended) {
            t.join(10_000);
        }
        truncate(file, 4096);                           // the header stays; the pipeline's state is gone
        IllegalStateException lost = assertThrows(IllegalStateException.class, region::close);
        assertTrue(lost.getMessage().startsWith("close of region " + file), lost.getMessage());
        IllegalStateException forgotten = assertThrows(IllegalStateException.class, () -> RegionLocals.of(key, 0),
            "the closed mapping's handles are still registered under the file's key");
        assertTrue(forgotten.getMessage().contains("is not mapped"), forgotten.getMessage());
        java.nio.file.Files.delete(file);
        try (SharedRegion again = SharedRegion.create(file, 1 << 16, SharedRegion.Sharing.OWNER)) {
            Pipeline pipe = Pipeline.make(again.join(1, 0),
                PipelineSharedState.builder(ThreadScope.SYSTEM, 2).in(again, 0).build());
            pipe.producerAcquire();
            pipe.producerCommit();
            pipe.consumerWait();
            pipe.consumerRelease();
            assertTrue(pipe.quit());
        }
    }

    /** Closes a region whose file was truncated: the close may refuse, naming the region. */
    private static void closeTruncated(SharedRegion region) {
        try {
            region.close();
        } catch (IllegalStateException closeOfATruncatedRegion) {
            assertTrue(closeOfATruncatedRegion.getMessage().startsWith("close of region"),
                closeOfATruncatedRegion.getMessage());
        }
    }
}
