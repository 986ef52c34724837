package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.internal.RegionProbe;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Corrupted words of a pipeline shared state in a region (its slots and stage words overwritten by a bug or another
 * process): every live member that reads one fails naming its offset and value, instead of taking it for a state
 * the protocol writes, overwriting it, spinning on it or waiting forever; quit still drops every stage. Ranks run on
 * threads here ({@link #pair}); every wait is bounded.
 *
 * <p>"Finding N" names a finding of the hostile review of system-scope pipelines in a shared region
 * (RegionHostileTest, refiled by component in issue 28); "issue 26, finding N" one of issue 26's.
 */
class RegionCorruptionTest {

    @TempDir
    Path dir;

    /**
     * Findings 8-11, a slot: a corrupted slot state was taken for a place nobody holds, so a consumer waited forever
     * for a producer whose slot said nothing it knew. Every reader now fails naming the offset and the value.
     */
    @Test
    void aCorruptedSlotStateFailsEveryLiveMemberNamingItsOffsetAndValue() {
        assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
            try (SharedRegion region = SharedRegion.create(dir.resolve("r"), RegionPipelineChild.dataBytes(2, 2, 4096),
                SharedRegion.Sharing.OWNER)) {
                CountDownLatch holding = new CountDownLatch(1);
                CountDownLatch corrupted = new CountDownLatch(1);
                long at = RegionProbe.slotStateAt(0);
                String expected = "rank 0's slot state at offset " + at + " of the state's area is 77";
                Bounded.Run corrupter = Bounded.start("corrupter", () -> {
                    holding.await();
                    region.data().set(ValueLayout.JAVA_INT, at, 77);
                    corrupted.countDown();
                    return "corrupted";
                });
                List<String> out = pair(region, 2, pipe -> {
                    pipe.producerAcquire();
                    holding.countDown();
                    corrupted.await();
                    return Outcomes.of(pipe::quit);
                }, pipe -> Outcomes.of(pipe::consumerWait));
                assertEquals("corrupted", corrupter.result(Duration.ofSeconds(5)));
                for (String o : out) {
                    assertTrue(o.startsWith("IllegalStateException") && o.contains(expected), o);
                }
            }
        });
    }

    /**
     * Findings 8-11, quit: a drop that failed on a corrupted word stopped quit, so the stages after it were never
     * dropped and the producer waited forever for a consumer that had quit. Quit drops every stage, then throws.
     */
    @Test
    void aFailedDropDoesNotStopQuit() {
        assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
            try (SharedRegion region = SharedRegion.create(dir.resolve("r"), RegionPipelineChild.dataBytes(2, 3, 4096),
                SharedRegion.Sharing.OWNER)) {
                MemorySegment area = region.data();
                CountDownLatch quit = new CountDownLatch(1);
                List<String> out = pair(region, 3, pipe -> {
                    quit.await();
                    StringBuilder log = new StringBuilder();
                    for (int b = 0; b < 5; b++) {       // batch 3 passes stage 0's corrupted word; 4 waits stage 1
                        pipe.producerAcquire();
                        pipe.producerCommit();
                        log.append(b).append(' ');
                    }
                    return log.toString();
                }, pipe -> {
                    area.set(ValueLayout.JAVA_LONG, RegionProbe.consumedWordAt(area, 0, 0), RegionProbe.word(5, 1, 0));
                    String quitting = Outcomes.of(pipe::quit);
                    quit.countDown();
                    return quitting;
                });
                assertTrue(out.get(0).startsWith("IllegalStateException") && out.get(0).contains("no consumer is left"),
                    out.get(0));
                assertTrue(out.get(1).startsWith("IllegalStateException") && out.get(1).contains("cannot drop"),
                    out.get(1));
            }
        });
    }

    /**
     * Findings 8-11, stage words: a solo commit stored over a corrupted word (silently, without assertions), and a
     * copy tied to a word that looked mid-completion spun forever. Both now fail naming the word and its value.
     */
    @Test
    void aCorruptedStageWordFailsItsWriterInsteadOfBeingOverwrittenOrSpunOn() {
        assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
            try (SharedRegion region = SharedRegion.create(dir.resolve("r"), RegionPipelineChild.dataBytes(2, 2, 4096),
                SharedRegion.Sharing.OWNER)) {
                MemorySegment area = region.data();
                MemorySegment stage = area.asSlice(PipelineSharedState.regionBytes(2, 2), 4096);
                GatedFileChannel channel = new GatedFileChannel(new byte[4096]);
                List<String> out = pair(region, 2, pipe -> {
                    pipe.producerAcquire();
                    long word0 = RegionProbe.producedWordAt(area, 0, 0);
                    area.set(ValueLayout.JAVA_LONG, word0, RegionProbe.word(7, 1, 0));
                    String commit = Outcomes.of(pipe::producerCommit);
                    pipe.producerAcquire();             // batch 0 again: the commit failed before moving on
                    area.set(ValueLayout.JAVA_LONG, word0, RegionProbe.word(0, 2, 2));
                    String copy = Outcomes.of(() -> MemcpyAsync.memcpyAsync(stage, channel, 0, 4096, pipe));
                    Outcomes.of(pipe::quit);
                    return commit + " | " + copy + " | " + word0;
                }, pipe -> "made");
                String[] producer = out.get(0).split(" \\| ");
                assertEquals(3, producer.length, out.get(0));
                assertTrue(producer[0].startsWith("IllegalStateException: a solo arrival at phase 0 found the stage "
                    + "barrier's shared word corrupted: 0x") && producer[0].contains("(phase 7, expected 1, arrived 0)")
                    && producer[0].contains("at offset " + producer[2]), producer[0]);
                assertTrue(producer[1].startsWith("IllegalStateException: tying a copy found the stage barrier's "
                    + "shared word corrupted") && producer[1].contains("(phase 0, expected 2, arrived 2)")
                    && producer[1].contains("at offset " + producer[2]), producer[1]);
            }
        });
    }

    /**
     * Findings 8-11, waiters: a stage word overwritten with counts the protocol never writes left its waiter
     * waiting forever for a phase that could never complete; the waiter's periodic check now fails naming it.
     */
    @Test
    void aWaiterOnACorruptedStageWordFailsNamingIt() {
        assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
            try (SharedRegion region = SharedRegion.create(dir.resolve("r"), RegionPipelineChild.dataBytes(2, 2, 4096),
                SharedRegion.Sharing.OWNER)) {
                MemorySegment area = region.data();
                CountDownLatch holding = new CountDownLatch(1);
                CountDownLatch done = new CountDownLatch(1);
                List<String> out = pair(region, 2, pipe -> {
                    pipe.producerAcquire();
                    long word = RegionProbe.producedWordAt(area, 0, 0);
                    area.set(ValueLayout.JAVA_LONG, word, RegionProbe.word(0, 5000, 3));
                    holding.countDown();
                    done.await();
                    return "held";
                }, pipe -> {
                    holding.await();
                    String waited = Outcomes.of(pipe::consumerWait);
                    done.countDown();
                    return waited;
                });
                assertEquals("held", out.get(0), out.toString());
                long at = RegionProbe.producedWordAt(area, 0, 0);
                assertTrue(out.get(1).startsWith("IllegalStateException") && out.get(1).contains("stage word of "
                    + "producer 0 at stage 0 at offset " + at + " of the state's area is corrupted: 0x")
                    && out.get(1).contains("(expected 5000, arrived 3; at most "), out.get(1));
            }
        });
    }

    /**
     * Findings 8-11, fuzzed: 8 random bytes over a long of a rank's slot or of a stage word's cell while a producer
     * and a consumer run. Whatever the bytes, both end within a bound: they finish, or throw; none waits forever or
     * spins.
     */
    @Test
    void randomBytesOverTheStateNeverHangALiveMember() {
        assertTimeoutPreemptively(Duration.ofSeconds(110), () -> {
            List<String> hung = new ArrayList<>();
            for (int seed = 0; seed < 96; seed++) {
                try (SharedRegion region = SharedRegion.create(dir.resolve("r" + seed),
                    RegionPipelineChild.dataBytes(2, 2, 64), SharedRegion.Sharing.OWNER)) {
                    MemorySegment area = region.data();
                    int target = seed % 48;     // a long of rank 0's or 1's slot, or of a stage word's cell
                    long bytes = new SplittableRandom(seed).nextLong();
                    AtomicLong where = new AtomicLong();
                    int when = seed % 50;
                    CountDownLatch reached = new CountDownLatch(1);
                    CountDownLatch written = new CountDownLatch(1);
                    Bounded.Run corrupter = Bounded.start("corrupter", () -> {
                        reached.await();
                        long at = target < 32 ? RegionProbe.slotStateAt(target / 16) - 48 + target % 16 * 8
                            : (target < 40 ? RegionProbe.producedWordAt(area, 0, target / 4 % 2)
                            : RegionProbe.consumedWordAt(area, 0, target / 4 % 2)) + target % 2 * 8;
                        where.set(at);
                        area.set(ValueLayout.JAVA_LONG, at, bytes);
                        written.countDown();
                        return "corrupted";
                    });
                    List<String> out = pair(region, 2, pipe -> {
                        for (int b = 0; b < 100; b++) {
                            if (b == when) {            // the bytes land between two of its operations
                                reached.countDown();
                                written.await();
                            }
                            pipe.producerAcquire();
                            pipe.producerCommit();
                        }
                        return "produced";
                    }, pipe -> {
                        for (int b = 0; b < 100; b++) {
                            pipe.consumerWait();
                            pipe.consumerRelease();
                        }
                        return "consumed";
                    });
                    corrupter.result(Duration.ofSeconds(5));
                    for (String o : out) {
                        if (o.startsWith("still waiting")) {
                            hung.add("seed " + seed + " (0x" + Long.toHexString(bytes) + " at " + where + "): " + out);
                        }
                    }
                    if (!hung.isEmpty()) {
                        break;          // the hung threads keep the region mapped: stop here
                    }
                }
            }
            assertEquals(List.of(), hung);
        });
    }

    /** Runs a 1-producer, 1-consumer pipeline's two ranks in {@code region} on threads: each body's outcome. */
    private static List<String> pair(SharedRegion region, int stages, Outcomes.PipeBody producer,
                                     Outcomes.PipeBody consumer) {
        Group p = region.join(2, 0);
        Group c = region.join(2, 1);
        PipelineSharedState state = RegionRuns.state(region, stages);
        Bounded.Run producing = Bounded.start("producer", () -> quitAfter(producer,
            Pipeline.make(p, state, PipelineRole.PRODUCER)));
        Bounded.Run consuming = Bounded.start("consumer", () -> quitAfter(consumer,
            Pipeline.make(c, state, PipelineRole.CONSUMER)));
        long deadline = System.nanoTime() + 10_000_000_000L;
        return List.of(producing.resultBy(deadline), consuming.resultBy(deadline));
    }

    /** Runs {@code body}, then quits the pipeline (whatever it throws) before the region closes. */
    private static String quitAfter(Outcomes.PipeBody body, Pipeline pipe) throws Exception {
        try {
            return body.run(pipe);
        } finally {
            Outcomes.of(pipe::quit);
        }
    }
}
