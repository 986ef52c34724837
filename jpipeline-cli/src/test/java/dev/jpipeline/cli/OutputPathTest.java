package dev.jpipeline.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Unwritable --trace and --timeline paths: one line on stderr, before the run where it can be known then. */
@Timeout(120)
class OutputPathTest {

    @Test
    void aDirectoryOrAMissingFolderIsRefusedBeforeTheRun(@TempDir Path dir) {
        String missing = dir.resolve("no/such/folder/t.json").toString();
        String[][] cases = {
            {"--trace", dir.toString(), "jpipeline: cannot write --trace " + dir + ": " + dir + " is a directory"},
            {"--timeline", missing, "jpipeline: cannot write --timeline " + missing + ": folder "
                + dir.resolve("no/such/folder") + " does not exist"},
        };
        for (String[] c : cases) {
            String[] r = Cli.run("stream", "--synthetic", "64m", c[0], c[1]);
            assertEquals("2", r[0], r[2]);
            assertEquals("", r[1], "nothing ran");
            assertEquals(c[2], r[2].strip());
        }
        assertFalse(Files.exists(dir.resolve("no")), "the check creates nothing");
    }

    @Test
    void aCheckedPathThatDidNotExistIsNotLeftBehindWhenTheRunIsRefused(@TempDir Path dir) {
        Path trace = dir.resolve("t.json");
        String[] r = Cli.run("stream", "--synthetic", "1m", "--trace", trace.toString(), "--stages", "0");
        assertEquals("2", r[0]);
        assertFalse(Files.exists(trace));
    }

    @Test
    void aWriteFailureAfterTheRunIsOneLine() {
        assumeTrue(Files.isWritable(Path.of("/dev/full")), "no /dev/full here");
        String[] trace = Cli.run("stream", "--synthetic", "1m", "--trace", "/dev/full");
        assertEquals("1", trace[0]);
        assertEquals("jpipeline: cannot write the trace to /dev/full: No space left on device", trace[2].strip());
        String[] timeline = Cli.run("stream", "--synthetic", "1m", "--timeline", "/dev/full");
        assertEquals("1", timeline[0]);
        assertEquals("jpipeline: cannot write the timeline to /dev/full: No space left on device",
            timeline[2].strip());
    }

    @Test
    void outputsThatWouldOverwriteTheInputOrEachOtherAreRefused(@TempDir Path dir) throws Exception {
        Path input = Files.write(dir.resolve("in.bin"), new byte[4096]);
        Path out = dir.resolve("same.out");
        String[][] cases = {
            {"--trace", input.toString(), "jpipeline: --trace " + input + " is the input file: writing it would "
                + "destroy the data being streamed"},
            {"--timeline", dir.resolve("./in.bin").toString(), "jpipeline: --timeline " + dir.resolve("./in.bin")
                + " is the input file: writing it would destroy the data being streamed"},
        };
        for (String[] c : cases) {
            String[] r = Cli.run("stream", input.toString(), c[0], c[1]);
            assertEquals("2", r[0], r[2]);
            assertEquals(c[2], r[2].strip());
        }
        String[] both = Cli.run("stream", input.toString(), "--trace", out.toString(), "--timeline", out.toString());
        assertEquals("2", both[0]);
        assertEquals("jpipeline: --trace and --timeline name the same file, " + out + ": one would overwrite the "
            + "other", both[2].strip());
        assertEquals(4096, Files.size(input), "the input is untouched");
    }

    @Test
    void anEmptyNameAFileAsFolderAndAFifoAreHandledBeforeTheRun(@TempDir Path dir) throws Exception {
        String[] empty = Cli.run("stream", "--synthetic", "1m", "--trace", "");
        assertEquals("2", empty[0]);
        assertEquals("jpipeline: cannot write --trace : the option needs a file name", empty[2].strip());
        Path file = Files.write(dir.resolve("plain"), new byte[1]);
        String[] underFile = Cli.run("stream", "--synthetic", "1m", "--trace", file.resolve("t.json").toString());
        assertEquals("2", underFile[0]);
        assertEquals("jpipeline: cannot write --trace " + file.resolve("t.json") + ": " + file
            + " is a file, not a folder", underFile[2].strip());
        Path fifo = dir.resolve("fifo");
        Process mkfifo = new ProcessBuilder("mkfifo", fifo.toString()).start();
        assumeTrue(mkfifo.waitFor() == 0, "no mkfifo here");
        // the check must not open the FIFO (it would wait for a reader): a reader started now gets the whole trace
        Process reader = new ProcessBuilder("cat", fifo.toString()).start();
        String[] r = Cli.run("stream", "--synthetic", "1m", "--trace", fifo.toString());
        assertEquals("0", r[0], r[2]);
        String json = new String(reader.getInputStream().readAllBytes());
        assertTrue(json.startsWith("{\"displayTimeUnit\"") && json.strip().endsWith("}"), json);
    }

    @Test
    void aFailedWriteLeavesThePreviousOutputWholeAndNoPartialFile(@TempDir Path dir) throws Exception {
        Path target = Files.writeString(dir.resolve("trace.json"), "{\"old\":true}");
        java.io.IOException failure = org.junit.jupiter.api.Assertions.assertThrows(java.io.IOException.class,
            () -> OutputFile.write(target, file -> {
                Files.writeString(file, "{\"half");
                throw new java.io.IOException("interrupted mid-write");
            }));
        assertEquals("interrupted mid-write", failure.getMessage());
        assertEquals("{\"old\":true}", Files.readString(target));
        try (var listing = Files.list(dir)) {
            assertEquals(java.util.List.of(target), listing.toList(), "no partial file left");
        }
        OutputFile.write(target, file -> Files.writeString(file, "{\"new\":true}"));
        assertEquals("{\"new\":true}", Files.readString(target));
    }

    @Test
    void aNewOutputGetsTheUmasksPermissionsAndAReplacedOneKeepsItsOwn(@TempDir Path dir) throws Exception {
        Path status = Path.of("/proc/self/status");
        assumeTrue(Files.isReadable(status), "no /proc/self/status here to read the umask from");
        var umaskLine = Files.readAllLines(status).stream().filter(l -> l.startsWith("Umask:")).findFirst();
        assumeTrue(umaskLine.isPresent(), "this kernel does not show the umask");
        int umask = Integer.parseInt(umaskLine.get().substring("Umask:".length()).strip(), 8);
        Path fresh = dir.resolve("new.json");
        OutputFile.write(fresh, file -> Files.writeString(file, "{}"));
        assertEquals(PosixFilePermissions.toString(permissions(0666 & ~umask)),
            PosixFilePermissions.toString(Files.getPosixFilePermissions(fresh)),
            "a new file gets 0666 less the umask (0" + Integer.toOctalString(umask) + "), as the shell's would");
        Path shared = Files.writeString(dir.resolve("shared.html"), "old");
        Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rw-rw-r--"));
        OutputFile.write(shared, file -> Files.writeString(file, "new"));
        assertEquals("rw-rw-r--", PosixFilePermissions.toString(Files.getPosixFilePermissions(shared)));
        assertEquals("new", Files.readString(shared));
    }

    private static java.util.Set<PosixFilePermission> permissions(int mode) {
        var all = PosixFilePermission.values();          // OWNER_READ .. OTHERS_EXECUTE: bits 8 down to 0
        var set = java.util.EnumSet.noneOf(PosixFilePermission.class);
        for (int i = 0; i < all.length; i++) {
            if ((mode & (1 << (8 - i))) != 0) set.add(all[i]);
        }
        return set;
    }

    @Test
    void aFileWithAnotherHardLinkIsWrittenInPlaceSoBothNamesSeeTheNewOutput(@TempDir Path dir) throws Exception {
        Path target = Files.writeString(dir.resolve("trace.json"), "old");
        Path other;
        try {
            other = Files.createLink(dir.resolve("kept.json"), target);
        } catch (UnsupportedOperationException | java.io.IOException e) {
            assumeTrue(false, "no hard links here: " + e);
            return;
        }
        OutputFile.write(target, file -> Files.writeString(file, "new"));
        assertEquals("new", Files.readString(target));
        assertEquals("new", Files.readString(other), "the other name still shows the old contents");
    }

    @Test
    void aReplacedFileKeepsItsGroup(@TempDir Path dir) throws Exception {
        Path target = Files.writeString(dir.resolve("shared.json"), "old");
        int mine = (Integer) Files.getAttribute(target, "unix:gid");
        int other = mine == 65534 ? 0 : 65534;       // nogroup, or root's where the test runs as nogroup
        try {
            Files.setAttribute(target, "unix:gid", other);
        } catch (java.io.IOException e) {
            assumeTrue(false, "this user cannot give a file to group " + other + ": " + e);
        }
        OutputFile.write(target, file -> Files.writeString(file, "new"));
        assertEquals("new", Files.readString(target));
        assertEquals(other, Files.getAttribute(target, "unix:gid"), "the group was lost in the replacement");
    }

    @Test
    void aWritableFileInAFolderThatTakesNoNewFileIsStillWritten(@TempDir Path dir) throws Exception {
        Path folder = Files.createDirectory(dir.resolve("ro"));
        Path target = Files.writeString(folder.resolve("t.json"), "old");
        Files.setPosixFilePermissions(folder, PosixFilePermissions.fromString("r-xr-xr-x"));
        try {
            assumeTrue(!Files.isWritable(folder), "this user (root?) writes to read-only folders anyway");
            assertEquals(null, OutputFile.problem(target), "the check lets the writable file through");
            OutputFile.write(target, file -> Files.writeString(file, "new"));
            assertEquals("new", Files.readString(target));
        } finally {
            Files.setPosixFilePermissions(folder, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
    }

    /** Runs {@code command} through bash, and returns its exit status (-1 when it cannot run). */
    private static int sh(String command) {
        try {
            Process p = new ProcessBuilder("bash", "-c", command).redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            return p.waitFor();
        } catch (java.io.IOException | InterruptedException e) {
            return -1;
        }
    }

    /**
     * A dangling symlink as --trace (a link made for the output, e.g. into a results folder): written through, as
     * the shell's {@code > link} writes, and the link kept. Today the check opens the link (creating an empty
     * missing.json), deletes the link (it "did not exist"), and the write then makes a plain file in its place.
     */
    @Test
    void aDanglingSymlinkIsWrittenThroughAndKept(@TempDir Path dir) throws Exception {
        Path link = Files.createSymbolicLink(dir.resolve("trace.json"), Path.of("missing.json"));
        String[] r = Cli.run("stream", "--synthetic", "1m", "--trace", link.toString());
        assertEquals("0", r[0], r[2]);
        assertTrue(Files.isSymbolicLink(link), "the link was replaced by a plain file");
        assertTrue(Files.readString(dir.resolve("missing.json")).startsWith("{\"displayTimeUnit\""),
            "the link's target holds the trace");
    }

    /**
     * A refused run creates nothing and deletes nothing: the dangling link stays, and no empty file appears where it
     * points. Today the check leaves an empty missing.json and deletes the link.
     */
    @Test
    void aRunRefusedAfterTheCheckLeavesADanglingSymlinkAsItWas(@TempDir Path dir) throws Exception {
        Path link = Files.createSymbolicLink(dir.resolve("trace.json"), Path.of("missing.json"));
        String[] r = Cli.run("stream", dir.resolve("no-such-input").toString(), "--trace", link.toString());
        assertEquals("2", r[0], r[2]);
        assertTrue(Files.isSymbolicLink(link), "the refused run deleted the link");
        assertFalse(Files.exists(dir.resolve("missing.json")), "the refused run left an empty file behind");
    }

    /**
     * A symlink the check cannot open (a loop; a link into a missing folder) is refused, and left where it is, with
     * a reason. Today the check deletes both links (its finally removes a path that "did not exist"), and for the
     * link into a missing folder the reason is only the path again: "cannot open L for writing (L)".
     */
    @Test
    void aSymlinkThatCannotBeOpenedIsRefusedAndKept(@TempDir Path dir) throws Exception {
        Path loop = Files.createSymbolicLink(dir.resolve("loop.json"), Path.of("loop.json"));
        Path into = Files.createSymbolicLink(dir.resolve("into.json"), Path.of("no/such/folder/t.json"));
        for (Path link : new Path[] {loop, into}) {
            String[] r = Cli.run("stream", "--synthetic", "1m", "--trace", link.toString());
            assertEquals("2", r[0], r[2]);
            assertTrue(Files.isSymbolicLink(link), "the check deleted " + link + ": " + r[2]);
            assertFalse(r[2].strip().endsWith("(" + link + ")"), "no reason, only the path: " + r[2]);
        }
    }

    /**
     * A name the folder takes (255 bytes at most on ext4 and tmpfs) but that is too long for the hidden partial
     * file ("." + name + "." + up to 13 + ".partial"): written, or refused before the run. Today the check passes,
     * the whole run happens, and the write fails after it: "cannot write the trace to ...: File name too long"
     * (from 232 bytes on).
     */
    @Test
    void aLongNameTheFolderTakesIsWrittenOrRefusedBeforeTheRun(@TempDir Path dir) throws Exception {
        Path target = dir.resolve("t".repeat(235) + ".json");                // 240 bytes
        Files.writeString(target, "");                                          // the folder takes the name
        Files.delete(target);
        String[] r = Cli.run("stream", "--synthetic", "1m", "--trace", target.toString());
        assertFalse("1".equals(r[0]), "failed after the run: " + r[2]);
        if ("0".equals(r[0])) {
            assertTrue(Files.readString(target).startsWith("{\"displayTimeUnit\""));
        } else {
            assertEquals("", r[1], "refused, but after the run");
        }
    }

    /**
     * The output's folder removed while the run went on: the failure gives a reason. Today the reason is the
     * hidden partial file's path: "cannot write the trace to d/t.json: /.../d/.t.json.2g1lacjzfbpom.partial".
     */
    @Test
    void aFolderRemovedBeforeTheWriteGivesAReasonNotThePartialFilesName(@TempDir Path dir) {
        Path target = dir.resolve("gone/t.json");
        java.io.IOException e = org.junit.jupiter.api.Assertions.assertThrows(java.io.IOException.class,
            () -> OutputFile.write(target, file -> Files.writeString(file, "{}")));
        String reason = OutputFile.reason(e);
        assertFalse(reason.contains(".partial"), "the reason names the hidden file: " + reason);
    }

    /**
     * A target that is a bind mount of a file (docker run -v ./trace.json:/out/trace.json): a move onto a mount
     * point fails (EBUSY), so it is written in place, as {@code >} would. Today the run completes and then fails:
     * "cannot write the trace to ...: Device or resource busy".
     */
    @Test
    void aBindMountedFileIsWrittenInPlace(@TempDir Path dir) throws Exception {
        Path target = Files.writeString(dir.resolve("trace.json"), "old");
        Path source = Files.writeString(dir.resolve("mounted"), "old");
        assumeTrue(sh("mount --bind '" + source + "' '" + target + "'") == 0, "cannot bind-mount here (not root?)");
        try {
            String[] r = Cli.run("stream", "--synthetic", "1m", "--trace", target.toString());
            assertEquals("0", r[0], r[2]);
            assertTrue(Files.readString(source).startsWith("{\"displayTimeUnit\""), "the mounted file has the trace");
        } finally {
            sh("umount '" + target + "'");
        }
    }

    /**
     * A writable file in a folder that takes no new file because it is immutable (chattr +i: EPERM, not EACCES,
     * and for root too): written in place, as for a read-only folder. Today only AccessDeniedException falls back,
     * and the run fails after it: "cannot write the trace to ...: Operation not permitted".
     */
    @Test
    void aWritableFileInAnImmutableFolderIsWrittenInPlace(@TempDir Path dir) throws Exception {
        Path folder = Files.createDirectory(dir.resolve("immutable"));
        Path target = Files.writeString(folder.resolve("t.json"), "old");
        assumeTrue(sh("chattr +i '" + folder + "'") == 0, "cannot make a folder immutable here");
        try {
            String[] r = Cli.run("stream", "--synthetic", "1m", "--trace", target.toString());
            assertEquals("0", r[0], r[2]);
            assertTrue(Files.readString(target).startsWith("{\"displayTimeUnit\""));
        } finally {
            sh("chattr -i '" + folder + "'");
        }
    }

    /**
     * A replaced file keeps its extended attributes (and so its ACL, system.posix_acl_access): a move would change
     * the file in this way too, so it is written in place or the attributes are copied. Today they are lost.
     */
    @Test
    void aReplacedFileKeepsItsExtendedAttributes(@TempDir Path dir) throws Exception {
        Path target = Files.writeString(dir.resolve("trace.json"), "old");
        var view = Files.getFileAttributeView(target, java.nio.file.attribute.UserDefinedFileAttributeView.class);
        assumeTrue(view != null, "no user attributes here");
        try {
            view.write("origin", java.nio.ByteBuffer.wrap("kept".getBytes()));
        } catch (java.io.IOException e) {
            assumeTrue(false, "this file system takes no user attributes: " + e);
        }
        OutputFile.write(target, file -> Files.writeString(file, "new"));
        assertEquals("new", Files.readString(target));
        var after = Files.getFileAttributeView(target, java.nio.file.attribute.UserDefinedFileAttributeView.class);
        assertTrue(after.list().contains("origin"), "the attribute was lost: " + after.list());
    }

    /**
     * --trace /dev/stdout with stdout appended to a log ({@code >> run.log}): the log's earlier lines stay. Today
     * the trace is written by opening /dev/stdout with truncation, which empties the log file (and the summary
     * printed before it), and the trace line printed after it lands inside the JSON, at the old offset.
     */
    @Test
    void aTraceToDevStdoutAppendedToALogKeepsTheLog(@TempDir Path dir) throws Exception {
        assumeTrue(Files.exists(Path.of("/dev/stdout")), "no /dev/stdout here");
        Path log = Files.writeString(dir.resolve("run.log"), "an earlier line\n");
        String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(javaBin, "-cp", System.getProperty("java.class.path"), Main.class.getName(),
            "stream", "--synthetic", "1m", "--trace", "/dev/stdout")
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
            .redirectError(dir.resolve("err").toFile()).start();
        assertTrue(p.waitFor(120, java.util.concurrent.TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), Files.readString(dir.resolve("err")));
        String out = Files.readString(log);
        assertTrue(out.startsWith("an earlier line\n"), "the log's earlier content is gone: "
            + out.substring(0, Math.min(200, out.length())));
    }
}
