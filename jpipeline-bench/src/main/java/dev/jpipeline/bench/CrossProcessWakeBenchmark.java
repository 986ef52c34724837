package dev.jpipeline.bench;

import dev.jpipeline.internal.process.Futex;
import dev.jpipeline.internal.process.ProcessWaiting;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Wake-up latency of system-scope waits: a ping-pong on two wait words of a mapped file between the benchmark
 * thread and a partner, a thread of the same JVM or a second JVM ({@code partner}). One operation is a round
 * trip: the benchmark thread publishes round n on PING and waits for n on PONG, which the partner publishes once
 * it saw n on PING; a one-way wake-up takes about half. {@code wait} picks how both sides wait
 * ({@link PingPongWait}): spinning, futex at once, or {@link ProcessWaiting} (spin, yield, futex).
 *
 * <p>{@code wakeWithoutWaiters} and {@code futexWaitOnChangedWord} time the single system calls: a FUTEX_WAKE
 * that finds nobody against {@code ProcessWaiting.wakeAll} with nobody counted (no call), and a FUTEX_WAIT that
 * returns EAGAIN at once (the price of one downcall into the kernel).
 *
 * <p>Futex is a restricted (native) method: forks run with {@code --enable-native-access=ALL-UNNAMED}, as the
 * jar runs on the class path, and so does the partner process.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 3, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow"})
public class CrossProcessWakeBenchmark {

    /** Where the partner runs. */
    public enum Partner { THREAD, PROCESS }

    /** The mapped file of two wait words, on a file of its own. */
    @State(Scope.Thread)
    public static class Words {
        Path file;
        Arena arena;
        MemorySegment words;

        @Setup(Level.Trial)
        public void map() throws IOException {
            file = Files.createTempFile("jpipeline-pingpong", ".words");
            Files.write(file, new byte[(int) PingPongWait.FILE_BYTES]);
            arena = Arena.ofShared();
            try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                words = channel.map(FileChannel.MapMode.READ_WRITE, 0, PingPongWait.FILE_BYTES, arena);
            }
        }

        @TearDown(Level.Trial)
        public void unmap() throws IOException {
            arena.close();
            Files.deleteIfExists(file);
        }
    }

    /** The ping-pong's words (a file of their own), its partner, started per trial, and the current round. */
    @State(Scope.Thread)
    public static class Pair {
        @Param
        PingPongWait wait;
        @Param
        Partner partner;

        Words words;
        Thread thread;
        Process process;
        BooleanSupplier partnerAlive;
        int round;

        @Setup(Level.Trial)
        public void start() throws IOException {
            if (!Futex.available() && wait != PingPongWait.SPIN) {
                throw new IllegalStateException("futex is unavailable: " + Futex.unavailableReason());
            }
            words = new Words();
            words.map();
            if (partner == Partner.THREAD) {
                Thread me = Thread.currentThread();
                thread = Thread.ofPlatform().daemon().name("pingpong-partner")
                    .start(() -> wait.serve(words.words, me::isAlive));
                partnerAlive = thread::isAlive;
            } else {
                process = PartnerJvm.start(PingPongPartner.class, words.file.toString(), wait.name());
                partnerAlive = process::isAlive;
            }
        }

        @TearDown(Level.Trial)
        public void stop() throws Exception {
            try {
                wait.publish(words.words, PingPongWait.PING, PingPongWait.STOP);
                if (thread != null) {
                    HandoffLane.join(thread);
                } else if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the partner process did not stop within 10 s");
                }
            } finally {
                if (process != null) {
                    process.destroyForcibly();
                }
                words.unmap();
            }
        }
    }

    @Benchmark
    public int roundTrip(Pair p) {
        int round = ++p.round;
        p.wait.publish(p.words.words, PingPongWait.PING, round);
        p.wait.await(p.words.words, PingPongWait.PONG, round, p.partnerAlive);
        return round;
    }

    @Benchmark
    public int wakeWithoutWaitersFutex(Words w) {
        return Futex.wake(w.words, PingPongWait.PING, Integer.MAX_VALUE);
    }

    @Benchmark
    public void wakeWithoutWaitersProcessWaiting(Words w) {
        ProcessWaiting.wakeAll(w.words, PingPongWait.PING);
    }

    @Benchmark
    public Futex.WaitOutcome futexWaitOnChangedWord(Words w) {
        return Futex.wait(w.words, PingPongWait.PING, 1, Futex.NO_TIMEOUT);     // the word holds 0
    }
}
