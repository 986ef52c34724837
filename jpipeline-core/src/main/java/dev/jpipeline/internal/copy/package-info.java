/**
 * The copy engine: jpipeline's stand-in for the GPU's copy hardware behind {@code cuda::memcpy_async}. Exported to
 * the SIMT runtime only.
 *
 * <p>{@link dev.jpipeline.internal.copy.CopyService} is what a pipeline needs of a copy engine: copy (or read a file)
 * into a stage, tied to the stage's barrier. {@link dev.jpipeline.internal.copy.CopyWorkers} implements it with
 * worker threads, a queue of pooled {@link dev.jpipeline.internal.copy.CopySubmission}s and chunked copies that
 * several workers, or a thread waiting for the stage, share. A copy's end is told to its
 * {@link dev.jpipeline.internal.copy.CopyLanding}: the stage's barrier, or a wrapper that traces or counts it first.
 *
 * <p>Invariants:
 * <ul>
 *   <li>Every copy tied to a barrier lands exactly once, failed or not, so its phase always completes. A failure
 *       is recorded for the phase before the landing's arrival.</li>
 *   <li>A small copy, or one whose issuer would only wait, is made inline.</li>
 *   <li>A waiter never waits for a copy that no worker has started: it takes the copy's chunks itself
 *       (helpWith).</li>
 *   <li>Steady state allocates nothing.</li>
 * </ul>
 * The public facade is {@code dev.jpipeline.copy.CopyEngine}, which opens its CopyService through
 * {@code ApiAccess}.
 */
package dev.jpipeline.internal.copy;
