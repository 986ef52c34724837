package dev.jpipeline.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The README's "Use it as a library" is what CI builds: its {@code pom.xml} block and its {@code ReadmePrefetch}
 * block are it/prefetch's files byte for byte, and its install command is the one it/run.sh runs before building
 * that project against the installed artifacts. The Gradle block, which CI cannot build, grants native access to
 * both the program and the tests, as the pom does.
 */
class ReadmeLibraryTest {

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Path CONSUMER = ROOT.resolve("it/prefetch");
    private static final String INSTALL =
        "./mvnw install -Dmaven.test.skip=true -pl jpipeline-core,jpipeline-simt -am";

    private static List<String> blocks(String language) throws IOException {
        return Pattern.compile("^```" + language + "\\n(.*?)^```$", Pattern.MULTILINE | Pattern.DOTALL)
            .matcher(Files.readString(ROOT.resolve("README.md"))).results().map(m -> m.group(1)).toList();
    }

    @Test
    void theReadmesPomIsTheConsumerProjectsPom() throws IOException {
        List<String> poms = blocks("xml").stream().filter(b -> b.startsWith("<?xml")).toList();
        assertEquals(1, poms.size(), "README.md should hold exactly one complete pom.xml block");
        assertEquals(Files.readString(CONSUMER.resolve("pom.xml")), poms.get(0),
            "README.md's pom.xml block differs from it/prefetch/pom.xml, which CI builds: copy one onto the other");
    }

    @Test
    void theConsumerDependsOnTheVersionThisBuildInstalls() throws IOException {
        String parent = Files.readString(ROOT.resolve("pom.xml"));
        var version = Pattern.compile("<artifactId>jpipeline-parent</artifactId>\\s*<version>([^<]+)</version>")
            .matcher(parent);
        assertTrue(version.find(), "no version in the root pom.xml");
        assertTrue(Files.readString(CONSUMER.resolve("pom.xml")).contains("<artifactId>jpipeline-core</artifactId>\n"
                + "      <version>" + version.group(1) + "</version>"),
            "it/prefetch/pom.xml (and README.md's copy) should depend on jpipeline-core " + version.group(1));
    }

    @Test
    void theReadmesPrefetchExampleIsTheConsumerProjectsSource() throws IOException {
        List<String> examples = blocks("java").stream().filter(b -> b.contains("final class ReadmePrefetch")).toList();
        assertEquals(1, examples.size(), "README.md should hold ReadmePrefetch once");
        assertEquals(Files.readString(CONSUMER.resolve("src/main/java/ReadmePrefetch.java")), examples.get(0),
            "README.md's ReadmePrefetch differs from it/prefetch/src/main/java/ReadmePrefetch.java");
    }

    @Test
    void theReadmesInstallCommandIsTheOneCiRunsBeforeBuildingTheConsumer() throws IOException {
        assertTrue(blocks("sh").stream().anyMatch(b -> b.strip().equals(INSTALL)),
            "README.md has no sh block that is exactly: " + INSTALL);
        String run = Files.readString(ROOT.resolve("it/run.sh"));
        assertTrue(run.contains("./mvnw -B -q install -Dmaven.test.skip=true -pl jpipeline-core,jpipeline-simt -am"),
            "it/run.sh no longer installs with the README's command (" + INSTALL + ")");
    }

    @Test
    void theGradleBlockGrantsNativeAccessToTheProgramAndTheTests() throws IOException {
        List<String> gradle = blocks("kotlin");
        assertEquals(1, gradle.size(), "README.md should hold one Gradle (Kotlin DSL) block");
        String build = gradle.get(0);
        assertTrue(build.contains("applicationDefaultJvmArgs = listOf(\"--enable-native-access=ALL-UNNAMED\")"), build);
        assertTrue(build.contains("jvmArgs(\"--enable-native-access=ALL-UNNAMED\")"), build);
        assertTrue(build.contains("implementation(\"dev.jpipeline:jpipeline-core:0.1.0-SNAPSHOT\")"), build);
        assertTrue(build.contains("JavaLanguageVersion.of(25)"), build);
    }
}
