package dev.jpipeline.internal;

/**
 * The batch sequence a thread-scope pipeline commits into. Outside a kernel every thread has its own (the
 * pipeline just counts); inside a SIMT kernel the runtime binds, per CUDA thread, a view of its warp's shared
 * sequence, so that thread-scope pipelines and the primitives API of one warp are entangled as the CUDA
 * documentation describes ("Warp Entanglement").
 */
public interface BatchSequence {

    /** The sequence bound to the current thread (a kernel thread's lane view), if any. */
    ScopedValue<BatchSequence> CURRENT = ScopedValue.newInstance();

    /** A commit by the current thread: returns the index the batch got in the actual (shared) sequence. */
    long commit();

    /**
     * A wait by the current thread for every batch of the actual sequence up to and including {@code target}
     * (it may have been committed by other lanes): records the coverage.
     */
    void waitThrough(long target);

    /** The latest index of the actual sequence, or -1 before the first commit. */
    long latest();

    /** The sequence bound to the current thread, or null. */
    static BatchSequence current() {
        return CURRENT.isBound() ? CURRENT.get() : null;
    }
}
