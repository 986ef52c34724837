/**
 * What several processes share a word of memory with: the bottom layer of system scope, which knows nothing of
 * pipelines. Not exported.
 *
 * <ul>
 *   <li>{@link dev.jpipeline.internal.process.Futex} is Linux {@code futex(2)} through the FFM API.</li>
 *   <li>{@link dev.jpipeline.internal.process.ProcessWaiting} is how a waiter of a word that several processes
 *       map sleeps: it counts itself on a wake word, then sleeps in futex (a short park where futex cannot be
 *       used); the wait itself is the one wait routine's (internal.wait.Waiting). {@code wakeAll} and
 *       {@code wakeIfCounted} wake such sleepers, making the system call only when a waiter is counted.</li>
 *   <li>{@link dev.jpipeline.internal.process.MappedAtomics} makes compare-and-sets on mapped words load the word
 *       first, so that a truncated file faults into an exception rather than a fatal signal (its comment names the
 *       one window left).</li>
 *   <li>{@link dev.jpipeline.internal.process.ProcessIdentity} names a process for good (pid and start time).</li>
 * </ul>
 *
 * <p>Invariants:
 * <ul>
 *   <li>No wake-up is lost across processes (the Dekker argument in ProcessWaiting). Where a waker may skip the
 *       fence (a release store), each futex sleep is bounded.</li>
 *   <li>A fault of the mapped memory reaches the caller as an {@code InternalError}, which the region's code turns
 *       into an exception that names the region.</li>
 * </ul>
 * The region's layout and protocol (members, stages, the reaper) live in {@code dev.jpipeline.internal}, and are
 * built on these.
 */
package dev.jpipeline.internal.process;
