package dev.jpipeline.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.ThreadTeam;
import dev.jpipeline.trace.Tracer;
import java.io.StringWriter;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The trace-event file that {@code --trace} writes is JSON whatever the threads are called. */
class TraceJsonTest {

    @Test
    void threadNamesWithControlCharactersQuotesAndBackslashesRoundTrip() throws Exception {
        String odd = "odd\u0001\"quoted\"\\back\nline\ttab\u001f";
        Tracer tracer = Tracer.create();
        PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 1).tracer(tracer).build();
        ThreadTeam.ofPlatform(2).run(Duration.ofSeconds(30), g -> {
            Thread.currentThread().setName(odd + g.threadRank());
            try (Pipeline pipe = Pipeline.make(g, state, 1)) {
                if (g.threadRank() == 0) {
                    pipe.producerAcquire();
                    pipe.producerCommit();
                } else {
                    pipe.consumerWait();
                    pipe.consumerRelease();
                }
            }
        });
        StringWriter json = new StringWriter();
        tracer.writeChromeTrace(json);
        JsonNode root = new ObjectMapper().readTree(json.toString());
        Set<String> names = new HashSet<>();
        for (JsonNode e : root.get("traceEvents")) {
            if (e.get("ph").asText().equals("M")) {
                names.add(e.get("args").get("name").asText());
            }
        }
        assertEquals(Set.of("producer 0 (" + odd + "0)", "consumer 1 (" + odd + "1)"), names);
    }
}
