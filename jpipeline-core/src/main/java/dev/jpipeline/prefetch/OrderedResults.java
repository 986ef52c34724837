package dev.jpipeline.prefetch;

import java.util.function.BinaryOperator;

/**
 * The parallel form's results, combined in order: pieces (whole chunks, or each consumer's share of a chunk) are
 * numbered in source order, stored by whichever consumer computed them, and folded into the result by the
 * consumer whose store completes the next run of consecutive pieces, under this object's lock.
 *
 * <pre>
 * A ring of `capacity` slots, piece p in slot p mod capacity, with capacity = stages x pieces per chunk.
 * Slot free when stored: a consumer stores piece p of chunk k while it holds batch k, so batch k was acquired,
 * so every consumer had released batch k - stages, and each stores its pieces of a batch before releasing it:
 * every piece of chunks up to k - stages was stored. The store that completed those pieces folded them (each
 * store folds every consecutive stored piece from `next` on), so p - capacity, a piece of chunk k - stages or
 * before, left its slot before p arrives.
 * </pre>
 *
 * A failure of the combiner is reported as a {@link ChunkFailedException} of the chunk whose piece it was folding.
 */
final class OrderedResults<R> {

    /** Marks a free slot (a piece's result may be null). */
    private static final Object FREE = new Object();

    private final Object[] slots;
    private final long[] positions;
    private final int piecesPerChunk;
    private final BinaryOperator<R> combiner;
    private final String source;
    private R result;
    /** The next piece to fold. */
    private long next;

    OrderedResults(R identity, BinaryOperator<R> combiner, int stages, int piecesPerChunk, String source) {
        this.slots = new Object[stages * piecesPerChunk];
        this.positions = new long[slots.length];
        java.util.Arrays.fill(slots, FREE);
        this.piecesPerChunk = piecesPerChunk;
        this.combiner = combiner;
        this.source = source;
        this.result = identity;
    }

    /**
     * Stores piece {@code piece}'s result (its chunk starts at byte {@code position}) and folds every consecutive
     * stored piece.
     *
     * @throws ChunkFailedException when the combiner throws
     */
    synchronized void put(long piece, long position, R value) {
        int slot = (int) (piece % slots.length);
        if (slots[slot] != FREE) {
            throw new IllegalStateException("piece " + piece + " found its slot taken by piece " + (piece
                - slots.length) + ", not yet folded (see the class comment: this cannot happen)");
        }
        slots[slot] = value;
        positions[slot] = position;
        for (int at = (int) (next % slots.length); slots[at] != FREE; at = (int) (next % slots.length)) {
            @SuppressWarnings("unchecked")
            R r = (R) slots[at];
            slots[at] = FREE;
            try {
                result = combiner.apply(result, r);
            } catch (RuntimeException | Error e) {
                throw new ChunkFailedException(next / piecesPerChunk, positions[at], "combining the result of", source,
                    e);
            }
            next++;
        }
    }

    /** The pieces folded so far. */
    synchronized long folded() {
        return next;
    }

    /** The result of every piece folded. */
    synchronized R result() {
        return result;
    }
}
