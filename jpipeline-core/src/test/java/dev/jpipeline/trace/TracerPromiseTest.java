package dev.jpipeline.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineRole;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.ThreadScope;
import dev.jpipeline.ThreadTeam;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.LongConsumer;
import org.junit.jupiter.api.Test;

/**
 * Promise 17 of issue 8: the tracer's memory is bounded (a ring of {@code eventsPerLane} events per lane,
 * {@link Tracer#create(int)}), {@code drain} hands over the events recorded since the last drain while pipelines
 * run, {@code dropped()} counts the events overwritten before they were read, and nothing public lets a user
 * record (forge) events. Needs the tracer API of the change: does not compile against the code before it.
 */
class TracerPromiseTest {

    private static final Duration LIMIT = Duration.ofSeconds(30);
    /** The operations a producer (acquire, commit) and a consumer (wait, release) record once per batch each. */
    private static final List<StageOperation> PER_BATCH = List.of(StageOperation.ACQUIRE, StageOperation.COMMIT,
        StageOperation.WAIT, StageOperation.RELEASE);

    /**
     * One producer and one consumer hand {@code batches} batches through a 2-stage ring traced by
     * {@code tracer}; the consumer calls {@code afterBatch} after releasing each batch.
     */
    private static void run(Tracer tracer, int batches, LongConsumer afterBatch) {
        PipelineSharedState state = PipelineSharedState.builder(ThreadScope.BLOCK, 2).tracer(tracer).build();
        ThreadTeam.ofPlatform(2).run(LIMIT, g -> {
            Pipeline pipe = Pipeline.make(g, state, PipelineRole.values()[g.threadRank()]);
            for (long b = 0; b < batches; b++) {
                if (g.threadRank() == 0) {
                    pipe.producerAcquire();
                    pipe.producerCommit();
                } else {
                    pipe.consumerWait();
                    pipe.consumerRelease();
                    afterBatch.accept(b);
                }
            }
            pipe.quit();
        });
    }

    @Test
    void p17_tracerBounded() {
        int perLane = 64;
        int batches = 20_000;
        Tracer tracer = Tracer.create(perLane);
        run(tracer, batches, b -> { });
        List<TraceEvent> kept = new ArrayList<>();
        tracer.drain(kept::add);
        long dropped = tracer.dropped();
        Map<String, Integer> perThread = new TreeMap<>();
        long newest = -1;
        for (TraceEvent e : kept) {
            perThread.merge(e.thread() + (e.operation() == StageOperation.COPY ? " copies" : ""), 1, Integer::sum);
            newest = Math.max(newest, e.batch());
        }
        assertTrue(perThread.values().stream().allMatch(n -> n <= perLane),
            "a lane keeps at most its ring of " + perLane + " events; kept per lane: " + perThread);
        assertTrue(kept.size() + dropped >= (long) PER_BATCH.size() * batches,
            "every event recorded was either kept or counted as dropped: " + kept.size() + " kept + " + dropped
                + " dropped < " + PER_BATCH.size() * batches + " recorded");
        assertEquals(batches - 1, newest, "the ring keeps the newest events");
        List<TraceEvent> again = new ArrayList<>();
        tracer.drain(again::add);
        assertEquals(List.of(), again, "a second drain hands over only what was recorded since the first");
    }

    @Test
    void p17_drainHandsOverEventsWhilePipelinesRun() {
        int batches = 5_000;
        Tracer tracer = Tracer.create(4096);                      // ample for 500 batches between drains
        List<TraceEvent> drained = Collections.synchronizedList(new ArrayList<>());
        run(tracer, batches, b -> {
            if (b % 500 == 499) {
                tracer.drain(drained::add);                       // while the producer goes on recording
            }
        });
        tracer.drain(drained::add);
        assertEquals(0, tracer.dropped(), "nothing may be dropped when drains keep up");
        Map<StageOperation, long[]> seen = new EnumMap<>(StageOperation.class);
        for (StageOperation op : PER_BATCH) {
            seen.put(op, new long[batches]);
        }
        synchronized (drained) {
            for (TraceEvent e : drained) {
                long[] counts = seen.get(e.operation());
                if (counts != null) {
                    counts[(int) e.batch()]++;
                }
            }
        }
        for (StageOperation op : PER_BATCH) {
            long[] counts = seen.get(op);
            for (int b = 0; b < batches; b++) {
                assertEquals(1, counts[b], op + " of batch " + b + " must be drained exactly once");
            }
        }
    }

    @Test
    void p17_noPublicWayToForgeEvents() {
        Set<String> recorders = Set.of("record", "copyLanded", "buffer", "addShared");
        List<String> forging = new ArrayList<>();
        for (String name : new String[] {"dev.jpipeline.trace.Tracer", "dev.jpipeline.trace.TraceBuffer"}) {
            Class<?> type;
            try {
                type = Class.forName(name);
            } catch (ClassNotFoundException gone) {
                continue;
            }
            if (!Modifier.isPublic(type.getModifiers())) {
                continue;
            }
            for (Method m : type.getMethods()) {
                boolean takesAnOperation = Arrays.asList(m.getParameterTypes()).contains(StageOperation.class);
                if (m.getDeclaringClass() == type && (recorders.contains(m.getName()) || takesAnOperation)) {
                    forging.add(type.getSimpleName() + "." + m.getName());
                }
            }
        }
        Collections.sort(forging);
        assertEquals(List.of(), forging, "public methods that let a user record (forge) trace events");
    }
}
