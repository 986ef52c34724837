package dev.jpipeline.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.WaitStrategy;
import org.junit.jupiter.api.Test;

/**
 * Where barrier words live (false-sharing guard): a barrier of its own has 128 bytes of its array on each side of
 * its word; a pipeline side with one thread has its words side by side, a side of several threads has them 128
 * bytes apart, with 128 bytes between the two groups and at both ends of the array.
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
    void soloSidesKeepTheirWordsSideBySideAndSharedSidesSpaceThem() {
        for (int stages : new int[] {1, 4, 255}) {
            assertLayout(stages, 1, 1);
            assertLayout(stages, 1, 3);
            assertLayout(stages, 2, 1);
        }
    }

    private static void assertLayout(int stages, int producers, int consumers) {
        StageRing ring = new StageRing(StageRing.Kind.BY_COUNT, producers + consumers, producers, consumers,
            new PipelineSettings(dev.jpipeline.ThreadScope.BLOCK, stages, WaitStrategy.ADAPTIVE, null, null, 0,
                dev.jpipeline.CopyPolicy.AUTO));
        String what = stages + " stages, " + producers + " producers, " + consumers + " consumers: ";
        long[] words = ring.produced[0].words();
        int producedStride = producers == 1 ? 1 : PAD_LONGS;
        int consumedStride = consumers == 1 ? 1 : PAD_LONGS;
        for (int s = 0; s < stages; s++) {
            assertSame(words, ring.produced[s].words());
            assertSame(words, ring.consumed[s].words());
            assertEquals(ring.produced[0].wordIndex() + s * producedStride, ring.produced[s].wordIndex(),
                what + "produced word " + s);
            assertEquals(ring.consumed[0].wordIndex() + s * consumedStride, ring.consumed[s].wordIndex(),
                what + "consumed word " + s);
        }
        int lastProduced = ring.produced[stages - 1].wordIndex();
        int firstConsumed = ring.consumed[0].wordIndex();
        int lastConsumed = ring.consumed[stages - 1].wordIndex();
        assertTrue(ring.produced[0].wordIndex() >= PAD_LONGS, what + "padding before the produced words");
        assertTrue(firstConsumed - lastProduced - 1 >= PAD_LONGS, what + "padding between the sides");
        assertTrue(words.length - 1 - lastConsumed >= PAD_LONGS, what + "padding after the consumed words");
    }
}
