package dev.jpipeline.simt;

/**
 * The turn policy of a launch that is not checked: round-robin (BlockScheduler.roundRobin), with no scheduling
 * points of its own. Stateless: one instance serves every block.
 */
final class FairTurns implements TurnPolicy {

    static final FairTurns INSTANCE = new FairTurns();

    private FairTurns() {
    }

    @Override
    public KernelThread next(BlockScheduler s) {
        return s.roundRobin();
    }

    @Override
    public boolean ordersEveryThread() {
        return false;
    }

    @Override
    public long blocking(KernelThread kt, long deadline) {
        return deadline;
    }

    @Override
    public boolean mayHandOn(BlockScheduler s, KernelThread kt) {
        return false;       // no scheduling point decides anything: the holder goes on
    }

    @Override
    public void handedOn(KernelThread kt, String what, KernelThread next) {
    }

    @Override
    public void exiting(KernelThread kt) {
    }
}
