/**
 * Waiting: the one wait routine of this process and what it needs. Exported to the SIMT runtime only.
 *
 * <p>{@link dev.jpipeline.internal.wait.Waiting#await} waits until a
 * {@link dev.jpipeline.internal.wait.Waitable}'s condition is met. It polls, lets the waiter help with what it waits
 * for, idles by the {@code WaitStrategy}, then parks on the waitable's Treiber stack of
 * {@link dev.jpipeline.internal.wait.Waiter}s. Deadlines ({@link dev.jpipeline.internal.wait.Deadlines}), interrupts,
 * a thread's {@link dev.jpipeline.internal.wait.ParkListener} (the SIMT runtime's hook) and a
 * {@link dev.jpipeline.internal.wait.StallWatch} (the hang detector's) are all handled there.
 * {@link dev.jpipeline.internal.wait.Oversubscription} tells a strategy that backs off that the machine is busy.
 *
 * <p>Invariants:
 * <ul>
 *   <li>No wake-up is lost. A waiter pushes its node, then polls; a signaller changes the condition, then reads the
 *       stack. Where a signal may miss a push, each park is bounded
 *       ({@link dev.jpipeline.internal.wait.Waitable#signalsMayMissAPush}).</li>
 *   <li>An uninterruptible wait keeps the interrupt status and sets it again on return.</li>
 *   <li>A wait that ends with its node still on the stack unlinks it.</li>
 * </ul>
 * Waits across processes go through the same routine: a waitable over a word that several processes map counts
 * its waiters and sleeps in futex ({@code dev.jpipeline.internal.process.ProcessWaiting}), so every strategy, park
 * listener and stall watch reaches system scope too.
 */
package dev.jpipeline.internal.wait;
