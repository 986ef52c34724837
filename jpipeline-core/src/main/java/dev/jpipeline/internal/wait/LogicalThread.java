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
}
