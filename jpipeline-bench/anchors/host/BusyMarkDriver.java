// The busy mark beside busy loops (docs/performance.md section 26): a 1P/1C partitioned pipeline streams 256 MiB
// eight times, and a monitor thread reads Oversubscription.busy() every 5 ms. Not part of the build. On the host:
//   javac -cp jpipeline-core/target/jpipeline-core-0.1.0-SNAPSHOT.jar -d .bench/drv jpipeline-bench/anchors/host/BusyMarkDriver.java
//   (two busy loops pinned to CPUs 0,1) taskset -c 0,1 .device-jre/bin/java --enable-native-access=ALL-UNNAMED \
//     -cp .bench/drv/core.jar:.bench/drv BusyMarkDriver ADAPTIVE|BLOCKING
import dev.jpipeline.*;
import dev.jpipeline.internal.wait.Oversubscription;
import java.lang.foreign.*;
import java.util.concurrent.atomic.*;

public class BusyMarkDriver {
    static final int CHUNK = 1 << 20, CHUNKS = 256;
    public static void main(String[] a) throws Exception {
        WaitStrategy ws = a.length > 0 && a[0].equals("BLOCKING") ? WaitStrategy.BLOCKING : WaitStrategy.ADAPTIVE;
        MemorySegment src = Arena.global().allocate((long) CHUNK * CHUNKS, 64);
        for (long i = 0; i < src.byteSize(); i += 8) src.set(ValueLayout.JAVA_LONG, i, i);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong looks = new AtomicLong(), busy = new AtomicLong();
        Thread mon = Thread.ofPlatform().daemon().start(() -> {
            while (!stop.get()) { looks.incrementAndGet(); if (Oversubscription.busy()) busy.incrementAndGet();
                try { Thread.sleep(5); } catch (InterruptedException e) { return; } }
        });
        for (int pass = 0; pass < 8; pass++) {
            long t0 = System.nanoTime();
            long sum = run(src, ws);
            System.out.printf("%s pass %d: %.1f ms, busy seen %d of %d looks, sum %d%n", ws, pass,
                (System.nanoTime() - t0) / 1e6, busy.getAndSet(0), looks.getAndSet(0), sum);
        }
        stop.set(true);
    }
    static long run(MemorySegment src, WaitStrategy ws) throws Exception {
        int depth = 4;
        MemorySegment[] b = new MemorySegment[depth];
        for (int i = 0; i < depth; i++) b[i] = Arena.global().allocate(CHUNK, 64);
        PipelineSharedState st = PipelineSharedState.builder(ThreadScope.BLOCK, depth).waitStrategy(ws).build();
        ThreadTeam team = ThreadTeam.ofPlatform(2);
        Thread p = Thread.ofPlatform().start(() -> {
            try (Pipeline pipe = Pipeline.make(team.member(0), st, 1)) {
                for (int c = 0; c < CHUNKS; c++) {
                    pipe.producerAcquire();
                    MemcpyAsync.memcpyAsync(b[c % depth], src.asSlice((long) c * CHUNK, CHUNK), CHUNK, pipe);
                    pipe.producerCommit();
                }
            }
        });
        long sum = 0;
        try (Pipeline pipe = Pipeline.make(team.member(1), st, 1)) {
            for (int c = 0; c < CHUNKS; c++) {
                pipe.consumerWait();
                MemorySegment s = b[c % depth];
                for (long i = 0; i < CHUNK; i += 8) sum += s.get(ValueLayout.JAVA_LONG, i);
                pipe.consumerRelease();
            }
        }
        p.join();
        return sum;
    }
}
