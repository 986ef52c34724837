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
}
