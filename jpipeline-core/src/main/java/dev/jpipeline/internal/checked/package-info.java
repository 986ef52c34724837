/**
 * Checked execution's hold on the pipeline engine. Exported to the SIMT runtime only, whose checked launches
 * implement {@link dev.jpipeline.internal.checked.Interleaver} themselves.
 *
 * <p>An {@link dev.jpipeline.internal.checked.Interleaver} decides, from a seed, where a schedule switches threads.
 * It holds copies back so that they land late, and poisons a stage's destinations once the stage is released, so
 * that a read too early or too late shows. {@link dev.jpipeline.internal.checked.SeededInterleaver} is the one for
 * Java threads: a checked {@code PipelineSharedState}'s, or a checked {@code CopyEngine}'s for thread-scope
 * pipelines. {@link dev.jpipeline.internal.checked.Poison} is the pattern memory holds where it holds no data.
 *
 * <p>Invariants:
 * <ul>
 *   <li>A handle binds its interleaver once, when it is made, so an unchecked pipeline pays one null test per
 *       operation.</li>
 *   <li>A round's destinations are poisoned once, by whoever frees the round first, and before a producer may
 *       write the stage again.</li>
 *   <li>The same seed gives the same schedule, so a finding's replay line reproduces it.</li>
 * </ul>
 */
package dev.jpipeline.internal.checked;
