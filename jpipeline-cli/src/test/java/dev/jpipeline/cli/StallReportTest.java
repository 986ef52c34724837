package dev.jpipeline.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.trace.StageOperation;
import dev.jpipeline.trace.TraceEvent;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The reading follows from the figures: constructed stall profiles, in shares of a one-second run. */
class StallReportTest {

    private static final long SECOND = 1_000_000_000L;
    private static final long MS = 1_000_000L;
    private static final StallReport.Remedies REMEDIES = new StallReport.Remedies("COPY-REMEDY", "COMPUTE-REMEDY");

    /** A run of 1000 stages over one second with these shares of it. */
    private static StallReport profile(double producerWait, double consumerWait, double copying, double computing) {
        return new StallReport((long) (producerWait * SECOND), (long) (consumerWait * SECOND),
            (long) (copying * SECOND), (long) (computing * SECOND), SECOND, 1000);
    }

    private static String kind(StallReport report) {
        String reading = report.reading(REMEDIES);
        return reading.substring(0, reading.indexOf(':'));
    }

    @Test
    void eachBottleneckGetsItsOwnAdvice() {
        String copy = profile(0.6, 0.7, 0.95, 0.2).reading(REMEDIES);
        assertTrue(copy.startsWith("copy-bound: producers waited 60% of the run for free stages, the busiest "
            + "consumer 70% for data; copies in flight 95%, the busiest consumer computing 20%; COPY-REMEDY would "
            + "help"), copy);
        String compute = profile(0.6, 0.05, 0.2, 0.9).reading(REMEDIES);
        assertTrue(compute.startsWith("compute-bound: ") && compute.contains("; COMPUTE-REMEDY would help"), compute);
        String handOff = profile(0.9, 0.9, 0.02, 0.03).reading(REMEDIES);
        assertTrue(handOff.startsWith("hand-off-bound: ") && handOff.contains("a larger --chunk would help"), handOff);
        assertTrue(profile(0.05, 0.05, 0.9, 0.9).reading(REMEDIES).startsWith("balanced: "));
        assertEquals("no clear bottleneck", kind(profile(0.25, 0.25, 0.5, 0.5)));
    }

    @Test
    void figuresAFewPercentApartNeverGetTwoDifferentBottlenecks() {
        // every pair of profiles within 5 points of each other: at most one named reading besides "no clear ..."
        double[] steps = {0, 0.05, 0.1, 0.12, 0.15, 0.18, 0.2, 0.3, 0.33, 0.35, 0.38, 0.4, 0.5, 0.6, 0.8, 1};
        for (double p : steps) {
            for (double c : steps) {
                for (double copy : steps) {
                    for (double compute : steps) {
                        Set<String> kinds = new HashSet<>();
                        for (double d : new double[] {-0.05, 0, 0.05}) {
                            for (int which = 0; which < 4; which++) {
                                kinds.add(kind(profile(p + (which == 0 ? d : 0), c + (which == 1 ? d : 0),
                                    copy + (which == 2 ? d : 0), compute + (which == 3 ? d : 0))));
                            }
                        }
                        kinds.remove("no clear bottleneck");
                        assertTrue(kinds.size() <= 1, p + " " + c + " " + copy + " " + compute + ": " + kinds);
                    }
                }
            }
        }
    }

    @Test
    void anEmptyOrShortRunGetsNoVerdict() {
        assertEquals("nothing streamed: no reading.", new StallReport(0, 0, 0, 0, SECOND, 0).reading(REMEDIES));
        String few = new StallReport(0, 0, 0, 0, SECOND, 3).reading(REMEDIES);
        assertEquals("too short to judge: the figures cover 3 stages in 1000.0 ms, and a reading needs at least 16 "
            + "stages and 20 ms.", few);
        String quick = new StallReport(0, 0, 0, 0, 5_000_000, 1000).reading(REMEDIES);
        assertTrue(quick.startsWith("too short to judge: the figures cover 1000 stages in 5.0 ms"), quick);
    }

    @Test
    void remediesNameOnlyWhatCanHelp() {
        StreamSource memory = new StreamSource.Memory("m", MemorySegment.NULL);
        StallReport.Remedies sha = StallReport.Remedies.of(memory, CopyPolicyOption.AUTO, StreamOp.SHA256, 2);
        assertEquals("a cheaper --op (sha256 runs on one consumer, so more --consumers would not)", sha.compute());
        assertEquals("more --consumers (or a cheaper --op)",
            StallReport.Remedies.of(memory, CopyPolicyOption.AUTO, StreamOp.CRC32C, 2).compute());
        assertEquals("more --producers (each copies its share)",
            StallReport.Remedies.of(memory, CopyPolicyOption.PRODUCER, StreamOp.SUM, 2).copy());
        assertEquals("more --copy-workers (now 3)",
            StallReport.Remedies.of(memory, CopyPolicyOption.ENGINE, StreamOp.SUM, 3).copy());
        StreamSource file = new StreamSource.File("f", null, 1);
        assertEquals("more --copy-workers (the reads run on the copy engine's 1) or a faster source",
            StallReport.Remedies.of(file, CopyPolicyOption.AUTO, StreamOp.SUM, 1).copy(), "AUTO reads on the engine");
        assertEquals("more --producers (each reads its share) or a faster source",
            StallReport.Remedies.of(file, CopyPolicyOption.PRODUCER, StreamOp.SUM, 1).copy(),
            "with --copy-policy producer the producers read");
        assertFalse(StallReport.Remedies.of(new StreamSource.Sequential("-", null), CopyPolicyOption.AUTO,
            StreamOp.SUM, 1).copy().contains("workers"), "one producer reads a stream itself");
    }

    @Test
    void theBusiestConsumersWaitIsTheConsumersWait() {
        // an operation one consumer computes: consumer "b" only waits; the figures are consumer "a"'s
        List<TraceEvent> events = new ArrayList<>();
        for (int batch = 0; batch < 20; batch++) {
            long t = batch * 100L;
            events.add(event("a", StageOperation.WAIT, t, 10));
            events.add(event("a", StageOperation.RELEASE, t + 100, 0));
            events.add(event("b", StageOperation.WAIT, t, 100));
            events.add(event("b", StageOperation.RELEASE, t + 100, 0));
        }
        StallReport report = StallReport.of(events, 1, 2000, 20);
        assertEquals(200, report.consumerWaitNanos());
        assertEquals(1800, report.computeNanos());
    }

    @Test
    void aProducerFillingStagesItselfIsCopying() {
        // a stream read by its producer: 80 of every 100 ms between acquire and commit; the consumer waits
        List<TraceEvent> events = new ArrayList<>();
        for (int batch = 0; batch < 20; batch++) {
            long t = batch * 100 * MS;
            events.add(event("p", StageOperation.ACQUIRE, t, 10 * MS));
            events.add(event("p", StageOperation.COMMIT, t + 90 * MS, 0));
            events.add(event("c", StageOperation.WAIT, t, 95 * MS));
            events.add(event("c", StageOperation.RELEASE, t + 100 * MS, 0));
        }
        StallReport report = StallReport.of(events, 1, 2000 * MS, 20);
        assertEquals(1600 * MS, report.copyNanos());
        assertEquals("copy-bound", kind(report));
    }

    private static TraceEvent event(String thread, StageOperation op, long start, long duration) {
        return new TraceEvent(thread, 0, "consumer", op, start, duration, 0, 0);
    }

    @Test
    void noAdviceSuggestsMoreThreadsWhereNoCoreIsFree() {
        StreamSource memory = StreamJob.synthetic(64);
        StallReport.CoreRoom full = new StallReport.CoreRoom(3, 2, 0);
        StallReport.CoreRoom loaded = new StallReport.CoreRoom(2, 16, 14.5);
        for (StallReport.CoreRoom room : new StallReport.CoreRoom[] {full, loaded}) {
            for (CopyPolicyOption policy : CopyPolicyOption.values()) {
                StallReport.Remedies r = StallReport.Remedies.of(memory, policy, StreamOp.SUM, 4, room);
                String both = r.copy() + " | " + r.compute();
                assertFalse(both.contains("more --"), both);
                assertTrue(r.compute().startsWith("a cheaper --op (no core is free for more threads"), r.compute());
            }
        }
        assertEquals("fewer threads (no core is free for more threads: this run has 3 on 2 processors)",
            StallReport.Remedies.of(memory, CopyPolicyOption.AUTO, StreamOp.SUM, 1, full).copy());
        assertTrue(StallReport.Remedies.of(memory, CopyPolicyOption.AUTO, StreamOp.SUM, 1, loaded).copy()
            .endsWith("this run has 2 on 16 processors, beside a load of 14.5)"));
        // with a core to spare, the advice is as before, capped at the workers the free cores can run
        assertEquals("more --copy-workers (now 3, at most 13: 16 processors)", StallReport.Remedies.of(memory,
            CopyPolicyOption.ENGINE, StreamOp.SUM, 3, new StallReport.CoreRoom(5, 16, 1.0)).copy());
        assertTrue(new StallReport.CoreRoom(3, 4, 0).spare());
        assertFalse(new StallReport.CoreRoom(3, 4, 0.5).spare());
    }

    @Test
    void copyWorkerAdviceStaysWithinTheProcessors() {
        StreamSource file = new StreamSource.File("f", null, 1 << 20);
        // 2 processors: a producer, a consumer and any copy workers leave no core, so no more copy workers
        for (int workers : new int[] {1, 2, 4, 8}) {
            StallReport.CoreRoom room = new StallReport.CoreRoom(2 + workers, 2, 0);
            String copy = StallReport.Remedies.of(file, CopyPolicyOption.AUTO, StreamOp.CRC32C, workers, room).copy();
            assertFalse(copy.contains("more --copy-workers"), copy);
            assertTrue(copy.contains("on 2 processors"), copy);
        }
        // 4 processors, 3 threads: one core free, so at most one more worker, and the advice says so
        StallReport.CoreRoom room = new StallReport.CoreRoom(3, 4, 0);
        assertEquals("more --copy-workers (the reads run on the copy engine's 1, at most 2: 4 processors) or a "
            + "faster source", StallReport.Remedies.of(file, CopyPolicyOption.AUTO, StreamOp.CRC32C, 1, room).copy());
        assertEquals(2, room.copyWorkersCap(1));
        assertEquals(1, new StallReport.CoreRoom(8, 4, 0).copyWorkersCap(1));
    }
}
