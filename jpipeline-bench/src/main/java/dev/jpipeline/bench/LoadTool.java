package dev.jpipeline.bench;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Locale;

/**
 * {@code jpipeline-bench/load.sh}'s helper for timing the CLI's {@code stream} outside JMH, run as
 * {@code java -cp jpipeline-bench.jar dev.jpipeline.bench.LoadTool ...}:
 * <ul>
 *   <li>{@code write FILE SIZE_MIB}: writes {@link LoadBenchmark}'s test file (the same content) and prints its
 *       expected results the way {@code jpipeline stream} prints them, {@code sum 0x…} (16 digits) and
 *       {@code crc32c 0x…} (8 digits);</li>
 *   <li>{@code loop FILE sum|crc32c CHUNK_MIB}: one pass of {@link LoadBenchmark#plainLoop}'s loop in this fresh
 *       JVM, so cold as a {@code stream} command's pass is, and prints {@code result OP 0x…} and
 *       {@code time S s} (from the file's open to its close).</li>
 * </ul>
 */
public final class LoadTool {

    private LoadTool() {
    }

    /**
     * Runs one of the commands above.
     *
     * @param args the command and its arguments
     * @throws IOException when the file cannot be written or read
     */
    public static void main(String[] args) throws IOException {
        if (args.length == 3 && args[0].equals("write")) {
            LoadBenchmark.Expected expected =
                LoadBenchmark.writeTestFile(Path.of(args[1]), Long.parseLong(args[2]) * LoadBenchmark.MIB);
            System.out.printf(Locale.ROOT, "sum 0x%016x%ncrc32c 0x%08x%n", expected.sum(), expected.crc32c());
        } else if (args.length == 4 && args[0].equals("loop")) {
            LoadBenchmark.Compute compute = LoadBenchmark.Compute.valueOf(args[2].toUpperCase(Locale.ROOT));
            ByteBuffer buffer = ByteBuffer.allocateDirect(Math.toIntExact(Long.parseLong(args[3]) * LoadBenchmark.MIB));
            MemorySegment segment = MemorySegment.ofBuffer(buffer);
            long start = System.nanoTime();
            long result = LoadBenchmark.plainPass(Path.of(args[1]), buffer, segment, compute);
            long nanos = System.nanoTime() - start;
            System.out.printf(Locale.ROOT, compute == LoadBenchmark.Compute.SUM ? "result sum 0x%016x%n"
                : "result crc32c 0x%08x%n", result);
            System.out.printf(Locale.ROOT, "time %.4f s%n", nanos / 1e9);
        } else {
            System.err.println("usage: LoadTool write FILE SIZE_MIB | LoadTool loop FILE sum|crc32c CHUNK_MIB");
            System.exit(2);
        }
    }
}
