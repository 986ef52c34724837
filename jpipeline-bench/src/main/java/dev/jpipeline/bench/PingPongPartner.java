package dev.jpipeline.bench;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The partner process of {@link CrossProcessWakeBenchmark} with {@code partner=PROCESS}: maps the file named by
 * its first argument and serves the ping-pong with the {@link PingPongWait} its second names, until told to stop
 * or its parent dies.
 */
public final class PingPongPartner {

    private PingPongPartner() {
    }

    public static void main(String[] args) throws IOException {
        PingPongWait wait = PingPongWait.valueOf(args[1]);
        ProcessHandle parent = ProcessHandle.current().parent().orElseThrow();
        try (FileChannel channel = FileChannel.open(Path.of(args[0]), StandardOpenOption.READ,
                StandardOpenOption.WRITE);
             Arena arena = Arena.ofShared()) {
            MemorySegment words = channel.map(FileChannel.MapMode.READ_WRITE, 0, PingPongWait.FILE_BYTES, arena);
            wait.serve(words, parent::isAlive);
        }
    }
}
