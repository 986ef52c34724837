package dev.jpipeline.internal;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A ring in this process's heap, with no hang detector: both sides' words in one long array, laid out
 * [pad | produced groups | consumed groups], each group followed by a padding (see StageSide), so that the sides,
 * their groups and everything else stay off each other's lines.
 */
class HeapHome extends RingHome {

    /** Ranks whose threads ended without quit: named where their absence makes progress impossible. */
    private final List<String> departures = new CopyOnWriteArrayList<>();

    HeapHome(int stages, int producers, int consumers, int groupSize) {
        this(words(stages, producers, consumers), stages, producers, consumers, groupSize);
    }

    private HeapHome(long[] words, int stages, int producers, int consumers, int groupSize) {
        super(StageSide.inArray(words, PhaseBarrier.WORD_PAD, stages, producers),
            StageSide.inArray(words, PhaseBarrier.WORD_PAD + StageSide.wordsNeeded(stages, producers), stages,
                consumers),
            MemorySegment.ofArray(new long[] {groupSize}));
    }

    private static long[] words(int stages, int producers, int consumers) {
        return new long[PhaseBarrier.WORD_PAD + StageSide.wordsNeeded(stages, producers)
            + StageSide.wordsNeeded(stages, consumers)];
    }

    @Override
    SideLedger ledger(int producers, int consumers) {
        return new SideLedger(producers, consumers);
    }

    @Override
    void departed(String note) {
        departures.add(note);
    }

    @Override
    String departures() {
        return departures.isEmpty() ? "" : "; " + String.join("; ", departures);
    }
}
