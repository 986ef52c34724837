package dev.jpipeline.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Sources whose size is known only at their end (a FIFO, stdin, an empty file) are read to the end. */
@Timeout(120)
class UnsizedSourceTest {

    /** 3 MiB and a bit: a partial last stage at every chunk size used here. */
    private static byte[] data() {
        byte[] data = new byte[(3 << 20) + 4321];
        new Random(42).nextBytes(data);
        return data;
    }

    private static String crc32c(byte[] data) {
        CRC32C crc = new CRC32C();
        crc.update(data);
        return String.format("0x%08x", crc.getValue());
    }

    private static String sha256(byte[] data) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
    }

    @Test
    void aFifoIsReadToItsEndWithTheJdksChecksums(@TempDir Path dir) throws Exception {
        Path fifo = dir.resolve("fifo");
        Process mkfifo;
        try {
            mkfifo = new ProcessBuilder("mkfifo", fifo.toString()).inheritIO().start();
        } catch (IOException e) {
            mkfifo = null;
        }
        assumeTrue(mkfifo != null && mkfifo.waitFor(30, TimeUnit.SECONDS) && mkfifo.exitValue() == 0,
            "mkfifo is not available here: no FIFO to read");
        byte[] data = data();
        for (String op : new String[] {"crc32c", "sha256"}) {
            // the writer's open waits for the reader's, as with cat; it ends when the data is written
            CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
                try (OutputStream out = Files.newOutputStream(fifo)) {
                    out.write(data);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            String[] r = Cli.run("stream", fifo.toString(), "--op", op, "--chunk", "256k", "--consumers", "3");
            writer.get(60, TimeUnit.SECONDS);
            assertEquals("0", r[0], r[2]);
            assertEquals(op.equals("crc32c") ? crc32c(data) : sha256(data), StreamCommandTest.result(r[1]), r[1]);
            assertTrue(r[1].contains("(3.0 MiB, size unknown until read to its end)"), r[1]);
        }
    }

    @Test
    void stdinIsReadToItsEndWithTheJdksChecksums() throws Exception {
        byte[] data = data();
        InputStream stdin = System.in;
        try {
            System.setIn(new ByteArrayInputStream(data));
            String[] crc = Cli.run("stream", "-", "--op", "crc32c", "--chunk", "64k");
            assertEquals("0", crc[0], crc[2]);
            assertEquals(crc32c(data), StreamCommandTest.result(crc[1]));
            assertTrue(crc[1].contains("jpipeline stream: stdin (3.0 MiB, size unknown"), crc[1]);
            assertFalse(crc[1].contains("does not apply"), "--producers was not given: " + crc[1]);
            System.setIn(new ByteArrayInputStream(data));
            String[] sha = Cli.run("stream", "-", "--op", "sha256", "--chunk", "1m", "--producers", "3");
            assertEquals(sha256(data), StreamCommandTest.result(sha[1]));       // a whole last chunk too
            assertTrue(sha[1].contains("note      a stream of unknown size is read in order by one producer "
                + "(--producers 3 does not apply)"), sha[1]);
        } finally {
            System.setIn(stdin);
        }
    }

    /** A readable /sys attribute that states 4096 bytes and holds fewer (as cat reads it), or null. */
    private static Path sysfsFile() throws IOException {
        for (String name : new String[] {"/sys/kernel/mm/transparent_hugepage/enabled",
                "/sys/devices/system/cpu/online", "/sys/class/net/lo/uevent"}) {
            Path file = Path.of(name);
            if (Files.isRegularFile(file) && Files.isReadable(file) && Files.size(file) > 0
                && Files.readAllBytes(file).length < Files.size(file)) {
                return file;
            }
        }
        return null;
    }

    @Test
    void aSysfsFileThatHoldsFewerBytesThanItsSizeIsReadToItsRealEnd() throws Exception {
        Path sys = sysfsFile();
        assumeTrue(sys != null, "no readable /sys attribute whose size (4096) exceeds its content here");
        byte[] content = Files.readAllBytes(sys);
        String[] r = Cli.run("stream", sys.toString(), "--op", "crc32c", "--chunk", "64k");
        assertEquals("0", r[0], r[2]);          // before: chunk 0 failed, the file ending before its stated 4096 bytes
        assertEquals(crc32c(content), StreamCommandTest.result(r[1]), r[1]);
        assertTrue(r[1].contains("size unknown until read to its end"), r[1]);
        r = Cli.run("stream", sys.toString(), "--processes");
        assertEquals("2", r[0], r[2]);
        assertTrue(r[2].contains("holds fewer bytes than its size"), r[2]);
    }

    @Test
    void anEmptyFileIsAnEmptyStreamWithNoVerdict(@TempDir Path dir) throws Exception {
        Path empty = Files.createFile(dir.resolve("empty.bin"));
        String[] r = Cli.run("stream", empty.toString());
        assertEquals("0", r[0], r[2]);
        assertEquals("0x00000000", StreamCommandTest.result(r[1]));
        assertTrue(r[1].contains("reading   nothing streamed: no reading."), r[1]);
    }
}
