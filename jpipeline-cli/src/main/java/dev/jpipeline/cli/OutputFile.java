package dev.jpipeline.cli;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Checks, before a run, that a file it will write at the end can be written: so that a bad {@code --trace} or
 * {@code --timeline} path is reported at once instead of after the whole run.
 */
final class OutputFile {

    private OutputFile() {
    }

    /**
     * Why {@code file} cannot be written, or null when it can: it is a directory, its folder is missing, or opening
     * it for writing fails. Opens it without truncating, and removes it again when the check created it. A device
     * that accepts the open but fails writes (such as {@code /dev/full}) shows only when written to.
     */
    static String problem(Path file) {
        if (Files.isDirectory(file)) {
            return file + " is a directory";
        }
        Path folder = file.toAbsolutePath().getParent();
        if (folder != null && !Files.isDirectory(folder)) {
            return "folder " + folder + " does not exist";
        }
        boolean existed = Files.exists(file);
        try (FileChannel ignored = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.CREATE)) {
            return null;
        } catch (IOException | SecurityException e) {
            return "cannot open " + file + " for writing (" + reason(e) + ")";
        } finally {
            if (!existed) {
                try {
                    Files.deleteIfExists(file);
                } catch (IOException leftBehind) {
                    // an empty file is left; the run will overwrite it
                }
            }
        }
    }

    /** The cause in a few words: the exception's message, or its type when it has none. */
    static String reason(Exception e) {
        String reason = e instanceof FileSystemException fs && fs.getReason() != null
            ? fs.getReason() : e.getMessage();
        return reason != null ? reason : e.getClass().getSimpleName();
    }
}
