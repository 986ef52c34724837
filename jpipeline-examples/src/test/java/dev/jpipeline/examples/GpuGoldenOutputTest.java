package dev.jpipeline.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.simt.KernelFailure;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * jpipeline's output of each documentation example against its CUDA twin's output on a GPU
 * ({@code oracle/golden}, made by {@code oracle/run.sh} and {@code oracle/make-golden.sh}): any drift from the
 * GPU fails the build. Where jpipeline deliberately differs, the golden file records what the GPU did (a hang,
 * a failed launch) and the test asserts jpipeline's documented behaviour instead.
 */
@Timeout(180)
class GpuGoldenOutputTest {

    /** The golden file of each example of {@link Examples#all()}, in the same order. */
    private static final List<String> GOLDEN = List.of("pipeline_creation", "tracking_async_copies",
        "tracking_async_copies_primitives", "producer_consumer", "early_exit", "reference_kernel", "role_partition",
        "binary_partitions_unguarded", "binary_partitions_guarded", "timed_waits");

    static Stream<Arguments> examples() {
        List<Example> all = Examples.all();
        return IntStream.range(0, all.size()).mapToObj(i -> Arguments.of(all.get(i), GOLDEN.get(i)));
    }

    @Test
    void everyExampleHasItsGoldenFile() {
        assertEquals(Examples.all().size(), GOLDEN.size(), "one golden file per example of Examples.all()");
        for (String name : GOLDEN) {
            assertTrue(Files.isRegularFile(goldenFile(name)), "missing " + goldenFile(name));
        }
    }

    @ParameterizedTest(name = "{1}")
    @MethodSource("examples")
    void outputMatchesTheGpu(Example example, String golden) {
        Golden gpu = Golden.read(goldenFile(golden));
        switch (golden) {
            case "early_exit" -> {
                // libcu++'s quit only lowers the pipeline's reference count: the staying threads wait for the
                // leavers' arrivals, so the GPU hangs. jpipeline follows the Guide: the others proceed.
                assertEquals("hang", gpu.outcome(), "the GPU's run of early_exit.cu");
                assertTrue(example.run(), "jpipeline's early exit completes with the Guide's result");
            }
            case "binary_partitions_unguarded" -> {
                // every thread runs both roles' code: the GPU's launch fails; jpipeline throws, naming the rule
                assertEquals("fail", gpu.outcome(), "the GPU's run of binary_partitions_unguarded.cu");
                assertTrue(gpu.lines().contains("cuda-error cudaErrorLaunchFailure: unspecified launch failure"),
                    "the GPU's launch failure: " + gpu.lines());
                KernelFailure failure = assertThrows(KernelFailure.class, example::output);
                assertInstanceOf(IllegalStateException.class, failure.getCause());
                assertTrue(example.run(), "the unguarded example counts a clear error as its success");
            }
            default -> {
                assertEquals("ok", gpu.outcome(), "the GPU's run of " + golden + ".cu");
                assertEquals("reference match", gpu.lines().getFirst(), "the GPU's result against its C++ reference");
                assertTrue(gpu.lines().get(1).startsWith("example "), "the GPU's output header");
                assertSameOutput(gpu.lines().subList(2, gpu.lines().size()), format(example.output()),
                    example.name() + ": jpipeline's output differs from the GPU's (oracle/golden/" + golden + ".txt)");
            }
        }
    }

    /** Fails naming the first element that differs (then the count or the hash), not the whole output. */
    private static void assertSameOutput(List<String> gpu, List<String> jpipeline, String message) {
        for (int i = 3; i < Math.min(gpu.size(), jpipeline.size()); i++) {
            assertEquals(gpu.get(i), jpipeline.get(i), message + ", element " + (i - 3) + " (GPU, then jpipeline)");
        }
        assertEquals(gpu.subList(0, 3), jpipeline.subList(0, 3), message);
        assertEquals(gpu.size(), jpipeline.size(), message);
    }

    @Test
    void aDriftFromTheGpuFails() {
        List<String> gpu = format(new int[] {1, 2, 3});
        AssertionError error = assertThrows(AssertionError.class,
            () -> assertSameOutput(gpu, format(new int[] {1, 5, 3}), "drift"));
        assertTrue(error.getMessage().contains("element 1"), error.getMessage());
    }

    @Test
    void formatIsTheOracleProgramsFormat() {
        // two floats, 0.25f and -1f, as oracle.cuh's print_output prints them (FNV-1a over the little-endian bytes)
        List<String> text = format(new int[] {Float.floatToRawIntBits(0.25f), Float.floatToRawIntBits(-1f)});
        assertEquals(List.of("count 2", "fnv1a64 " + fnv1a64(new byte[] {0, 0, (byte) 0x80, 0x3e, 0, 0, (byte) 0x80,
            (byte) 0xbf}), "shown 2", "0 3e800000", "1 bf800000"), text);
    }

    /**
     * The lines after "example NAME" that {@code oracle/examples/oracle.cuh} prints for {@code bits}: the count,
     * the FNV-1a hash of every element's little-endian bytes, and the first 32768 elements in hex.
     */
    static List<String> format(int[] bits) {
        byte[] bytes = new byte[4 * bits.length];
        for (int i = 0; i < bits.length; i++) {
            for (int b = 0; b < 4; b++) {
                bytes[4 * i + b] = (byte) (bits[i] >>> (8 * b));
            }
        }
        int shown = Math.min(bits.length, 32768);
        List<String> lines = new ArrayList<>(shown + 3);
        lines.add("count " + bits.length);
        lines.add("fnv1a64 " + fnv1a64(bytes));
        lines.add("shown " + shown);
        for (int i = 0; i < shown; i++) {
            lines.add(i + " " + String.format("%08x", bits[i]));
        }
        return lines;
    }

    private static String fnv1a64(byte[] bytes) {
        long h = 0xcbf29ce484222325L;
        for (byte b : bytes) {
            h ^= b & 0xff;
            h *= 0x100000001b3L;
        }
        return String.format("%016x", h);
    }

    /** {@code oracle/golden/NAME.txt}, found from the module's directory or the repository's. */
    private static Path goldenFile(String name) {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            Path golden = dir.resolve("oracle").resolve("golden");
            if (Files.isDirectory(golden)) {
                return golden.resolve(name + ".txt");
            }
        }
        throw new IllegalStateException("no oracle/golden above " + Path.of("").toAbsolutePath());
    }

    /**
     * A golden file: comment lines (#), then "outcome ok|hang|fail", then what the program printed.
     *
     * @param outcome how the GPU run ended
     * @param lines what the program printed (for ok: "reference ...", "example NAME", then the output)
     */
    record Golden(String outcome, List<String> lines) {

        static Golden read(Path file) {
            try {
                List<String> body = Files.readAllLines(file).stream().filter(l -> !l.startsWith("#")).toList();
                assertTrue(body.getFirst().startsWith("outcome "), file + " starts with its outcome");
                return new Golden(body.getFirst().substring("outcome ".length()), body.subList(1, body.size()));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
