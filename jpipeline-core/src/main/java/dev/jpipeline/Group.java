package dev.jpipeline;

/**
 * One thread's view of a group of threads that act collectively: the CUDA "ThreadGroup" concept that
 * {@code cuda::make_pipeline} and the group form of {@code cuda::memcpy_async} take (for example
 * {@code cooperative_groups::this_thread_block()}).
 *
 * <p>Every participating thread holds its own view; the views of one group agree on {@link #size()} and give
 * each thread a distinct {@link #threadRank()}. {@link ThreadTeam} provides groups for ordinary Java threads.
 * The concept's {@code static thread_scope} member is not part of this interface: the pipeline never reads it
 * (the same holds upstream).
 */
public interface Group {

    /**
     * The number of threads in the group ({@code size()}).
     *
     * @return the group's size, at least 1
     */
    int size();

    /**
     * This thread's rank in the group ({@code thread_rank()}).
     *
     * @return a rank unique in the group, in {@code [0, size())}
     */
    int threadRank();

    /**
     * Waits until every thread of the group has called {@code sync()} ({@code sync()}: an execution and
     * memory barrier). Memory consistency effects: actions of every thread before its call happen-before
     * actions of every thread after its call returns.
     */
    void sync();
}
