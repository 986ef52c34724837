package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A rank of a system-scope pipeline killed (SIGKILL) at random points, round after round for a fixed budget
 * (issue 26): every survivor must end, told of the death by the victim's pid, or done; never a hang, never an
 * internal message. A round runs a group of 3 (rank 0 produces, ranks 1 and 2 consume): the victim in a child JVM
 * (RegionPipelineChild), the two survivors on threads here, each in its own mapping of the region. The states a
 * kill lands in, one chosen per round:
 * <ul>
 *   <li>{@code MAKE}: the victim (either role) is killed 0-30 ms after it joined: during the make or just after;</li>
 *   <li>{@code COPY}: the producer, copy-bound (its copies read from a channel that takes a millisecond a read),
 *       is killed 0-20 ms after the consumers took their first batch: mostly while a committed batch waits for its
 *       copy, or while its next acquire waits for a stage whose copy is pending;</li>
 *   <li>{@code HOLD}: the producer is killed holding an acquired stage, half written;</li>
 *   <li>{@code WAIT}: a consumer is killed 0-20 ms after its first batch: checking a batch or waiting for one;</li>
 *   <li>{@code EARLY}: the victim joins and is killed before its peers join.</li>
 * </ul>
 * The seed is printed; rerun one with {@code -Djpipeline.test.seed=<seed>}; the budget is
 * {@code -Djpipeline.test.killSeconds} (default 60).
 */
@Timeout(300)
class RegionKillTest {

    /** Where a kill lands. */
    enum State { MAKE, COPY, HOLD, WAIT, EARLY }

    private static final int SIZE = 3;
    private static final int STAGES = 3;
    /** Batches per rank: long enough that a kill lands mid-run, short enough that survivors of a dead consumer
     *  finish (a consumer's death leaves the pipeline to the other consumer). */
    private static final long BATCHES = 5000;
    /** How long a survivor may take to end after the kill. */
    private static final long SURVIVOR_SECONDS = 20;

    @TempDir
    Path dir;

    @Test
    void everySurvivorOfAKilledRankIsToldByPidOrDone() throws Exception {
        String property = System.getProperty("jpipeline.test.seed", "");
        long seed = property.isBlank() ? System.nanoTime() : Long.parseLong(property.trim());
        long budgetNanos = TimeUnit.SECONDS.toNanos(Long.getLong("jpipeline.test.killSeconds", 60));
        System.out.println("RegionKillTest seed " + seed + " (rerun: -Djpipeline.test.seed=" + seed + ")");
        Random random = new Random(seed);
        long start = System.nanoTime();
        List<String> rounds = new ArrayList<>();
        int[] byState = new int[State.values().length];
        for (int round = 0; System.nanoTime() - start < budgetNanos || round < State.values().length; round++) {
            State state = round < State.values().length ? State.values()[round]
                : State.values()[random.nextInt(State.values().length)];
            String outcome = round(round, state, random);
            rounds.add("round " + round + " " + state + ": " + outcome);
            byState[state.ordinal()]++;
            if (outcome.startsWith("FAILED")) {
                throw new AssertionError("seed " + seed + ", round " + round + " (" + state + "): " + outcome
                    + "\nrounds so far:\n  " + String.join("\n  ", rounds));
            }
        }
        StringBuilder counts = new StringBuilder();
        for (State s : State.values()) {
            counts.append(' ').append(s).append(' ').append(byState[s.ordinal()]);
        }
        System.out.println("RegionKillTest seed " + seed + ": " + rounds.size() + " rounds," + counts);
    }

    /** One round: returns what the survivors ended with, or "FAILED ..." when one did not end as promised. */
    private String round(int round, State state, Random random) throws Exception {
        Path file = dir.resolve("region-" + round);
        int stageBytes = state == State.COPY ? 64 << 10 : 4096;
        int victimRank = switch (state) {
            case COPY, HOLD -> 0;
            case WAIT -> 1;
            case MAKE, EARLY -> random.nextInt(2);
        };
        long batches = state == State.HOLD ? 3 : BATCHES;
        SharedRegion.create(file, RegionPipelineChild.dataBytes(SIZE, STAGES, stageBytes), SharedRegion.Sharing.OWNER)
            .close();
        Process victim = switch (state) {
            case HOLD -> RegionPipelineChild.start(file, SIZE, victimRank, STAGES, stageBytes, batches, "hold");
            case COPY -> RegionPipelineChild.start(file, SIZE, victimRank, STAGES, stageBytes, batches, "slow");
            default -> RegionPipelineChild.start(file, SIZE, victimRank, STAGES, stageBytes, batches);
        };
        try {
            BufferedReader lines = new BufferedReader(new InputStreamReader(victim.getInputStream(),
                StandardCharsets.UTF_8));
            CountDownLatch firstBatch = new CountDownLatch(1);
            List<CompletableFuture<String>> survivors = new ArrayList<>();
            String joined = lines.readLine();
            if (!"joined".equals(joined)) {
                return "FAILED the victim did not join: " + joined;
            }
            if (state == State.EARLY) {
                victim.destroyForcibly();
                victim.waitFor(10, TimeUnit.SECONDS);
            }
            for (int rank = 0; rank < SIZE; rank++) {
                if (rank != victimRank) {
                    survivors.add(survivor(file, rank, stageBytes, batches, firstBatch));
                }
            }
            switch (state) {
                case MAKE -> Thread.sleep(random.nextInt(31));
                case COPY, WAIT -> {
                    if (!firstBatch.await(SURVIVOR_SECONDS, TimeUnit.SECONDS)) {
                        return "FAILED no batch reached a survivor";
                    }
                    Thread.sleep(random.nextInt(21));
                }
                case HOLD -> {
                    String holding = lines.readLine();
                    if (!"holding".equals(holding)) {
                        return "FAILED the producer did not hold a stage: " + holding;
                    }
                }
                case EARLY -> { }
            }
            victim.destroyForcibly();
            long pid = victim.pid();
            List<String> ends = new ArrayList<>();
            for (CompletableFuture<String> survivor : survivors) {
                String end;
                try {
                    end = "done: " + survivor.get(SURVIVOR_SECONDS, TimeUnit.SECONDS);
                } catch (TimeoutException e) {
                    return "FAILED a survivor did not end within " + SURVIVOR_SECONDS + " s of the kill of pid "
                        + pid + " (" + ends + ")";
                } catch (ExecutionException e) {
                    Throwable failure = e.getCause();
                    String told = failure + (failure.getCause() == null ? "" : " / cause: " + failure.getCause());
                    if (!(failure instanceof IllegalStateException || failure instanceof StageFailedException)
                        || !told.contains("pid " + pid)) {
                        return "FAILED a survivor was not told of pid " + pid + ": " + told;
                    }
                    end = "told";
                }
                ends.add(end);
            }
            return String.join(", ", ends);
        } finally {
            victim.destroyForcibly();
            victim.waitFor(10, TimeUnit.SECONDS);
            Files.deleteIfExists(file);
        }
    }

    /** Runs rank {@code rank} on a thread of its own, in a mapping of its own, until its pipeline ends or fails. */
    private static CompletableFuture<String> survivor(Path file, int rank, int stageBytes, long batches,
                                                      CountDownLatch firstBatch) {
        CompletableFuture<String> result = new CompletableFuture<>();
        Thread.ofPlatform().name("survivor-" + rank).daemon(true).start(() -> {
            try (SharedRegion region = SharedRegion.open(file)) {
                result.complete(RegionPipelineChild.run(region, region.join(SIZE, rank),
                    RegionPipelineChild.roleOf(SIZE, rank), STAGES, stageBytes, batches, false,
                    firstBatch::countDown));
            } catch (Throwable e) {
                result.completeExceptionally(e);
            }
        });
        return result;
    }
}
