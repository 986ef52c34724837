package dev.jpipeline.stress;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.jpipeline.internal.PhaseBarrier;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A slot of stage barrier cells in a mapped file, for a jcstress state that tests the barrier on shared memory
 * ({@link PhaseBarrier#formatShared}) within one JVM: a system-scope pipeline's barriers live in a file that
 * several processes map, and jcstress across processes is impractical, so the tests run the same words, wake
 * words and failure records in a file this JVM maps, with their threads in place of the processes.
 *
 * <pre>
 * The file: SLOTS (65536) slots of SLOT_BYTES (640), 40 MiB, mapped once per JVM (READ_WRITE: MAP_SHARED, as a
 * region is) in the global arena, from /dev/shm when it is there and writable (memory, as a region on Linux
 * usually is), else from java.io.tmpdir. Its pages are written once before the mapping, so that a full /dev/shm
 * (64 MiB in a default Docker container) fails here, with an IOException that moves on to the next folder,
 * instead of with a SIGBUS on a page touched later. The file is deleted as soon as it is mapped (the mapping
 * keeps its pages), or at exit where the system refuses to delete a mapped file.
 *
 * A slot: 128-byte aligned (the mapping starts on a page)
 *     0  CELLS cells of PhaseBarrier.SHARED_BYTES, side by side as a region's stage barriers are
 *    64  DATA_INTS ints of data (plain accesses): what a test publishes with an arrival
 *   128  the failure records of cell 0 (PhaseBarrier.SHARED_RECORD_BYTES), for a produced-side barrier
 *
 * Reuse: each state takes the next slot, round-robin, zeroes its data and formats the cells it uses, so a
 * reused slot starts fresh. That is safe once no thread of the slot's previous state can touch it any more
 * (formatting resets a cell's waiter count: no thread may still be waiting on it). jcstress keeps
 * strideSize * strideCount states (at most 256 * 40 = 10240 by default) in an array: both actors run over all
 * of them, then each actor's thread observes its half and replaces it with new states, while the other thread
 * may still be observing the old half. A state is used last when it is observed, and until then at most twice
 * the array's length of states is made after it: 20480, against a ring of 65536. Runs with
 * -strideSize * -strideCount above 32768 need a bigger ring.
 * </pre>
 */
final class MappedCells {

    /** Cells at the start of a slot. */
    static final int CELLS = 4;
    /** Ints of data in a slot. */
    static final int DATA_INTS = 16;
    private static final long DATA_AT = CELLS * PhaseBarrier.SHARED_BYTES;
    private static final long RECORDS_AT = DATA_AT + DATA_INTS * Integer.BYTES;
    private static final long SLOT_BYTES = RECORDS_AT + PhaseBarrier.SHARED_RECORD_BYTES;
    private static final int SLOTS = 1 << 16;
    private static final long FILE_BYTES = SLOTS * SLOT_BYTES;
    /** Where a cell's futex waiter count is (SharedWord's cell: state, signals, then ProcessWaiting's count). */
    private static final long WAITERS_IN_CELL = 12;

    private static final MemorySegment FILE = map();
    private static final AtomicInteger NEXT = new AtomicInteger();

    private final MemorySegment slot;

    /** The next slot of the file, its data zeroed: its cells are an earlier state's until formatted. */
    MappedCells() {
        slot = FILE.asSlice((NEXT.getAndIncrement() & (SLOTS - 1)) * SLOT_BYTES, SLOT_BYTES);
        slot.asSlice(DATA_AT, DATA_INTS * Integer.BYTES).fill((byte) 0);
    }

    /** Formats cell {@code cell} as a barrier expecting {@code expected} arrivals, without failure records. */
    PhaseBarrier barrier(int cell, int expected) {
        return PhaseBarrier.formatShared(slot, cellAt(cell), expected, -1);
    }

    /** Formats cell 0 as a barrier expecting {@code expected} arrivals, with the slot's failure records. */
    PhaseBarrier barrierWithRecords(int expected) {
        return PhaseBarrier.formatShared(slot, cellAt(0), expected, RECORDS_AT);
    }

    /** Data int {@code i}: a plain read. */
    int data(int i) {
        return slot.get(JAVA_INT, dataAt(i));
    }

    /** Sets data int {@code i}: a plain write. */
    void setData(int i, int value) {
        slot.set(JAVA_INT, dataAt(i), value);
    }

    /** Threads counted as waiting in futex on cell {@code cell}'s wake word (a volatile read). */
    int futexWaiters(int cell) {
        return (int) COUNT.getVolatile(slot, cellAt(cell) + WAITERS_IN_CELL);
    }

    /**
     * Which of {@code failures} the record of phase {@code round} of a barrier in shared memory holds, as the
     * text that {@code failureOf} returns there (the failure's {@code toString()}, then the recording pid): 1 for
     * the first, 2 for the second, ...; 0 when nothing is recorded, -1 for text that is none of theirs (torn).
     */
    static int recorded(PhaseBarrier barrier, int round, Throwable... failures) {
        Throwable record = barrier.failureOf(round);
        if (record == null) {
            return 0;
        }
        for (int i = 0; i < failures.length; i++) {
            if (record.getMessage().startsWith(failures[i] + " (recorded by pid ")) {
                return i + 1;
            }
        }
        return -1;
    }

    private static long cellAt(int cell) {
        return (long) PhaseBarrier.SHARED_BYTES * Objects.checkIndex(cell, CELLS);
    }

    private static long dataAt(int i) {
        return DATA_AT + (long) Integer.BYTES * Objects.checkIndex(i, DATA_INTS);
    }

    /** Maps the file from the first folder that can hold it: /dev/shm, then java.io.tmpdir. */
    private static MemorySegment map() {
        List<Path> folders = new ArrayList<>();
        Path shm = Path.of("/dev/shm");
        if (Files.isDirectory(shm) && Files.isWritable(shm)) {
            folders.add(shm);
        }
        folders.add(Path.of(System.getProperty("java.io.tmpdir")));
        IOException failure = new IOException("cannot map " + FILE_BYTES + " bytes of barrier cells in any of "
            + folders);
        for (Path folder : folders) {
            try {
                return map(folder);
            } catch (IOException e) {
                failure.addSuppressed(e);
            }
        }
        throw new UncheckedIOException(failure);
    }

    private static MemorySegment map(Path folder) throws IOException {
        Path file = Files.createTempFile(folder, "jpipeline-stress-", ".cells");
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer zeros = ByteBuffer.allocate(1 << 20);
            for (long at = 0; at < FILE_BYTES; ) {
                zeros.clear().limit((int) Math.min(zeros.capacity(), FILE_BYTES - at));
                at += channel.write(zeros, at);
            }
            return channel.map(FileChannel.MapMode.READ_WRITE, 0, FILE_BYTES, Arena.global());
        } finally {
            try {
                Files.delete(file);
            } catch (IOException e) {
                file.toFile().deleteOnExit();
            }
        }
    }

    private static final VarHandle COUNT = JAVA_INT.varHandle();
}
