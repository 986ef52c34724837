package dev.jpipeline.examples;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Every ported documentation example runs and matches its plain Java reference. */
@Timeout(120)
class ExamplesTest {

    static Stream<Example> examples() {
        return Examples.all().stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("examples")
    void exampleIsVerified(Example example) {
        Examples.Result result = Examples.run(example);
        if (result.failure() != null) {
            throw new AssertionError(example.name() + " failed", result.failure());
        }
        assertTrue(result.verified(), example.name() + " did not match its reference");
    }
}
