package dev.jpipeline.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.WaitStrategy;
import org.junit.jupiter.api.Test;

/**
 * Where barrier words live (false-sharing guard): a barrier of its own has 128 bytes of its array on each side of
 * its word. A pipeline side splits its members into min(members, 8) groups; a group of one thread has its words
 * side by side, a group of several threads has them 128 bytes apart, with 128 bytes between groups, between the
 * sides and at both ends of the array.
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
    void oneThreadGroupsKeepTheirWordsSideBySideAndSharedGroupsSpaceThem() {
        for (int stages : new int[] {1, 4, 255}) {
            assertLayout(stages, 1, 1);
            assertLayout(stages, 1, 3);
            assertLayout(stages, 2, 1);
            assertLayout(stages, 9, 20);
        }
    }

    @Test
    void aSideSplitsItsMembersIntoAtMostEightGroupsThatExpectThemAll() {
        for (int members = 1; members <= 40; members++) {
            StageSide side = StageSide.inArray(new long[2 * StageSide.wordsNeeded(3, members)], 0, 3, members);
            assertEquals(Math.min(members, StageSide.MAX_GROUPS), side.groups.length, members + " members");
            int expected = 0;
            for (PhaseBarrier[] group : side.groups) {
                expected += group[0].expected();
            }
            assertEquals(members, expected, "arrivals expected over the groups of " + members + " members");
            for (int m = 0; m < members; m++) {
                assertSame(side.groups[m % side.groups.length], side.of(m), "member " + m + "'s group");
                assertEquals(side.of(m)[0].expected() == 1, side.alone(m), "member " + m + " alone");
            }
        }
    }

    private static void assertLayout(int stages, int producers, int consumers) {
        StageRing ring = StageRing.inHeap(StageRing.Kind.BY_COUNT, producers + consumers, producers, consumers,
            new PipelineSettings(dev.jpipeline.ThreadScope.BLOCK, stages, WaitStrategy.ADAPTIVE, null, null, 0,
                dev.jpipeline.CopyPolicy.AUTO, null));
        String what = stages + " stages, " + producers + " producers, " + consumers + " consumers: ";
        long[] words = ring.produced.groups[0][0].words();
        int previousEnd = -1;      // the last word of the group before, in array order
        for (StageSide side : new StageSide[] {ring.produced, ring.consumed}) {
            for (PhaseBarrier[] group : side.groups) {
                int stride = group[0].expected() == 1 ? 1 : PAD_LONGS;
                for (int s = 0; s < stages; s++) {
                    assertSame(words, group[s].words(), what + "one array");
                    assertEquals(group[0].wordIndex() + s * stride, group[s].wordIndex(), what + "word " + s);
                }
                assertTrue(group[0].wordIndex() - previousEnd - 1 >= PAD_LONGS,
                    what + "padding before the group at " + group[0].wordIndex() + " (previous word " + previousEnd + ")");
                previousEnd = group[stages - 1].wordIndex();
            }
        }
        assertTrue(words.length - 1 - previousEnd >= PAD_LONGS, what + "padding after the last word");
    }
}
