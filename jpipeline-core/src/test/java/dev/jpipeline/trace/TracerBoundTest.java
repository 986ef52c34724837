package dev.jpipeline.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.MemcpyAsync;
import dev.jpipeline.CopyPolicy;
import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.ThreadTeam;
import dev.jpipeline.copy.CopyEngine;
import dev.jpipeline.internal.trace.TraceLane;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.FutureTask;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The tracer's memory is bounded (a ring per lane), nothing is lost silently, and it can be drained while running. */
class TracerBoundTest {

    /**
     * The case: 4 producers and 4 consumers over 10^6 stages record 16 million events (the unbounded tracer
     * held 981 MiB). Each thread records into its lane exactly what its pipeline handle records per stage, without
     * the pipeline's hand-offs, which on a loaded 2-core machine would take minutes;
     * {@link #aTracedPipelineOfFourProducersAndFourConsumersKeepsTheNewestEventsOfEachThread} covers the engine.
     */
    @Test
    void memoryStaysBoundedAfterAMillionStagesOfFourProducersAndFourConsumers() throws Exception {
        int stages = 1_000_000;
        int perLane = 4096;
        Tracer tracer = Tracer.create(perLane);
        long heapBefore = usedHeapAfterGc();
        ThreadTeam.ofPlatform(8).run(Duration.ofMinutes(5), g -> {
            boolean producer = g.threadRank() < 4;
            TraceLane lane = tracer.lane(Thread.currentThread().getName(), g.threadRank(),
                producer ? "producer" : "consumer");
            for (int b = 0; b < stages; b++) {
                long start = lane.now();
                lane.record(producer ? StageOperation.ACQUIRE : StageOperation.WAIT, start, b % 4, b);
                lane.record(producer ? StageOperation.COMMIT : StageOperation.RELEASE, lane.now(), b % 4, b);
            }
        });
        long heapGrowth = usedHeapAfterGc() - heapBefore;

        long recorded = 8L * 2 * stages;
        List<TraceEvent> retained = tracer.events();
        assertEquals(8L * perLane, retained.size(), "every lane full, none beyond its capacity");
        assertEquals(recorded - retained.size(), tracer.dropped(), "every overwritten event counted, exactly");
        // 8 lanes of 4,096 events of 40 bytes: 1.3 MiB
        assertTrue(heapGrowth < 64L << 20, "heap grew by " + (heapGrowth >> 20) + " MiB");
        assertNewestOfEachThread(retained, stages, perLane, 8);
    }

    @Test
    void aTracedPipelineOfFourProducersAndFourConsumersKeepsTheNewestEventsOfEachThread() throws Exception {
        int stages = 50_000;
        int perLane = 1024;
        Tracer tracer = Tracer.create(perLane);
        PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 4).tracer(tracer).build();
        ThreadTeam.ofPlatform(8).run(Duration.ofMinutes(5), g -> {
            try (Pipeline pipe = Pipeline.make(g, state, 4)) {
                for (int b = 0; b < stages; b++) {
                    if (g.threadRank() < 4) {
                        pipe.producerAcquire();
                        pipe.producerCommit();
                    } else {
                        pipe.consumerWait();
                        pipe.consumerRelease();
                    }
                }
            }
        });
        List<TraceEvent> retained = tracer.events();
        assertEquals(8L * perLane, retained.size());
        assertEquals(8L * 2 * stages - retained.size(), tracer.dropped());
        assertNewestOfEachThread(retained, stages, perLane, 8);
    }

    /** Each thread's lane holds its newest {@code perLane} events: two per stage, the last stages'. */
    private static void assertNewestOfEachThread(List<TraceEvent> retained, int stages, int perLane, int threads) {
        Map<String, Long> perThread = new HashMap<>();
        for (TraceEvent e : retained) {
            perThread.merge(e.thread(), 1L, Long::sum);
            assertTrue(e.batch() >= stages - perLane / 2, "only the newest events are kept: " + e);
        }
        assertEquals(threads, perThread.size());
        perThread.values().forEach(n -> assertEquals(perLane, n));
    }

    @Test
    void eventsAfterOverflowAreTheNewestInOrderAndDrainHandsEachOverOnce() {
        Tracer tracer = Tracer.create(16);
        TraceLane lane = tracer.lane("worker", 0, "unified");
        for (int b = 0; b < 100; b++) {
            lane.record(StageOperation.WAIT, b * 10L, b % 3, b);
        }
        List<TraceEvent> events = tracer.events();
        assertEquals(16, events.size());
        for (int i = 0; i < 16; i++) {
            TraceEvent e = events.get(i);
            assertEquals(84 + i, e.batch(), "the newest 16, oldest first");
            assertEquals((84 + i) * 10L, e.startNanos());
            assertEquals((84 + i) % 3, e.stage());
            assertEquals(StageOperation.WAIT, e.operation());
            assertEquals("worker", e.thread());
        }
        assertEquals(84, tracer.dropped());

        List<TraceEvent> drained = new ArrayList<>();
        assertEquals(16, tracer.drain(drained::add));
        assertEquals(events, drained);
        assertEquals(84, tracer.dropped(), "draining loses nothing more");
        assertEquals(0, tracer.drain(drained::add), "nothing new");

        for (int b = 100; b < 105; b++) {
            lane.record(StageOperation.RELEASE, b * 10L, 0, b);
        }
        drained.clear();
        assertEquals(5, tracer.drain(drained::add));
        assertEquals(List.of(100L, 101L, 102L, 103L, 104L), drained.stream().map(TraceEvent::batch).toList());
        assertEquals(16, tracer.events().size(), "a snapshot still holds drained events");
        assertEquals(89, tracer.events().getFirst().batch());
        assertEquals(84, tracer.dropped(), "drained before they were overwritten");

        for (int b = 105; b < 150; b++) {
            lane.record(StageOperation.RELEASE, b * 10L, 0, b);
        }
        drained.clear();
        assertEquals(16, tracer.drain(drained::add));
        assertEquals(134, drained.getFirst().batch());
        assertEquals(84 + 29, tracer.dropped(), "45 recorded, the newest 16 drained");
    }

    @Test
    void copiesLandingOnManyThreadsAreBoundedAndCountedExactly() throws Exception {
        Tracer tracer = Tracer.create(64);
        TraceLane lane = tracer.lane("producer", 0, "producer");
        int writers = 4;
        int perWriter = 200_000;
        AtomicBoolean done = new AtomicBoolean();
        List<TraceEvent> drained = new ArrayList<>();
        AtomicLong drains = new AtomicLong();
        FutureTask<Void> reader = start(() -> {
            while (!done.get()) {
                tracer.drain(drained::add);
                drains.incrementAndGet();
            }
        });
        ThreadTeam.ofPlatform(writers).run(Duration.ofMinutes(2), g -> {
            for (int k = 0; k < perWriter; k++) {
                long batch = (long) k * writers + g.threadRank();
                lane.copyLanded(batch * 7, (int) (batch % 1000), batch);
            }
        });
        done.set(true);
        reader.get();
        tracer.drain(drained::add);

        long recorded = (long) writers * perWriter;
        Set<Long> seen = new HashSet<>();
        for (TraceEvent e : drained) {
            assertEquals(StageOperation.COPY, e.operation());
            assertEquals(e.batch() * 7, e.startNanos(), "an event read whole, never torn: " + e);
            assertEquals((int) (e.batch() % 1000), e.stage(), "an event read whole, never torn: " + e);
            assertTrue(seen.add(e.batch()), "handed over twice: " + e);
        }
        assertEquals(recorded, drained.size() + tracer.dropped(), "each event handed over once or counted dropped");
        assertTrue(tracer.events().size() <= 64);
        assertTrue(drains.get() > 0);
    }

    @Test
    void anOwnersEventsAreDrainedInOrderWhileItRecords() throws Exception {
        Tracer tracer = Tracer.create(256);
        TraceLane lane = tracer.lane("producer", 0, "producer");
        int events = 1_000_000;
        AtomicBoolean done = new AtomicBoolean();
        long[] last = {-1};
        AtomicLong handed = new AtomicLong();
        FutureTask<Void> reader = start(() -> {
            while (!done.get()) {
                handed.addAndGet(tracer.drain(e -> {
                    assertTrue(e.batch() > last[0], "in order, once: " + e.batch() + " after " + last[0]);
                    assertEquals(e.batch() * 3, e.startNanos(), "read whole: " + e);
                    last[0] = e.batch();
                }));
            }
        });
        FutureTask<Void> writer = start(() -> {
            for (int b = 0; b < events; b++) {
                lane.record(StageOperation.COMMIT, b * 3L, b & 7, b);
            }
        });
        writer.get();
        done.set(true);
        reader.get();
        handed.addAndGet(tracer.drain(e -> {
            assertTrue(e.batch() > last[0]);
            last[0] = e.batch();
        }));
        assertEquals(events - 1, last[0], "the newest event is handed over last");
        assertEquals(events, handed.get() + tracer.dropped());
    }

    @Test
    void aDrainThatKeepsUpWithARunningPipelineSeesEveryEventExactlyOnce() throws Exception {
        int batches = 20_000;
        int stageCount = 4;
        Tracer tracer = Tracer.create(1024);
        List<TraceEvent> drained = new ArrayList<>();     // only the draining consumer touches it
        try (CopyEngine engine = CopyEngine.builder().workers(2).inlineThreshold(1024).build()) {
            PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, stageCount).tracer(tracer)
                .copyEngine(engine).copyPolicy(CopyPolicy.ON_COPY_ENGINE).build();     // copies land on workers
            MemorySegment src = Arena.ofAuto().allocate(4096);
            MemorySegment[] stages = new MemorySegment[stageCount];
            for (int s = 0; s < stageCount; s++) {
                stages[s] = Arena.ofAuto().allocate(4096);
            }
            ThreadTeam.ofPlatform(4).run(Duration.ofMinutes(2), g -> {
                int rank = g.threadRank();
                try (Pipeline pipe = Pipeline.make(g, state, 2)) {
                    for (int b = 0; b < batches; b++) {
                        if (rank < 2) {
                            pipe.producerAcquire();
                            MemcpyAsync.memcpyAsync(stages[b % stageCount].asSlice(rank * 2048, 2048),
                                src.asSlice(rank * 2048, 2048), 2048, pipe);    // above the threshold: a copy worker
                            pipe.producerCommit();
                        } else {
                            pipe.consumerWait();
                            pipe.consumerRelease();
                            // The pipeline keeps every thread within a few stages of this one, so draining every
                            // 100 batches keeps each lane far below its 1,024 events: nothing may be dropped.
                            if (rank == 2 && b % 100 == 99) {
                                tracer.drain(drained::add);
                            }
                        }
                    }
                }
            });
        }
        tracer.drain(drained::add);

        assertEquals(0, tracer.dropped());
        assertEquals(batches * (2L * 3 + 2L * 2), drained.size(), "producers: acquire, copy, commit; consumers: 2");
        Set<String> keys = new HashSet<>();
        for (TraceEvent e : drained) {
            assertTrue(keys.add(e.thread() + " " + e.operation() + " " + e.batch()), "handed over twice: " + e);
        }
        assertEquals(6 * 1024, tracer.events().size(), "four threads' rings and two producers' copy rings, full");
    }

    @Test
    void eventsPerLaneOutsideTheSaneRangeIsRefusedWithTheRuleAndTheValue() {
        IllegalArgumentException low = assertThrows(IllegalArgumentException.class, () -> Tracer.create(15));
        assertTrue(low.getMessage().contains("16..16777216") && low.getMessage().endsWith("got 15"), low.getMessage());
        IllegalArgumentException high = assertThrows(IllegalArgumentException.class,
            () -> Tracer.create((1 << 24) + 1));
        assertTrue(high.getMessage().endsWith("got 16777217"), high.getMessage());
        assertEquals(Tracer.DEFAULT_EVENTS_PER_LANE, Tracer.create().eventsPerLane());
        assertEquals(16, Tracer.create(16).eventsPerLane());
    }

    /** Runs {@code task} on a new platform thread; {@code get()} rethrows what it threw. */
    private static FutureTask<Void> start(Runnable task) {
        FutureTask<Void> future = new FutureTask<>(task, null);
        Thread.ofPlatform().start(future);
        return future;
    }

    private static long usedHeapAfterGc() {
        System.gc();
        Runtime runtime = Runtime.getRuntime();
        return runtime.totalMemory() - runtime.freeMemory();
    }
}
