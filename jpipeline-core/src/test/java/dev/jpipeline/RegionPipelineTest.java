package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.internal.RegionProbe;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** System-scope pipelines in a shared region, with every rank on a thread of this JVM. */
@Timeout(60)
class RegionPipelineTest {

    @TempDir
    Path dir;

    /** Runs every rank of a group of {@code size} on threads; returns what each printed. */
    private List<Object> runThreads(Path file, int size, int stages, int stageBytes, long batches) throws Exception {
        try (SharedRegion region = SharedRegion.create(file,
                 RegionPipelineChild.dataBytes(size, stages, stageBytes), SharedRegion.Sharing.OWNER)) {
            return ranks(region, size, (rank, group) -> {
                try {
                    return RegionPipelineChild.run(region, group, RegionPipelineChild.roleOf(size, rank), stages,
                        stageBytes, batches, false, () -> { });
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
        }
    }

    @Test
    void closingTheRegionWaitsForACopyThatOutlivedItsProducersQuit() throws Exception {
        byte[] data = new byte[4096];
        java.util.Arrays.fill(data, (byte) 5);
        GatedFileChannel channel = new GatedFileChannel(data);
        java.util.concurrent.CountDownLatch gate = channel.gate(0);
        try (dev.jpipeline.copy.CopyEngine engine = dev.jpipeline.copy.CopyEngine.builder().workers(1)
                 .name("region-landing-test").build()) {
            SharedRegion region = SharedRegion.create(dir.resolve("r"), 1 << 16, SharedRegion.Sharing.OWNER);
            MemorySegment stage = region.data().asSlice(PipelineSharedState.regionBytes(2, 1), 4096);
            Pipeline pipe = Pipeline.make(region.join(1, 0), PipelineSharedState.builder(ThreadScope.SYSTEM, 2)
                .in(region, 0).copyEngine(engine).copyPolicy(CopyPolicy.ON_COPY_ENGINE).build());
            pipe.producerAcquire();
            assertEquals(AsyncContractFulfillment.ASYNC, MemcpyAsync.memcpyAsync(stage, channel, 0, 4096, pipe));
            pipe.producerCommit();
            assertTrue(pipe.quit());                // the read is held at its gate: it outlives the quit
            IllegalStateException refused = assertThrows(IllegalStateException.class, region::close);
            assertTrue(refused.getMessage().contains("1 memcpyAsync copies of pipelines made over it are still in "
                + "flight"), refused.getMessage());
            assertTrue(region.data().scope().isAlive(), "a refused close leaves the region mapped");
            gate.countDown();
            region.close();                         // waits for the landing, then unmaps
            assertFalse(region.data().scope().isAlive());
        }
    }

    @Test
    void oneProducerOneConsumerDeliverEveryByte() throws Exception {
        List<Object> out = runThreads(dir.resolve("r"), 2, 4, 4096, 2000);
        assertEquals(List.of("produced 2000", "ok 2000 " + RegionPipelineChild.expectedSum(4096, 2000)), out);
    }

    @Test
    void twoProducersTwoConsumersDeliverEveryByte() throws Exception {
        List<Object> out = runThreads(dir.resolve("r"), 4, 3, 1000, 500);
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

    /**
     * Runs {@code body(rank, group)} for every rank of a group of {@code size} on threads of this JVM, each joining
     * {@code region} (once per region); returns each rank's result (the exception for a rank that threw).
     */
    private static List<Object> ranks(SharedRegion region, int size, BiFunction<Integer, Group, Object> body)
        throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(size);
        try {
            List<Future<Object>> futures = new ArrayList<>();
            for (int r = 0; r < size; r++) {
                int rank = r;
                futures.add(pool.submit(() -> {
                    try {
                        return body.apply(rank, region.join(size, rank));
                    } catch (RuntimeException | Error e) {
                        return e;
                    }
                }));
            }
            List<Object> out = new ArrayList<>();
            for (Future<Object> f : futures) {
                out.add(f.get(30, TimeUnit.SECONDS));
            }
            return out;
        } finally {
            pool.shutdownNow();
            assertTrue(pool.awaitTermination(5, TimeUnit.SECONDS), "the ranks' threads did not end");
        }
    }

    @Test
    void aRegionWaitIdlesByThePipelinesWaitStrategy() throws Exception {
        // the one wait routine: a system-scope consumer's wait idles by its state's strategy before it sleeps in
        // futex, as an in-process one does (the producer commits only once the consumer was seen idling)
        java.util.concurrent.CountDownLatch idled = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.atomic.AtomicInteger idles = new java.util.concurrent.atomic.AtomicInteger();
        WaitStrategy counting = attempt -> {
            idles.incrementAndGet();
            idled.countDown();
            Thread.onSpinWait();
            return attempt < 64;
        };
        try (SharedRegion region = SharedRegion.create(dir.resolve("r"), 1 << 16, SharedRegion.Sharing.OWNER)) {
            PipelineSharedState state = PipelineSharedState.builder(ThreadScope.SYSTEM, 2).in(region, 0)
                .waitStrategy(counting).build();
            List<Object> out = ranks(region, 2, (rank, group) -> {
                Pipeline pipe = Pipeline.make(group, state,
                    rank == 0 ? PipelineRole.PRODUCER : PipelineRole.CONSUMER);
                try {
                    if (rank == 0) {
                        if (!idled.await(20, TimeUnit.SECONDS)) {
                            return "the consumer's wait never called the strategy";
                        }
                        pipe.producerAcquire();
                        pipe.producerCommit();
                    } else {
                        pipe.consumerWait();
                        pipe.consumerRelease();
                    }
                    return "done";
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                } finally {
                    pipe.quit();
                }
            });
            assertEquals(List.of("done", "done"), out);
            assertTrue(idles.get() > 0);
        }
    }

    @Test
    void unifiedAndCountPartitionedPipelinesRunInARegion() throws Exception {
        try (SharedRegion region = SharedRegion.create(dir.resolve("r"), 1 << 16, SharedRegion.Sharing.OWNER);
             SharedRegion second = SharedRegion.create(dir.resolve("r2"), 1 << 16, SharedRegion.Sharing.OWNER)) {
            MemorySegment slots = region.data().asSlice(PipelineSharedState.regionBytes(2, 2), 2 * 2 * Long.BYTES);
            // unified: each rank writes its own word of every batch and reads its partner's after the wait
            List<Object> sums = ranks(region, 2, (rank, group) -> {
                Pipeline pipe = Pipeline.make(group, RegionRuns.state(region, 2));
                long sum = 0;
                for (long b = 0; b < 1000; b++) {
                    pipe.producerAcquire();
                    slots.setAtIndex(ValueLayout.JAVA_LONG, (b % 2) * 2 + rank, b * 10 + rank);
                    pipe.producerCommit();
                    pipe.consumerWait();
                    sum += slots.getAtIndex(ValueLayout.JAVA_LONG, (b % 2) * 2 + (1 - rank));
                    pipe.consumerRelease();
                }
                pipe.quit();
                return sum;
            });
            assertEquals(List.of(499_500L * 10 + 1000, 499_500L * 10), sums);
            // partitioned by count: whoever acts first as a producer is the producer
            MemorySegment slots2 = second.data().asSlice(PipelineSharedState.regionBytes(2, 2), 2 * Long.BYTES);
            List<Object> counted = ranks(second, 2, (rank, group) -> {
                Pipeline pipe = Pipeline.make(group, RegionRuns.state(second, 2), 1);
                long sum = 0;
                for (long b = 0; b < 1000; b++) {
                    if (rank == 0) {
                        pipe.producerAcquire();
                        slots2.setAtIndex(ValueLayout.JAVA_LONG, b % 2, b);
                        pipe.producerCommit();
                    } else {
                        pipe.consumerWait();
                        sum += slots2.getAtIndex(ValueLayout.JAVA_LONG, b % 2);
                        pipe.consumerRelease();
                    }
                }
                pipe.quit();
                return sum;
            });
            assertEquals(List.of(0L, 499_500L), counted);
        }
    }

    @Test
    void aFailedReadIntoARegionStageFailsThatStageWithItsMessage() throws Exception {
        byte[] file = new byte[3 * 4096];
        GatedFileChannel channel = new GatedFileChannel(file);
        channel.failFrom(4096);                         // batch 1 fails
        try (SharedRegion region = SharedRegion.create(dir.resolve("r"), 1 << 16, SharedRegion.Sharing.OWNER)) {
            MemorySegment stages = region.data().asSlice(PipelineSharedState.regionBytes(2, 2), 2 * 4096);
            List<Object> out = ranks(region, 2, (rank, group) -> {
                Pipeline pipe = Pipeline.make(group, RegionRuns.state(region, 2), rank == 0 ? PipelineRole.PRODUCER
                    : PipelineRole.CONSUMER);
                StringBuilder log = new StringBuilder();
                for (int b = 0; b < 3; b++) {
                    if (rank == 0) {
                        pipe.producerAcquire();
                        if (b == 2) {
                            // batch 1's read (on the engine) may not have run yet: it must fail before the recovery
                            Teams.await(channel.served(4096), "batch 1's read");
                            channel.failFrom(Long.MAX_VALUE);       // the source recovers for batch 2
                        }
                        MemcpyAsync.memcpyAsync(stages.asSlice((b % 2) * 4096L, 4096), channel, 4096L * b, 4096, pipe);
                        pipe.producerCommit();
                    } else {
                        try {
                            pipe.consumerWait();
                            log.append("ok ");
                        } catch (StageFailedException e) {
                            log.append("failed(").append(e.stage()).append(',').append(e.batch()).append(") ")
                                .append(e.getCause().getMessage().contains("injected read error at position 4096")
                                    && e.getCause().getMessage().contains("recorded by pid "
                                    + ProcessHandle.current().pid())).append(' ');
                        }
                        pipe.consumerRelease();
                    }
                }
                pipe.quit();
                return log.toString();
            });
            assertEquals(List.of("", "ok failed(1,1) true ok "), out);
        }
    }

    @Test
    void makeRefusesDifferentStageCountsAndAStateWhosePreviousPipelineLives() throws Exception {
        try (SharedRegion region = SharedRegion.create(dir.resolve("r"), 1 << 16, SharedRegion.Sharing.OWNER);
             SharedRegion second = SharedRegion.create(dir.resolve("r2"), 1 << 16, SharedRegion.Sharing.OWNER)) {
            List<Object> out = ranks(region, 2, (rank, group) -> Pipeline.make(group,
                RegionRuns.state(region, 2 + rank)));
            for (Object o : out) {
                IllegalArgumentException e = assertInstanceOf(IllegalArgumentException.class, o);
                assertTrue(e.getMessage().contains("rank 1 made it on a state of 3 stages, rank 0 on 2"),
                    e.getMessage());
            }
            List<Object> again = ranks(second, 2, (rank, group) -> {
                Pipeline first = Pipeline.make(group, RegionRuns.state(second, 2), PipelineRole.values()[rank]);
                if (rank == 0) {
                    first.quit();               // rank 1 keeps its handle: the next make must refuse
                }
                group.sync();
                try {
                    return Pipeline.make(group, RegionRuns.state(second, 2), PipelineRole.values()[rank]);
                } catch (IllegalArgumentException e) {
                    return e;
                } finally {
                    first.quit();
                }
            });
            for (Object o : again) {
                IllegalArgumentException e = assertInstanceOf(IllegalArgumentException.class, o);
                assertTrue(e.getMessage().contains("rank 1 (pid " + ProcessHandle.current().pid())
                    && e.getMessage().contains("has not quit"), e.getMessage());
            }
        }
    }

    @Test
    void aProducerThreadThatEndsHoldingAStageFailsItAndIsNamed() throws Exception {
        try (SharedRegion region = SharedRegion.create(dir.resolve("r"), 1 << 16, SharedRegion.Sharing.OWNER)) {
            Group producerRank = region.join(2, 0);
            Group consumerRank = region.join(2, 1);
            Thread producer = Thread.ofPlatform().name("short-lived producer").start(() -> {
                Pipeline pipe = Pipeline.make(producerRank, RegionRuns.state(region, 2), PipelineRole.PRODUCER);
                pipe.producerAcquire();
                pipe.producerCommit();
                pipe.producerAcquire();         // the thread ends holding stage 1, without quit
            });
            Pipeline pipe = Pipeline.make(consumerRank, RegionRuns.state(region, 2), PipelineRole.CONSUMER);
            pipe.consumerWait();
            pipe.consumerRelease();
            producer.join(10_000);
            assertFalse(producer.isAlive());
            StageFailedException failed = assertThrows(StageFailedException.class, pipe::consumerWait);
            assertEquals(1, failed.batch());
            assertTrue(failed.getCause().getMessage().contains("its thread 'short-lived producer' ended"),
                failed.getCause().getMessage());
            pipe.consumerRelease();
            IllegalStateException gone = assertThrows(IllegalStateException.class, pipe::consumerWait);
            assertTrue(gone.getMessage().contains("no producer is left")
                && gone.getMessage().contains("ended without quit()"), gone.getMessage());
            assertTrue(pipe.quit());
        }
    }

    @Test
    void aFailedIssuerReadInARegionLeavesNoCopyCountedSoTheNextMakeGoesOn() throws Exception {
        try (SharedRegion region = SharedRegion.create(dir.resolve("r"), 1 << 16, SharedRegion.Sharing.OWNER)) {
            MemorySegment stages = region.data().asSlice(PipelineSharedState.regionBytes(2, 2), 2L * 4096);
            GatedFileChannel channel = new GatedFileChannel(TestSegments.randomBytes(3 * 4096, 8));
            channel.failFrom(4096);
            Group alone = region.join(1, 0);
            for (int run = 0; run < 2; run++) {
                PipelineSharedState state = PipelineSharedState.builder(ThreadScope.SYSTEM, 2).in(region, 0)
                    .copyPolicy(CopyPolicy.ON_ISSUING_THREAD).build();
                Pipeline pipe = Pipeline.make(alone, state);
                StringBuilder log = new StringBuilder();
                for (int b = 0; b < 3; b++) {
                    pipe.producerAcquire();
                    assertEquals(AsyncContractFulfillment.NONE, MemcpyAsync.memcpyAsync(
                        stages.asSlice((b % 2) * 4096L, 4096), channel, 4096L * b, 4096, pipe));
                    pipe.producerCommit();
                    try {
                        pipe.consumerWait();
                        log.append("ok ");
                    } catch (StageFailedException e) {
                        log.append("failed ");
                    }
                    pipe.consumerRelease();
                }
                assertTrue(pipe.quit());
                assertEquals("ok failed failed ", log.toString());
            }
        }
    }

    @Test
    void aRegionStageFailsEvenWhenTheReadsExceptionCannotSayWhatItIs() throws Exception {
        // a user's channel whose exception throws from getMessage(): a region records failures as text
        PositionalReadChannel hostile = new PositionalReadChannel() {
            @Override
            public int read(ByteBuffer dst, long position) throws IOException {
                throw new IOException() {
                    @Override
                    public String getMessage() {
                        throw new IllegalStateException("hostile message");
                    }
                };
            }

            @Override
            public long size() {
                return 4096;
            }
        };
        // (on the engine the same record is written by the worker, which then also left the stage hanging; the
        // issuing thread's read is tested, which has landed when memcpyAsync returns)
        try (SharedRegion region = SharedRegion.create(dir.resolve("r"), 1 << 16, SharedRegion.Sharing.OWNER)) {
            MemorySegment stages = region.data().asSlice(PipelineSharedState.regionBytes(2, 2), 2L * 4096);
            Pipeline pipe = Pipeline.make(region.join(1, 0), PipelineSharedState.builder(ThreadScope.SYSTEM, 2)
                .in(region, 0).copyPolicy(CopyPolicy.ON_ISSUING_THREAD).build());
            pipe.producerAcquire();
            assertEquals(AsyncContractFulfillment.NONE,
                MemcpyAsync.memcpyAsync(stages.asSlice(0, 4096), hostile, 0, 4096, pipe), "must not throw");
            pipe.producerCommit();
            StageFailedException failed = assertThrows(StageFailedException.class,
                () -> pipe.consumerWaitFor(java.time.Duration.ofSeconds(20)), "the stage must fail, not hang");
            assertTrue(failed.getCause().getMessage().contains("its toString() threw"),
                failed.getCause().getMessage());
            pipe.consumerRelease();
            assertTrue(pipe.quit());
        }
    }

    /**
     * Finding 7: closing a region without quitting the pipelines made over it left their peers waiting forever;
     * close quits the closing thread's handles there.
     */
    @Test
    void closingARegionQuitsTheClosingThreadsHandles() {
        assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
            Path file = dir.resolve("r");
            try (SharedRegion second = SharedRegion.create(file, RegionPipelineChild.dataBytes(2, 2, 4096),
                SharedRegion.Sharing.OWNER)) {
                Group consumerRank = second.join(2, 1);
                Bounded.Run consumer = Bounded.start("consumer", () -> {
                    Pipeline pipe = Pipeline.make(consumerRank, RegionRuns.state(second, 2), PipelineRole.CONSUMER);
                    pipe.consumerWait();
                    pipe.consumerRelease();
                    StringBuilder log = new StringBuilder();
                    try {
                        pipe.consumerWait();
                    } catch (StageFailedException e) {
                        log.append("failed batch ").append(e.batch()).append(": ").append(e.getCause().getMessage());
                    }
                    pipe.consumerRelease();
                    try {
                        pipe.consumerWait();
                    } catch (IllegalStateException e) {
                        log.append("; then ").append(e.getMessage());
                    }
                    pipe.quit();
                    return log.toString();
                });
                SharedRegion first = SharedRegion.open(file);
                Pipeline pipe = Pipeline.make(first.join(2, 0), RegionRuns.state(first, 2), PipelineRole.PRODUCER);
                pipe.producerAcquire();
                pipe.producerCommit();
                pipe.producerAcquire();
                first.close();                      // without quit, holding batch 1
                String outcome = consumer.result(Duration.ofSeconds(10));
                assertTrue(outcome.startsWith("failed batch 1: ") && outcome.contains("closed")
                    && outcome.contains("no producer is left") && outcome.contains("closed without quit()"), outcome);
                assertFalse(pipe.isActive());
            }
        });
    }

    /** Finding 7, the other side: close refuses, naming them, while other live threads hold pipelines there. */
    @Test
    void closeRefusesWhileAnotherLiveThreadHoldsAPipelineThere() {
        assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
            SharedRegion region = SharedRegion.create(dir.resolve("r"), RegionPipelineChild.dataBytes(1, 2, 4096),
                SharedRegion.Sharing.OWNER);
            Group alone = region.join(1, 0);
            CountDownLatch made = new CountDownLatch(1);
            CountDownLatch quit = new CountDownLatch(1);
            Bounded.Run holder = Bounded.start("holder", () -> {
                Pipeline pipe = Pipeline.make(alone, RegionRuns.state(region, 2));
                made.countDown();
                quit.await();
                return "last " + pipe.quit();
            });
            made.await();
            IllegalStateException refused = assertThrows(IllegalStateException.class, region::close);
            assertTrue(refused.getMessage().contains("thread 'holder'")
                && refused.getMessage().contains("must quit first"), refused.getMessage());
            quit.countDown();
            assertEquals("last true", holder.result(Duration.ofSeconds(10)));
            region.close();
            assertThrows(IllegalStateException.class, () -> region.data().get(ValueLayout.JAVA_BYTE, 0));
        });
    }

    /**
     * Issue 28 (held): a region wait counts itself on its stage word's wake word only while it sleeps, and uncounts
     * itself however it ends: a timed wait that gives up (1 ns, 30 ms, a run of polls), an interruptible wait
     * interrupted (seen within the 10 ms bound of its futex sleeps), an uninterruptible wait interrupted (it takes
     * the interrupt, sleeps again, and re-asserts it when the batch comes), and a wait ended by its stall watch's
     * exception (a corrupted stage word).
     */
    @Test
    void aRegionWaitLeavesNoWaiterCountedHoweverItEnds() {
        assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
            try (SharedRegion region = SharedRegion.create(dir.resolve("r"), RegionPipelineChild.dataBytes(2, 2, 64),
                SharedRegion.Sharing.OWNER)) {
                MemorySegment area = region.data();
                PipelineSharedState state = PipelineSharedState.builder(ThreadScope.SYSTEM, 2).in(region, 0)
                    .waitStrategy(WaitStrategy.BLOCKING).build();
                Group producerRank = region.join(2, 0);
                Group consumerRank = region.join(2, 1);
                CountDownLatch commit = new CountDownLatch(1);
                CountDownLatch corrupted = new CountDownLatch(1);
                CountDownLatch polled = new CountDownLatch(1);
                CountDownLatch proceed = new CountDownLatch(1);
                java.util.concurrent.atomic.AtomicLong interruptSeen = new java.util.concurrent.atomic.AtomicLong();
                Bounded.Run producer = Bounded.start("producer", () -> {
                    Pipeline pipe = Pipeline.make(producerRank, state, PipelineRole.PRODUCER);
                    commit.await();
                    pipe.producerAcquire();
                    pipe.producerCommit();
                    corrupted.await();
                    return "quit " + Outcomes.of(pipe::quit);
                });
                // the stage word's place is known once the pipeline is made (the layout is the make's)
                java.util.function.IntSupplier counted = () -> RegionProbe.sleepersOn(area,
                    RegionProbe.producedWordAt(area, 0, batchOf(area)));
                Bounded.Run consumer = Bounded.start("consumer", () -> {
                    Pipeline pipe = Pipeline.make(consumerRank, state, PipelineRole.CONSUMER);
                    List<String> out = new ArrayList<>();
                    out.add("1 ns " + pipe.consumerWaitFor(Duration.ofNanos(1)) + " " + counted.getAsInt());
                    out.add("30 ms " + pipe.consumerWaitFor(Duration.ofMillis(30)) + " " + counted.getAsInt());
                    for (int i = 0; i < 50; i++) {
                        pipe.consumerWaitFor(Duration.ofNanos(i * 1000L));
                    }
                    out.add("polls " + counted.getAsInt());
                    polled.countDown();
                    try {
                        pipe.consumerWaitInterruptibly();
                        out.add("returned");
                    } catch (InterruptedException e) {
                        interruptSeen.set(System.nanoTime());
                        out.add("interrupted " + counted.getAsInt());
                    }
                    proceed.await();
                    pipe.consumerWait();
                    out.add("waited " + counted.getAsInt() + " interrupt kept " + Thread.interrupted());
                    pipe.consumerRelease();
                    // batch 1: its stage word corrupted while the consumer sleeps on it
                    out.add(Outcomes.of(pipe::consumerWait).contains("is corrupted") ? "told of the corruption "
                        + counted.getAsInt() : "not told");
                    pipe.quit();
                    return String.join(", ", out);
                });
                Teams.await(polled, "the consumer's polls");
                awaitCounted(counted, 1);
                long interrupted = System.nanoTime();
                consumer.thread().interrupt();
                Teams.awaitTrue("the interruptible wait ended", () -> interruptSeen.get() != 0);
                long tookMillis = (interruptSeen.get() - interrupted) / 1_000_000;
                proceed.countDown();
                awaitCounted(counted, 1);               // the uninterruptible wait
                consumer.thread().interrupt();
                Teams.awaitTrue("the interrupt taken", () -> !consumer.thread().isInterrupted());
                awaitCounted(counted, 1);               // asleep again
                commit.countDown();
                awaitCounted(counted, 1);               // asleep on batch 1's word
                area.set(ValueLayout.JAVA_LONG, RegionProbe.producedWordAt(area, 0, 1), RegionProbe.word(0, 5000, 3));
                String outcome = consumer.result(Duration.ofSeconds(10));
                corrupted.countDown();
                producer.result(Duration.ofSeconds(5));
                assertEquals("1 ns false 0, 30 ms false 0, polls 0, interrupted 0, waited 0 interrupt kept true, "
                    + "told of the corruption 0", outcome);
                assertTrue(tookMillis < 1000, "the interrupt was seen after " + tookMillis + " ms");
            }
        });
    }

    /** The stage the consumer of a 2-stage test pipeline waits on: 1 once the producer has committed batch 0. */
    private static int batchOf(MemorySegment area) {
        return area.get(ValueLayout.JAVA_LONG, RegionProbe.producedWordAt(area, 0, 0)) >>> 41 > 0 ? 1 : 0;
    }

    private static void awaitCounted(java.util.function.IntSupplier counted, int n) {
        Teams.awaitTrue(n + " waiter(s) counted on the stage word", () -> counted.getAsInt() >= n);
    }

    /**
     * Issue 28 (held): a traced pipeline in a region, its copies on an engine. The handle's layers are chained
     * (traced, then the region's cursors), so each copy is counted in the rank's slot from its hand-off until its
     * traced landing is done: every copy is recorded, every batch arrives whole, the slot's count is back to 0,
     * and the next make on the state goes on.
     */
    @Test
    void aTracedRegionPipelineRecordsEveryCopyAndUncountsItsLandings() {
        assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
            dev.jpipeline.trace.Tracer tracer = dev.jpipeline.trace.Tracer.create();
            int batches = 50;
            MemorySegment sources = java.lang.foreign.Arena.ofAuto().allocate(8192L * batches);
            try (dev.jpipeline.copy.CopyEngine engine = dev.jpipeline.copy.CopyEngine.builder().workers(2)
                     .name("traced-region").build();
                 SharedRegion region = SharedRegion.create(dir.resolve("r"), 1 << 20, SharedRegion.Sharing.OWNER)) {
                MemorySegment area = region.data();
                MemorySegment stages = area.asSlice(PipelineSharedState.regionBytes(2, 2), 2 * 8192);
                PipelineSharedState state = PipelineSharedState.builder(ThreadScope.SYSTEM, 2).in(region, 0)
                    .copyEngine(engine).copyPolicy(CopyPolicy.ON_COPY_ENGINE).tracer(tracer).build();
                Group producerRank = region.join(2, 0);
                Group consumerRank = region.join(2, 1);
                Bounded.Run producer = Bounded.start("producer", () -> {
                    Pipeline pipe = Pipeline.make(producerRank, state, PipelineRole.PRODUCER);
                    for (int b = 0; b < batches; b++) {
                        pipe.producerAcquire();
                        MemorySegment source = sources.asSlice(8192L * b, 8192);
                        source.fill((byte) b);
                        for (int half = 0; half < 2; half++) {
                            MemcpyAsync.memcpyAsync(stages.asSlice((b % 2) * 8192L + half * 4096L, 4096),
                                source.asSlice(half * 4096L, 4096), 4096, pipe);
                        }
                        pipe.producerCommit();
                    }
                    return "last " + pipe.quit();
                });
                Bounded.Run consumer = Bounded.start("consumer", () -> {
                    Pipeline pipe = Pipeline.make(consumerRank, state, PipelineRole.CONSUMER);
                    int torn = 0;
                    for (int b = 0; b < batches; b++) {
                        pipe.consumerWait();
                        MemorySegment stage = stages.asSlice((b % 2) * 8192L, 8192);
                        if (stage.get(ValueLayout.JAVA_BYTE, 0) != (byte) b
                            || stage.get(ValueLayout.JAVA_BYTE, 8191) != (byte) b) {
                            torn++;
                        }
                        pipe.consumerRelease();
                    }
                    pipe.quit();
                    return "torn " + torn;
                });
                long deadline = System.nanoTime() + 20_000_000_000L;
                assertEquals(List.of("torn 0"), List.of(consumer.resultBy(deadline)));
                producer.resultBy(deadline);
                Teams.awaitTrue("the producer's slot counts no copy", () -> RegionProbe.copiesOf(area, 0) == 0);
                long copies = tracer.events().stream()
                    .filter(e -> e.operation() == dev.jpipeline.trace.StageOperation.COPY).count();
                assertEquals(2L * batches, copies, "copies recorded (" + tracer.dropped() + " events dropped)");
                Bounded.Run producerAgain = Bounded.start("producer again", () -> "made, quit "
                    + Pipeline.make(producerRank, state, PipelineRole.PRODUCER).quit());
                Bounded.Run consumerAgain = Bounded.start("consumer again", () -> "made, quit "
                    + Pipeline.make(consumerRank, state, PipelineRole.CONSUMER).quit());
                long by = System.nanoTime() + 10_000_000_000L;
                List<String> again = List.of(producerAgain.resultBy(by), consumerAgain.resultBy(by));
                assertTrue(again.stream().allMatch(o -> o.startsWith("made, quit ")), again.toString());
            }
        });
    }
}
