package dev.jpipeline.internal.process;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.jpipeline.internal.wait.WaitStatus;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;

/**
 * The second process of {@code ProcessWaitingTest.wakesAWaiterInAnotherProcess}: maps the file named by its
 * argument, waits (in futex) until the word at {@link #GO} holds 1, then stores 2 into the word at {@link #DONE}
 * and wakes it. Exits 0 on success, 2 when its own wait ends otherwise.
 */
public final class ProcessWaitingChild {

    /** Bytes of the shared file. */
    static final int FILE_BYTES = 64;
    /** The wait word the parent changes. */
    static final long GO = 0;
    /** The wait word the child changes. */
    static final long DONE = 8;

    private static final VarHandle VALUE = JAVA_INT.varHandle();

    private ProcessWaitingChild() {
    }

    public static void main(String[] args) throws IOException {
        try (FileChannel channel = FileChannel.open(Path.of(args[0]), StandardOpenOption.READ,
                StandardOpenOption.WRITE);
             Arena arena = Arena.ofShared()) {
            MemorySegment file = channel.map(FileChannel.MapMode.READ_WRITE, 0, FILE_BYTES, arena);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            WaitStatus status = ProcessWaiting.await(file, GO, v -> v == 1, deadline, false, 0, null);
            if (status != WaitStatus.COMPLETE) {
                System.err.println("child: the wait for GO ended " + status);
                System.exit(2);
            }
            VALUE.setRelease(file, DONE, 2);
            ProcessWaiting.wakeAll(file, DONE);
        }
    }
}
