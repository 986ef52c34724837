package dev.jpipeline.examples;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The Java in the documentation compiles as written. The convention: every {@code ```java} block of README.md
 * and docs/*.md is a complete compilation unit (its imports, then a type, in the unnamed package), compiled on
 * its own against this test's class path (jpipeline's modules and their dependencies); a sketch that is not
 * meant to compile is not fenced as {@code java}. The README's two examples are besides the sources of
 * {@link ReadmePrefetch} and {@link ReadmePartitioned} without their package lines, so that they also run
 * ({@link ReadmePrefetchTest} and {@link ReadmePartitionedTest} check their results).
 */
class DocsJavaBlocksTest {

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Pattern BLOCK = Pattern.compile("^```java\\n(.*?)^```$", Pattern.MULTILINE | Pattern.DOTALL);
    private static final Pattern TYPE =
        Pattern.compile("^(?:public )?(?:final )?(?:class|record|interface|enum) (\\w+)", Pattern.MULTILINE);

    /** A {@code ```java} block: its file, the line of its first line of code, and its code. */
    record Block(Path file, int line, String code) {
        @Override
        public String toString() {
            return ROOT.relativize(file) + ":" + line;
        }
    }

    static Stream<Block> blocks() throws IOException {
        try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
            return Stream.concat(Stream.of(ROOT.resolve("README.md")),
                    docs.filter(p -> p.toString().endsWith(".md")).sorted().toList().stream())
                .flatMap(DocsJavaBlocksTest::blocksOf);
        }
    }

    private static Stream<Block> blocksOf(Path file) {
        String text = readString(file);
        return BLOCK.matcher(text).results().map(block -> new Block(file,
            (int) text.substring(0, block.start(1)).chars().filter(c -> c == '\n').count() + 1, block.group(1)));
    }

    @Test
    void findsTheJavaBlocksOfTheReadmeAndTheDocs() throws IOException {
        assertTrue(blocks().count() >= 4, "fewer java blocks in README.md and docs/*.md under " + ROOT
            + " than the four of the README, simt.md and tracing.md: the extraction is broken");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("blocks")
    void compiles(Block block, @TempDir Path out) throws IOException {
        Matcher type = TYPE.matcher(block.code());
        assertTrue(type.find(), block + " declares no type: a java block must be a complete compilation unit");
        Path source = Files.writeString(out.resolve(type.group(1) + ".java"), block.code());
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        try (StandardJavaFileManager files = javac.getStandardFileManager(diagnostics, Locale.ROOT, null)) {
            List<String> options =
                List.of("-proc:none", "-d", out.toString(), "--class-path", System.getProperty("java.class.path"));
            boolean compiled =
                javac.getTask(null, files, diagnostics, options, null, files.getJavaFileObjects(source)).call();
            assertTrue(compiled, block + " does not compile:\n" + diagnostics.getDiagnostics().stream()
                .map(d -> ROOT.relativize(block.file()) + ":" + (block.line() + d.getLineNumber() - 1) + ": "
                    + d.getMessage(Locale.ROOT))
                .collect(Collectors.joining("\n")));
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"ReadmePrefetch", "ReadmePartitioned"})
    void theReadmeShowsTheExampleClassAsItIs(String example) {
        String source = readString(Path.of("src/main/java/dev/jpipeline/examples/" + example + ".java"))
            .replaceFirst("^package [\\w.]+;\\n\\n", "");
        assertTrue(blocksOf(ROOT.resolve("README.md")).anyMatch(block -> block.code().equals(source)),
            "README.md should show " + example + ".java, without its package line, as it is");
    }

    private static String readString(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
