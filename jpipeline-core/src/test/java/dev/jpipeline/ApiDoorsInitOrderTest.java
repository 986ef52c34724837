package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.internal.ChildJvm;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * ApiAccess's doors are installed by the facades' static initializers (Pipeline, CopyEngine, Tracer). In a fresh
 * JVM ({@link ApiDoorsChild}), threads released at once each touch a different facade first and use it: no door
 * is missing, nothing deadlocks in class initialization, checked engines and traced pipelines work.
 */
class ApiDoorsInitOrderTest {

    @ParameterizedTest
    @ValueSource(ints = {0, 3})
    void facadesFirstTouchedFromManyThreadsInAFreshJvmInstallEveryDoor(int rotate) throws Exception {
        Process child = new ProcessBuilder(ChildJvm.command(ApiDoorsChild.class, Integer.toString(rotate)))
            .redirectErrorStream(true).start();
        boolean done = child.waitFor(40, TimeUnit.SECONDS);
        if (!done) {
            child.destroyForcibly();
        }
        String out = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(done, "the child JVM did not finish (a class-initialization deadlock?):\n" + out);
        assertEquals(0, child.exitValue(), out);
        assertTrue(out.contains("OK"), out);
    }
}
