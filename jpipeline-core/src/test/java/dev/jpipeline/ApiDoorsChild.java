package dev.jpipeline;

import dev.jpipeline.copy.CopyEngine;
import dev.jpipeline.trace.TraceEvent;
import dev.jpipeline.trace.Tracer;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * A fresh JVM for {@link ApiDoorsInitOrderTest}: threads released together each touch a different facade first
 * (CopyEngine, a checked CopyEngine, Tracer, PipelineSharedState's builder, Pipeline, MemcpyAsync), so that the
 * facades' static initializers, which install ApiAccess's doors, run in an order the scheduler picks, then use
 * it. Argument: a rotation of the threads' start order. Prints "OK", or every failure, and exits 1 on failure.
 */
public final class ApiDoorsChild {

    private ApiDoorsChild() {
    }

    public static void main(String[] args) throws Exception {
        int rotate = Integer.parseInt(args[0]);
        List<Runnable> kinds = List.of(
            ApiDoorsChild::checkedEngineThreadPipeline,
            ApiDoorsChild::builtEngineTracedTeam,
            ApiDoorsChild::tracerFirstThenTeam,
            ApiDoorsChild::plainThreadPipelineCopy,
            ApiDoorsChild::checkedStateTeam,
            () -> CopyEngine.shared());
        CountDownLatch go = new CountDownLatch(1);
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < 2 * kinds.size(); i++) {
            Runnable kind = kinds.get((i + rotate) % kinds.size());
            threads.add(Thread.ofPlatform().start(() -> {
                try {
                    go.await();
                    kind.run();
                } catch (Throwable t) {
                    failures.add(t);
                }
            }));
        }
        go.countDown();
        for (Thread t : threads) {
            t.join(TimeUnit.SECONDS.toMillis(20));
            if (t.isAlive()) {
                failures.add(new AssertionError("a thread is stuck: " + java.util.Arrays.toString(t.getStackTrace())));
            }
        }
        if (failures.isEmpty()) {
            System.out.println("OK");
            System.exit(0);
        }
        for (Throwable t : failures) {
            t.printStackTrace(System.out);
        }
        System.exit(1);
    }

    private static void checkedEngineThreadPipeline() {
        CopyEngine engine = CopyEngine.checked(42);
        Pipeline p = Pipeline.make(engine);
        copyRound(p);
        p.quit();
    }

    private static void plainThreadPipelineCopy() {
        Pipeline p = Pipeline.make();
        copyRound(p);
        p.quit();
    }

    private static void copyRound(Pipeline p) {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment src = arena.allocate(256);
            MemorySegment dst = arena.allocate(256);
            src.fill((byte) 7);
            p.producerAcquire();
            MemcpyAsync.memcpyAsync(dst, src, 256, p);
            p.producerCommit();
            p.consumerWait();
            if (dst.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 255) != 7) {
                throw new AssertionError("the copy did not land");
            }
            p.consumerRelease();
        }
    }

    private static void builtEngineTracedTeam() {
        try (CopyEngine engine = CopyEngine.builder().workers(1).build()) {
            Tracer tracer = Tracer.create();
            teamRound(PipelineSharedState.builder(ThreadScope.BLOCK, 2).copyEngine(engine).tracer(tracer).build(),
                tracer);
        }
    }

    private static void tracerFirstThenTeam() {
        Tracer tracer = Tracer.create();
        teamRound(PipelineSharedState.builder(ThreadScope.DEVICE, 2).tracer(tracer).build(), tracer);
    }

    private static void checkedStateTeam() {
        teamRound(PipelineSharedState.builder(ThreadScope.BLOCK, 2).checked(7).build(), null);
    }

    private static void teamRound(PipelineSharedState state, Tracer tracer) {
        ThreadTeam.ofPlatform(3).run(Duration.ofSeconds(15), g -> {
            Pipeline p = Pipeline.make(g, state);
            p.producerAcquire();
            p.producerCommit();
            p.consumerWait();
            p.consumerRelease();
            p.quit();
        });
        if (tracer != null) {
            Set<Integer> ranks = tracer.events().stream().map(TraceEvent::rank).collect(Collectors.toSet());
            if (!ranks.equals(Set.of(0, 1, 2))) {
                throw new AssertionError("a traced team of 3 recorded events for ranks " + ranks);
            }
        }
    }
}
