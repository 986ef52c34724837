package dev.jpipeline.simt;

/**
 * Who gets a block's turn, and what a turn's hand-over tells the rest of the runtime: BlockScheduler's policy seam.
 * The scheduler keeps the turn's mechanics (its lock, the ready queue, strands, the forward-progress release); a
 * policy only picks, through the scheduler's primitives (giveTurn, goIdle, enqueueReady), and keeps whatever state its
 * picks need. Every method but {@link #exiting} runs under the scheduler's lock.
 *
 * <pre>
 * FairTurns     round-robin: unstarted threads first, then in wake order; a holder spinning on another thread of its
 *               block is released (BlockScheduler.watchTurn), and a compiled thread yields at loop heads
 * CheckedTurns  checked execution: the session's seed picks among the ready threads, the next unstarted one and the
 *               copies in flight, at every scheduling point too; timed waits run on the virtual clock; a block with
 *               no candidate has hung, reported at once
 * </pre>
 */
interface TurnPolicy {

    /** The turn leaves its holder: the next holder (given by the scheduler's giveTurn), or null when idle. */
    KernelThread next(BlockScheduler s);

    /**
     * Whether the policy orders every thread itself (checked execution): then a compiled thread does not yield at
     * loop heads, a holder is never released, and an abort lets every waiting thread unwind at once.
     */
    boolean ordersEveryThread();

    /** {@code kt} blocks in a wait until {@code deadline}: the deadline its park keeps. */
    long blocking(KernelThread kt, long deadline);

    /** At a scheduling point of the holder {@code kt}: whether the turn may go elsewhere. */
    boolean mayHandOn(BlockScheduler s, KernelThread kt);

    /** {@code kt} handed the turn to {@code next} at a scheduling point named {@code what}. */
    void handedOn(KernelThread kt, String what, KernelThread next);

    /** {@code kt} is finishing (not under the lock). */
    void exiting(KernelThread kt);
}
