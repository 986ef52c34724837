package dev.jpipeline.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.WaitStrategy;
import org.junit.jupiter.api.Test;

/**
 * Where barrier words live (false-sharing guard): a barrier of its own has 128 bytes of its array on each side of
 * its word; a pipeline's produced words sit side by side, and so do its consumed words, with 128 bytes between
 * the two groups and at both ends of the array.
 */
class PhaseBarrierLayoutTest {

    private static final int PAD_LONGS = 128 / Long.BYTES;

    @Test
    void aBarrierOfItsOwnIsPaddedOnBothSides() {
        PhaseBarrier b = new PhaseBarrier(2);
        assertTrue(b.wordIndex() >= PAD_LONGS, "word at " + b.wordIndex());
        assertTrue(b.words().length - 1 - b.wordIndex() >= PAD_LONGS,
            "word at " + b.wordIndex() + " of " + b.words().length);
    }

    @Test
    void stageWordsAreGroupedBySideAndPaddedBetweenSides() {
        for (int stages : new int[] {1, 4, 255}) {
            StageRing ring = new StageRing(StageRing.Kind.BY_COUNT, 2, 1, 1,
                new PipelineSettings(dev.jpipeline.ThreadScope.BLOCK, stages, WaitStrategy.ADAPTIVE, null, null, 0,
                    dev.jpipeline.CopyPolicy.AUTO));
            long[] words = ring.produced[0].words();
            for (int s = 0; s < stages; s++) {
                assertSame(words, ring.produced[s].words());
                assertSame(words, ring.consumed[s].words());
                assertEquals(ring.produced[0].wordIndex() + s, ring.produced[s].wordIndex(), "produced words adjacent");
                assertEquals(ring.consumed[0].wordIndex() + s, ring.consumed[s].wordIndex(), "consumed words adjacent");
            }
            int lastProduced = ring.produced[stages - 1].wordIndex();
            int firstConsumed = ring.consumed[0].wordIndex();
            int lastConsumed = ring.consumed[stages - 1].wordIndex();
            assertTrue(ring.produced[0].wordIndex() >= PAD_LONGS, "padding before the produced words");
            assertTrue(firstConsumed - lastProduced - 1 >= PAD_LONGS, "padding between the sides");
            assertTrue(words.length - 1 - lastConsumed >= PAD_LONGS, "padding after the consumed words");
        }
    }
}
