package dev.jpipeline.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;
import picocli.CommandLine.IVersionProvider;

/**
 * The version {@code jpipeline --version} prints: the project version the build wrote into
 * {@code version.properties} (Maven resource filtering), with the Java runtime it runs on.
 */
public final class BuildVersion implements IVersionProvider {

    /** For picocli, which instantiates the provider named in {@code @Command(versionProvider = ...)}. */
    public BuildVersion() {
    }

    /**
     * The project version of this build.
     *
     * @return for example {@code 0.1.0-SNAPSHOT}
     * @throws IllegalStateException when the build did not write the version (a build without resource filtering)
     */
    public static String version() {
        Properties p = new Properties();
        try (InputStream in = BuildVersion.class.getResourceAsStream("version.properties")) {
            if (in == null) {
                throw new IllegalStateException("version.properties is missing from the jpipeline-cli build");
            }
            p.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read version.properties", e);
        }
        String version = p.getProperty("version", "");
        if (version.isEmpty() || version.startsWith("${")) {
            throw new IllegalStateException("version.properties was not filtered by the build: version=" + version);
        }
        return version;
    }

    /**
     * The lines of {@code --version}.
     *
     * @return the jpipeline version, then the Java runtime's
     */
    @Override
    public String[] getVersion() {
        return new String[] {
            "jpipeline " + version(),
            "Java " + Runtime.version() + " (" + System.getProperty("java.vendor", "unknown vendor") + ")"
        };
    }
}
