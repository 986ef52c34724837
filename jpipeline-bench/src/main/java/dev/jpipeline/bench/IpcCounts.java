package dev.jpipeline.bench;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.function.BooleanSupplier;

/**
 * The counters that a cross-process benchmark and its consuming partner ({@link IpcPartner}) share, in a small
 * mapped file of their own (not the pipeline's region or the ring's file, so that every peer is counted the same
 * way). The partner publishes how many items (or stages) it has consumed and their running sum; the benchmark
 * thread reads them once per invocation, when it waits for the partner to have consumed everything it sent, so an
 * invocation's time covers the whole hand-off. Each field sits on a 128-byte line of its own: the partner's store
 * per item stays in its own core's cache until the benchmark thread reads it at the invocation's end.
 */
final class IpcCounts implements AutoCloseable {

    /** Items or stages consumed: written by the partner (a release store), read by the benchmark thread. */
    private static final long CONSUMED = 0;
    /** The running sum of what the partner read: written before {@link #CONSUMED}. */
    private static final long SUM = 128;
    /** The partner's state: {@link #RUNNING}, {@link #FINISHED} or {@link #FAILED}. */
    private static final long STATE = 256;
    /** Set by the benchmark thread to tell a partner that has no other way to hear it (a ring) to stop. */
    private static final long STOP = 384;
    static final long FILE_BYTES = 512;

    static final int RUNNING = 0;
    static final int FINISHED = 1;
    static final int FAILED = 2;

    /** How long the benchmark thread waits for the partner at the end of an invocation before it gives up. */
    private static final long PATIENCE_NANOS = 10_000_000_000L;

    private static final VarHandle LONG = JAVA_LONG.varHandle();
    private static final VarHandle INT = JAVA_INT.varHandle();

    final Path file;
    private final Arena arena;
    private final MemorySegment words;

    private IpcCounts(Path file) throws IOException {
        this.file = file;
        this.arena = Arena.ofShared();
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            words = channel.map(FileChannel.MapMode.READ_WRITE, 0, FILE_BYTES, arena);
        }
    }

    /** Creates a zeroed counters file in {@code dir} and maps it. */
    static IpcCounts create(Path dir) throws IOException {
        Path file = Files.createTempFile(dir, "jpipeline-ipc", ".counts");
        Files.write(file, new byte[(int) FILE_BYTES]);
        return new IpcCounts(file);
    }

    /** Maps the counters file that the benchmark created. */
    static IpcCounts open(Path file) throws IOException {
        return new IpcCounts(file);
    }

    // partner side

    /** Publishes {@code consumed} (and, before it, the running {@code sum}). */
    void publish(long consumed, long sum) {
        LONG.set(words, SUM, sum);
        LONG.setRelease(words, CONSUMED, consumed);
    }

    /** Publishes the final count and sum and then the partner's end state. */
    void finish(long consumed, long sum, boolean ok) {
        publish(consumed, sum);
        INT.setRelease(words, STATE, ok ? FINISHED : FAILED);
    }

    boolean stopRequested() {
        return (int) INT.getAcquire(words, STOP) != 0;
    }

    // benchmark side

    long consumed() {
        return (long) LONG.getAcquire(words, CONSUMED);
    }

    /** The sum published with the count that {@link #consumed} last returned. */
    long sum() {
        return (long) LONG.get(words, SUM);
    }

    int state() {
        return (int) INT.getAcquire(words, STATE);
    }

    void requestStop() {
        INT.setRelease(words, STOP, 1);
    }

    /** Spins until the partner has consumed {@code total}; fails if it stopped, died, or took over 10 s. */
    void awaitConsumed(long total, BooleanSupplier partnerAlive) {
        long start = 0;
        for (int spins = 0; consumed() < total; spins++) {
            if ((spins & 0xFFFF) == 0xFFFF) {
                if (state() != RUNNING || !partnerAlive.getAsBoolean()) {
                    throw new IllegalStateException("the partner stopped (state " + state() + ", alive "
                        + partnerAlive.getAsBoolean() + ") after consuming " + consumed() + " of " + total);
                }
                long now = System.nanoTime();
                if (start == 0) {
                    start = now;
                } else if (now - start > PATIENCE_NANOS) {
                    throw new IllegalStateException("the partner consumed " + consumed() + " of " + total
                        + " within 10 s");
                }
            }
            Thread.onSpinWait();
        }
    }

    /** Where a benchmark puts its shared files: {@code /dev/shm} where there is one (memory, as IPC users do). */
    static Path directory() {
        Path shm = Path.of("/dev/shm");
        return Files.isDirectory(shm) && Files.isWritable(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir"));
    }

    @Override
    public void close() throws IOException {
        arena.close();
    }

    /** Unmaps and deletes the file. */
    void delete() throws IOException {
        close();
        Files.deleteIfExists(file);
    }
}
