package dev.jpipeline.cli;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserDefinedFileAttributeView;
import java.security.SecureRandom;
import java.util.EnumSet;
import java.util.Set;

/**
 * The --trace and --timeline files: checked before a run, so that a bad path is reported at once instead of after
 * the whole run, and written at its end so that a replaced file is never left half-written and keeps what it was
 * (its mode, owner, group, names and attributes), as a careful editor saves.
 *
 * <pre>
 *   a new file or a plain regular one : written to a hidden partial file beside it (mode 0600 while it is written),
 *                                       given the old file's mode, owner and group (a new file: the umask's mode),
 *                                       then moved over it in one step
 *   in place (like the shell's &gt;)     : a file with other hard links or user attributes, a file whose owner or group
 *                                       this process cannot give, a folder that takes no new file, a target that a
 *                                       move cannot replace (a bind mount)
 *   through (no check creates or     : a symbolic link (written through, the link kept), a FIFO, a device;
 *   deletes anything)                  this process's own stdout or stderr is appended to, never truncated
 * </pre>
 */
final class OutputFile {

    /** Names the hidden partial files: unguessable, so that another user cannot plant one in a shared folder. */
    private static final SecureRandom RANDOM = new SecureRandom();
    /** A partial file's mode while the output is written: 0600. */
    private static final Set<PosixFilePermission> OWNER_ONLY =
        EnumSet.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE);
    /** Links followed at most before a chain counts as a loop (Linux's own limit). */
    private static final int MAX_LINKS = 40;

    private OutputFile() {
    }

    /**
     * Why {@code file} cannot be written, or null when it can: it has no name, it is a directory, its folder is
     * missing or a file, it is a link that loops or points into a missing folder, or opening it for writing fails.
     * Opens a regular file without truncating, and removes it again when the check created it. A symbolic link is
     * only read, never opened: opening a dangling one would create its target. A FIFO or a device is not opened (a
     * FIFO's open would wait for a reader, and its reader would see the check's close as the end); a device that
     * fails writes (such as {@code /dev/full}) shows only when written to.
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
        if (Files.isSymbolicLink(file)) {
            return linkProblem(file);
        }
        boolean existed = Files.exists(file, LinkOption.NOFOLLOW_LINKS);
        if (existed && !Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
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

    /** Why the symbolic link {@code link} cannot be written through, or null: read, followed, never opened. */
    private static String linkProblem(Path link) {
        Path at = link.toAbsolutePath();
        try {
            for (int hops = 0; Files.isSymbolicLink(at); hops++) {
                if (hops == MAX_LINKS) {
                    return "it is a symbolic link that loops (more than " + MAX_LINKS + " links deep)";
                }
                at = at.getParent().resolve(Files.readSymbolicLink(at)).normalize();
            }
        } catch (IOException | SecurityException e) {
            return "cannot read the link " + at + " (" + reason(e) + ")";
        }
        if (Files.isDirectory(at)) {
            return "it links to " + at + ", a directory";
        }
        if (Files.exists(at)) {
            return !Files.isRegularFile(at) || Files.isWritable(at) ? null
                : "it links to " + at + ", which cannot be opened for writing (permission denied)";
        }
        Path folder = at.getParent();
        if (folder == null || !Files.isDirectory(folder)) {
            return "it links to " + at + ", in folder " + folder + ", which does not exist";
        }
        return Files.isWritable(folder) ? null
            : "it links to " + at + ", and folder " + folder + " takes no new file (permission denied)";
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
     * Writes {@code target} through {@code writer} as the class comment says: a plain regular file (or a new one)
     * is replaced in one move, so that an interrupted or failed write leaves the old file as it was (the hidden
     * file is deleted, on exit at the latest); anything a move would change otherwise is written in place, a link
     * or a device through, and this process's own stdout or stderr appended to.
     *
     * @param target the output's path
     * @param writer what writes the output
     * @throws IOException when writing fails
     */
    static void write(Path target, Writer writer) throws IOException {
        if (isOwnStream(target)) {
            appendThrough(target, writer);
            return;
        }
        boolean special = Files.exists(target, LinkOption.NOFOLLOW_LINKS)
            && !Files.isRegularFile(target, LinkOption.NOFOLLOW_LINKS);
        if (special) {
            writer.writeTo(target);             // a link (written through, kept), a FIFO, a device
            return;
        }
        boolean replacing = Files.isRegularFile(target, LinkOption.NOFOLLOW_LINKS);
        if (replacing && (hardLinks(target) > 1 || hasUserAttributes(target))) {
            writer.writeTo(target);             // a move would leave the other names on the old contents, or drop
            return;                             // the attributes
        }
        Path partial;
        try {
            partial = createPartial(target);
        } catch (FileSystemException folderTakesNoFile) {
            writer.writeTo(target);             // read-only or immutable folder, or a name too long: write directly
            return;
        }
        partial.toFile().deleteOnExit();        // an interrupt (SIGINT runs the shutdown hooks) leaves no litter
        try {
            if (replacing && !keepAttributes(target, partial)) {
                Files.deleteIfExists(partial);
                writer.writeTo(target);
                return;
            }
            if (!replacing) {
                giveUmaskMode(partial);
            }
            writer.writeTo(partial);
            try {
                Files.move(partial, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            } catch (FileSystemException notMovable) {
                if (!replacing) throw notMovable;
                copyInPlace(partial, target);   // a bind-mounted file cannot be moved onto: write it in place
            }
        } finally {
            Files.deleteIfExists(partial);
        }
    }

    /** Whether {@code target} names this process's own stdout or stderr (its earlier output must stay). */
    private static boolean isOwnStream(Path target) {
        String name = target.toString();
        return name.equals("/dev/stdout") || name.equals("/dev/stderr") || name.startsWith("/dev/fd/")
            || name.startsWith("/proc/self/fd/");
    }

    /** Writes the output to a private temporary file, then appends it to {@code target}. */
    private static void appendThrough(Path target, Writer writer) throws IOException {
        Path staged = Files.createTempFile("jpipeline-", ".out");
        try {
            writer.writeTo(staged);
            try (OutputStream out = Files.newOutputStream(target, StandardOpenOption.WRITE,
                    StandardOpenOption.APPEND)) {
                Files.copy(staged, out);
            }
        } finally {
            Files.deleteIfExists(staged);
        }
    }

    /** Overwrites {@code target}'s contents with {@code written}'s, keeping the file itself. */
    private static void copyInPlace(Path written, Path target) throws IOException {
        try (OutputStream out = Files.newOutputStream(target, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            Files.copy(written, out);
        }
    }

    /**
     * A new hidden file beside {@code target}, mode 0600 while the output is written (nobody else can open it
     * meanwhile), with a short name of its own, so that a target name the folder barely takes still works.
     */
    private static Path createPartial(Path target) throws IOException {
        Path folder = target.toAbsolutePath().getParent();
        boolean posix = Files.getFileStore(folder).supportsFileAttributeView(PosixFileAttributeView.class);
        for (int attempt = 0; ; attempt++) {
            Path partial = folder.resolve(".jpipeline-" + Long.toUnsignedString(RANDOM.nextLong(), 36) + ".partial");
            try {
                return posix ? Files.createFile(partial, PosixFilePermissions.asFileAttribute(OWNER_ONLY))
                    : Files.createFile(partial);
            } catch (FileAlreadyExistsException taken) {
                if (attempt == 100) throw taken;
            }
        }
    }

    /** Gives a new output the mode a file the shell created would get: 0666 less the umask. */
    private static void giveUmaskMode(Path partial) throws IOException {
        PosixFileAttributeView view = Files.getFileAttributeView(partial, PosixFileAttributeView.class);
        Set<PosixFilePermission> mode = view == null ? null : umaskMode(partial.getParent());
        if (mode != null) {
            view.setPermissions(mode);
        }
    }

    /**
     * 0666 less this process's umask: read from /proc/self/status where Linux shows it, else from an empty probe
     * file created in {@code folder} and removed at once; null when neither can tell.
     */
    private static Set<PosixFilePermission> umaskMode(Path folder) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("Umask:")) {
                    int umask = Integer.parseInt(line.substring("Umask:".length()).strip(), 8);
                    return mode(0666 & ~umask);
                }
            }
        } catch (IOException | RuntimeException notLinux) {
            // ask the file system instead
        }
        try {
            Path probe = folder.resolve(".jpipeline-" + Long.toUnsignedString(RANDOM.nextLong(), 36) + ".umask");
            Files.createFile(probe);
            try {
                return Files.getPosixFilePermissions(probe);
            } finally {
                Files.deleteIfExists(probe);
            }
        } catch (IOException | RuntimeException cannotTell) {
            return null;
        }
    }

    /** The permissions of a mode's nine low bits. */
    private static Set<PosixFilePermission> mode(int bits) {
        PosixFilePermission[] all = PosixFilePermission.values();     // OWNER_READ .. OTHERS_EXECUTE: bits 8 .. 0
        Set<PosixFilePermission> set = EnumSet.noneOf(PosixFilePermission.class);
        for (int i = 0; i < all.length; i++) {
            if ((bits & 1 << (8 - i)) != 0) set.add(all[i]);
        }
        return set;
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

    /** Whether the file has user extended attributes, which a move to a new file would drop. */
    private static boolean hasUserAttributes(Path file) {
        UserDefinedFileAttributeView view = Files.getFileAttributeView(file, UserDefinedFileAttributeView.class);
        try {
            return view != null && !view.list().isEmpty();
        } catch (IOException | UnsupportedOperationException | SecurityException e) {
            return false;
        }
    }

    /** The cause in a few words: the exception's message, or its type when it has none. */
    static String reason(Exception e) {
        if (e instanceof AccessDeniedException) {
            return "permission denied";
        }
        if (e instanceof NoSuchFileException && ((NoSuchFileException) e).getReason() == null) {
            return "no such file or folder";
        }
        String reason = e instanceof FileSystemException fs && fs.getReason() != null
            ? fs.getReason() : e.getMessage();
        return reason != null ? reason : e.getClass().getSimpleName();
    }
}
