package dev.jpipeline.cli;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.security.SecureRandom;

/**
 * Checks, before a run, that a file it will write at the end can be written: so that a bad {@code --trace} or
 * {@code --timeline} path is reported at once instead of after the whole run.
 */
final class OutputFile {

    /** Names the hidden partial files: unguessable, so that another user cannot plant one in a shared folder. */
    private static final SecureRandom RANDOM = new SecureRandom();

    private OutputFile() {
    }

    /**
     * Why {@code file} cannot be written, or null when it can: it has no name, it is a directory, its folder is
     * missing or a file, or opening it for writing fails. Opens a regular file without truncating, and removes it
     * again when the check created it. A FIFO or a device is not opened (a FIFO's open would wait for a reader, and
     * its reader would see the check's close as the end); a device that fails writes (such as {@code /dev/full})
     * shows only when written to.
     */
    static String problem(Path file) {
        if (file.toString().isEmpty()) {
            return "the option needs a file name";
        }
        if (Files.isDirectory(file)) {
            return file + " is a directory";
        }
        Path folder = file.toAbsolutePath().getParent();
        if (folder != null && Files.exists(folder) && !Files.isDirectory(folder)) {
            return folder + " is a file, not a folder";
        }
        if (folder != null && !Files.isDirectory(folder)) {
            return "folder " + folder + " does not exist";
        }
        boolean existed = Files.exists(file);
        if (existed && !Files.isRegularFile(file)) {
            return null;                        // a FIFO or a device: written at the end, a failure then is one line
        }
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

    /** Writes a whole file at a path. */
    @FunctionalInterface
    interface Writer {
        /**
         * Writes the output to {@code file}.
         *
         * @param file where to write
         * @throws IOException when writing fails
         */
        void writeTo(Path file) throws IOException;
    }

    /**
     * Writes {@code target} through {@code writer} so that it is never left half-written: a regular file (or a new
     * one) is written to a hidden file beside it, which then replaces it in one move; an interrupted or failed
     * write leaves the old file as it was (the hidden file is deleted, on exit at the latest). A new file gets the
     * permissions the umask gives (0644 under the usual 022); a replaced one keeps its permissions, owner and group.
     * A FIFO, a device or a link such as {@code /dev/stdout} is written directly, and so, like an editor's
     * in-place save, is a file that a move would change in other ways: one with other hard links, one whose folder
     * takes no new file (the user may write the file but not the folder), or one whose owner or group this process
     * cannot give a new file.
     *
     * @param target the output's path
     * @param writer what writes the output
     * @throws IOException when writing or the move fails
     */
    static void write(Path target, Writer writer) throws IOException {
        boolean special = Files.exists(target, LinkOption.NOFOLLOW_LINKS)
            && !Files.isRegularFile(target, LinkOption.NOFOLLOW_LINKS);
        if (special) {
            writer.writeTo(target);
            return;
        }
        boolean replacing = Files.isRegularFile(target, LinkOption.NOFOLLOW_LINKS);
        if (replacing && hardLinks(target) > 1) {
            writer.writeTo(target);                 // a move would leave the other names on the old contents
            return;
        }
        Path partial;
        try {
            partial = createPartial(target);
        } catch (AccessDeniedException folderTakesNoFile) {
            if (!replacing) throw folderTakesNoFile;
            writer.writeTo(target);
            return;
        }
        partial.toFile().deleteOnExit();            // an interrupt (SIGINT runs the shutdown hooks) leaves no litter
        try {
            if (replacing && !keepAttributes(target, partial)) {
                Files.deleteIfExists(partial);
                writer.writeTo(target);
                return;
            }
            writer.writeTo(partial);
            Files.move(partial, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(partial);
        }
    }

    /**
     * A new hidden file beside {@code target}, created without a permissions attribute so that the process's umask
     * applies, as it would to a file the shell created ({@code Files.createTempFile} would make it 0600).
     */
    private static Path createPartial(Path target) throws IOException {
        Path folder = target.toAbsolutePath().getParent();
        for (int attempt = 0; ; attempt++) {
            String name = "." + target.getFileName() + "." + Long.toUnsignedString(RANDOM.nextLong(), 36) + ".partial";
            try {
                return Files.createFile(folder.resolve(name));
            } catch (FileAlreadyExistsException taken) {
                if (attempt == 100) throw taken;
            }
        }
    }

    /**
     * Gives the replacement the permissions, owner and group of the file it replaces, where the file system has
     * POSIX ones; false when this process may not (only root gives a file away, and only a member sets a group).
     */
    private static boolean keepAttributes(Path target, Path partial) throws IOException {
        PosixFileAttributeView old = Files.getFileAttributeView(target, PosixFileAttributeView.class,
            LinkOption.NOFOLLOW_LINKS);
        if (old == null) {
            return true;
        }
        PosixFileAttributes was = old.readAttributes();
        PosixFileAttributeView replacement = Files.getFileAttributeView(partial, PosixFileAttributeView.class);
        try {
            PosixFileAttributes is = replacement.readAttributes();
            if (!is.owner().equals(was.owner())) replacement.setOwner(was.owner());
            if (!is.group().equals(was.group())) replacement.setGroup(was.group());
        } catch (IOException | SecurityException notAllowed) {
            return false;
        }
        replacement.setPermissions(was.permissions());
        return true;
    }

    /** How many names the file has; 1 where the file system does not say. */
    private static int hardLinks(Path file) {
        try {
            return (Integer) Files.getAttribute(file, "unix:nlink", LinkOption.NOFOLLOW_LINKS);
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException | SecurityException e) {
            return 1;
        }
    }

    /** The cause in a few words: the exception's message, or its type when it has none. */
    static String reason(Exception e) {
        if (e instanceof AccessDeniedException) {
            return "permission denied";
        }
        String reason = e instanceof FileSystemException fs && fs.getReason() != null
            ? fs.getReason() : e.getMessage();
        return reason != null ? reason : e.getClass().getSimpleName();
    }
}
