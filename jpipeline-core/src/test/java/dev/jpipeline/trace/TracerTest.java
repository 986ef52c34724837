package dev.jpipeline.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.jpipeline.CopyPolicy;
import dev.jpipeline.GatedFileChannel;
import dev.jpipeline.MemcpyAsync;
import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.StageFailedException;
import dev.jpipeline.TestSegments;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.ThreadTeam;
import dev.jpipeline.copy.CopyEngine;
import java.io.StringWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class TracerTest {

    @Test
    void everyOperationOfEveryThreadIsRecordedAndExportedAsTraceEvents() throws Exception {
        Tracer tracer = Tracer.create();
        int batches = 20;
        try (CopyEngine engine = CopyEngine.builder().inlineThreshold(1024).build()) {
            PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 2).tracer(tracer)
                .copyEngine(engine).build();
            MemorySegment src = Arena.ofAuto().allocate(8192);
            MemorySegment[] stages = {Arena.ofAuto().allocate(8192), Arena.ofAuto().allocate(8192)};
            ThreadTeam.ofPlatform(3).run(Duration.ofSeconds(30), g -> {
                Pipeline pipe = Pipeline.make(g, state, 1);
                for (int b = 0; b < batches; b++) {
                    if (g.threadRank() == 0) {
                        pipe.producerAcquire();
                        MemcpyAsync.memcpyAsync(stages[b % 2], src, b % 2 == 0 ? 8192 : 512, pipe);  // async, inline
                        pipe.producerCommit();
                    } else {
                        pipe.consumerWait();
                        pipe.consumerRelease();
                    }
                }
                pipe.quit();
            });
        }
        List<TraceEvent> events = tracer.events();
        assertEquals(0, tracer.dropped(), "far below the default bound");
        Map<StageOperation, Long> counts = events.stream()
            .collect(Collectors.groupingBy(TraceEvent::operation, Collectors.counting()));
        assertEquals(batches, counts.get(StageOperation.ACQUIRE));
        assertEquals(batches, counts.get(StageOperation.COMMIT));
        assertEquals(batches, counts.get(StageOperation.COPY));
        assertEquals(2L * batches, counts.get(StageOperation.WAIT));
        assertEquals(2L * batches, counts.get(StageOperation.RELEASE));
        for (int i = 1; i < events.size(); i++) {
            assertTrue(events.get(i - 1).startNanos() <= events.get(i).startNanos(), "ordered by start");
        }

        StringWriter json = new StringWriter();
        tracer.writeChromeTrace(json);
        JsonNode root = new ObjectMapper().readTree(json.toString());
        assertEquals(0, root.get("otherData").get("droppedEvents").asLong());
        assertEquals(Tracer.DEFAULT_EVENTS_PER_LANE, root.get("otherData").get("eventsPerLane").asInt());
        JsonNode traceEvents = root.get("traceEvents");
        Set<String> lanes = new HashSet<>();
        int spans = 0;
        for (JsonNode e : traceEvents) {
            if (e.get("ph").asText().equals("M")) {
                lanes.add(e.get("args").get("name").asText());
            } else {
                assertEquals("X", e.get("ph").asText());
                assertTrue(e.get("dur").asDouble() >= 0);
                spans += e.get("name").asText().equals("compute") ? 0 : 1;   // computing is not an operation
            }
        }
        assertEquals(events.size(), spans);
        assertEquals(3, lanes.stream().filter(l -> !l.startsWith("copies of ")).count(), "three threads: " + lanes);
        assertTrue(lanes.contains("copies of producer 0, slot 0 (" + producerThread(events) + ")"), lanes.toString());

        List<TraceEvent> drained = new ArrayList<>();
        assertEquals(events.size(), tracer.drain(drained::add), "a first drain hands over everything");
        assertEquals(events.size(), drained.size());
        assertEquals(0, tracer.drain(drained::add), "and a second nothing");
        assertEquals(events, tracer.events(), "a snapshot still holds the drained events");
    }

    @Test
    void theChromeTraceSaysHowManyEventsWereDropped() throws Exception {
        Tracer tracer = Tracer.create(16);
        PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 2).tracer(tracer).build();
        ThreadTeam.ofPlatform(2).run(Duration.ofSeconds(30), g -> {
            try (Pipeline pipe = Pipeline.make(g, state, 1)) {
                for (int b = 0; b < 100; b++) {
                    if (g.threadRank() == 0) {
                        pipe.producerAcquire();
                        pipe.producerCommit();
                    } else {
                        pipe.consumerWait();
                        pipe.consumerRelease();
                    }
                }
            }
        });
        assertEquals(2 * 200 - 2 * 16, tracer.dropped());
        StringWriter json = new StringWriter();
        tracer.writeChromeTrace(json);
        JsonNode root = new ObjectMapper().readTree(json.toString());
        assertEquals(2 * 200 - 2 * 16, root.get("otherData").get("droppedEvents").asLong());
        assertEquals(16, root.get("otherData").get("eventsPerLane").asInt());
        int spans = 0;
        for (JsonNode e : root.get("traceEvents")) {
            if (e.get("ph").asText().equals("X") && !e.get("name").asText().equals("compute")) {
                spans++;
                assertTrue(e.get("args").get("batch").asLong() >= 92, "the newest events: " + e);
            }
        }
        assertEquals(2 * 16, spans);
    }

    /** A read on the issuing thread ({@link CopyPolicy#ON_ISSUING_THREAD}) is traced as a copy of its batch. */
    @Test
    @Timeout(60)
    void aTracedReadOnTheIssuingThreadIsACopyEventOfItsBatch() {
        int stageBytes = 8192;
        try (CopyEngine engine = CopyEngine.builder().workers(2).inlineThreshold(4096).name("traced-issuer-read")
            .build()) {
            Tracer tracer = Tracer.create();
            PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 2).copyEngine(engine)
                .copyPolicy(CopyPolicy.ON_ISSUING_THREAD).tracer(tracer).build();
            byte[] bytes = TestSegments.randomBytes(3 * stageBytes, 5);
            GatedFileChannel channel = new GatedFileChannel(bytes);
            channel.failFrom(2L * stageBytes);
            try (Arena arena = Arena.ofShared()) {
                MemorySegment stages = arena.allocate(2L * stageBytes);
                Pipeline pipe = Pipeline.make(ThreadTeam.ofPlatform(1).member(0), state);
                for (long b = 0; b < 3; b++) {
                    MemorySegment stage = stages.asSlice((b % 2) * stageBytes, stageBytes);
                    pipe.producerAcquire();
                    MemcpyAsync.memcpyAsync(stage, channel, b * stageBytes, stageBytes, pipe);
                    pipe.producerCommit();
                    if (b < 2) {
                        pipe.consumerWait();
                        assertEquals(-1L, stage.mismatch(MemorySegment.ofArray(bytes).asSlice(b * stageBytes,
                            stageBytes)));
                    } else {
                        assertThrows(StageFailedException.class, pipe::consumerWait);
                    }
                    pipe.consumerRelease();
                }
                pipe.quit();
            }
            List<TraceEvent> copies = tracer.events().stream().filter(e -> e.operation() == StageOperation.COPY)
                .toList();
            assertEquals(List.of(0L, 1L, 2L), copies.stream().map(TraceEvent::batch).sorted().toList(),
                copies.toString());
            for (TraceEvent e : copies) {
                assertEquals(e.batch() % 2, e.stage());
                assertTrue(e.durationNanos() >= 0, e.toString());
            }
        }
    }

    private static String producerThread(List<TraceEvent> events) {
        return events.stream().filter(e -> e.operation() == StageOperation.COPY).findFirst().orElseThrow().thread();
    }
}
