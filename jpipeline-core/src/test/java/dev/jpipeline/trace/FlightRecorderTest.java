package dev.jpipeline.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.MemcpyAsync;
import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.ThreadTeam;
import dev.jpipeline.copy.CopyEngine;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.stream.Collectors;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** While a tracer is attached, every stage operation is a JDK Flight Recorder event. */
class FlightRecorderTest {

    @Test
    void tracedOperationsAreFlightRecorderEvents(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("run.jfr");
        try (Recording recording = new Recording()) {
            recording.enable("dev.jpipeline.Stage");
            recording.start();
            Tracer tracer = Tracer.create();
            PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 2).tracer(tracer).build();
            ThreadTeam.ofPlatform(2).run(Duration.ofSeconds(30), g -> {
                Pipeline pipe = Pipeline.make(g, state, 1);
                for (int b = 0; b < 10; b++) {
                    if (g.threadRank() == 0) {
                        pipe.producerAcquire();
                        pipe.producerCommit();
                    } else {
                        pipe.consumerWait();
                        pipe.consumerRelease();
                    }
                }
                pipe.quit();
            });
            recording.stop();
            recording.dump(file);
            assertEquals(40, tracer.events().size(), "the tracer's own record is kept as well");
        }
        Map<String, Long> byOperation = RecordingFile.readAllEvents(file).stream()
            .filter(e -> e.getEventType().getName().equals("dev.jpipeline.Stage"))
            .collect(Collectors.groupingBy((RecordedEvent e) -> e.getString("operation"), Collectors.counting()));
        assertEquals(10L, byOperation.get("ACQUIRE"));
        assertEquals(10L, byOperation.get("COMMIT"));
        assertEquals(10L, byOperation.get("WAIT"));
        assertEquals(10L, byOperation.get("RELEASE"));
        assertTrue(!byOperation.containsKey("COPY"), "no copies were made");
    }

    @Test
    void copiesThatLandOnCopyWorkersAreFlightRecorderEventsToo(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("copies.jfr");
        try (Recording recording = new Recording();
             CopyEngine engine = CopyEngine.builder().workers(2).inlineThreshold(0).build()) {
            recording.enable("dev.jpipeline.Stage");
            recording.start();
            PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 2).tracer(Tracer.create())
                .copyEngine(engine).build();
            MemorySegment src = Arena.ofAuto().allocate(4096);
            MemorySegment[] stages = {Arena.ofAuto().allocate(4096), Arena.ofAuto().allocate(4096)};
            ThreadTeam.ofPlatform(2).run(Duration.ofSeconds(30), g -> {
                try (Pipeline pipe = Pipeline.make(g, state, 1)) {
                    for (int b = 0; b < 10; b++) {
                        if (g.threadRank() == 0) {
                            pipe.producerAcquire();
                            MemcpyAsync.memcpyAsync(stages[b % 2], src, 4096, pipe);
                            pipe.producerCommit();
                        } else {
                            pipe.consumerWait();
                            pipe.consumerRelease();
                        }
                    }
                }
            });
            recording.stop();
            recording.dump(file);
        }
        long copies = RecordingFile.readAllEvents(file).stream()
            .filter(e -> e.getEventType().getName().equals("dev.jpipeline.Stage"))
            .filter(e -> e.getString("operation").equals("COPY"))
            .count();
        assertEquals(10, copies);
    }
}
