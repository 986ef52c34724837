package dev.jpipeline.cli;

import java.net.URISyntaxException;
import java.nio.file.Path;

/**
 * How the user started this command, as a command line they can type again from where they stand: what a replay
 * line begins with.
 *
 * <pre>
 * The launcher script passes the path it was invoked by ($0: "./jpipeline" from the clone's root, "../p/jpipeline"
 * from beside it, the full path when found on the PATH) as -Djpipeline.command. Without it (java -jar), the command
 * is java with the native-access flag and the jar's absolute path. A word with characters the shell would split
 * or expand is single-quoted.
 * </pre>
 */
final class LaunchCommand {

    /** The system property the launcher sets to the path it was invoked by. */
    static final String PROPERTY = "jpipeline.command";

    private LaunchCommand() {
    }

    /** The command that starts jpipeline again, for this run's user, shell-quoted. */
    static String current() {
        String launcher = System.getProperty(PROPERTY);
        if (launcher != null && !launcher.isBlank()) {
            return quoteIfNeeded(launcher);
        }
        return "java --enable-native-access=ALL-UNNAMED -jar " + quoteIfNeeded(jar());
    }

    /** {@code text} single-quoted for the shell (a quote inside it closed, escaped and reopened). */
    static String quote(String text) {
        return "'" + text.replace("'", "'\\''") + "'";
    }

    /** {@code word} as the shell reads it back: unchanged when it holds only safe characters, else quoted. */
    static String quoteIfNeeded(String word) {
        return word.matches("[A-Za-z0-9_./:=@%+,-]+") ? word : quote(word);
    }

    private static String jar() {
        try {
            var source = LaunchCommand.class.getProtectionDomain().getCodeSource();
            return source == null ? "jpipeline.jar" : Path.of(source.getLocation().toURI()).toString();
        } catch (URISyntaxException | IllegalArgumentException | SecurityException e) {
            return "jpipeline.jar";
        }
    }
}
