import dev.jpipeline.prefetch.Crc32cPart;
import dev.jpipeline.prefetch.Prefetch;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.zip.CRC32C;

/** The CRC-32C of a file, computed while the next chunks are read: on this thread, then on four. */
final class ReadmePrefetch {

    /**
     * Prints the CRC-32C of the file named by {@code args[0]}, computed both ways.
     *
     * @param args the file
     */
    public static void main(String[] args) {
        Path file = Path.of(args[0]);
        System.out.printf("crc32c %08x, in parallel %08x%n", crc32c(file), parallelCrc32c(file));
    }

    /**
     * Reads 4 MiB chunks, up to 4 of them ahead, into stage buffers; each chunk is valid until the next one.
     *
     * @param file the file to read
     * @return its CRC-32C
     */
    public static long crc32c(Path file) {
        CRC32C crc = new CRC32C();
        try (var chunks = Prefetch.from(file).chunk(4 << 20).stages(4).open()) {
            for (MemorySegment chunk : chunks) crc.update(chunk.asByteBuffer());
        }
        return crc.getValue();
    }

    /**
     * The parallel form: 2 threads read, 4 compute whole chunks, and the chunks' CRCs combine in file order.
     *
     * @param file the file to read
     * @return its CRC-32C
     */
    public static long parallelCrc32c(Path file) {
        return Prefetch.from(file).chunk(4 << 20).stages(8).parallel(2, 4)
            .reduce(Crc32cPart.EMPTY, Crc32cPart::of, Crc32cPart::then).value();
    }
}
