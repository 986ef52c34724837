package dev.jpipeline.internal.wait;

/**
 * A thread of an execution model that runs several of its threads one after another on one Java thread (the SIMT
 * block scheduler runs CUDA threads that never block as plain calls on a shared strand): what a pipeline handle
 * names and checks its owner by instead of the Java thread, which outlives it. Obtained through
 * {@link ParkListener#logicalThread()}.
 */
public interface LogicalThread {

    /**
     * Whether this thread has ended. Once true it stays true; the write that made it true happens-before a read
     * that sees it (so the ended thread's handle state is readable, as after {@link Thread#isAlive()} is false).
     */
    boolean hasEnded();

    /** Its name, for messages ("block (0, 0, 0) thread (3, 0, 0)"). */
    String name();

    /**
     * Registers {@code handle}, a pipeline handle this thread owns, to be left for when this thread ends if it has
     * not left by then (as a C++ destructor quits an un-quit {@code cuda::pipeline} when its thread's scope ends).
     * By default nothing: a peer's stalled wait then leaves for the ended thread's handle (the hang detector), which
     * is later and depends on timing; an execution model whose threads end at a point it knows leaves for them
     * there, so every run behaves the same.
     *
     * @param handle the handle; its {@code abandon()} leaves for it, and is a no-op once it has left
     */
    default void onEnd(dev.jpipeline.internal.HangDetector.Participant handle) {
    }
}
