/**
 * The engine's side of tracing: what a traced pipeline records and where. Not exported.
 *
 * <p>A {@link dev.jpipeline.internal.trace.TraceSink} (the public {@code Tracer}, through its door in
 * {@code ApiAccess}) gives each handle of a traced pipeline a {@link dev.jpipeline.internal.trace.TraceLane}. A lane
 * holds two bounded rings (TraceRing): one the handle's owner writes alone, and one for its copies, which any copy
 * worker writes as they land. A ring keeps its newest events, overwrites the oldest and counts what it overwrote;
 * it is read by one reader at a time while its writers go on. While a JFR recording has ever been started, each
 * event is also a {@link dev.jpipeline.internal.trace.StageEvent}.
 *
 * <p>Invariants: an untraced pipeline pays one null check per operation; recording never blocks, takes no lock and
 * allocates nothing per event. No event is ever torn or reported twice: the jcstress tests
 * TraceRingOwnerOverwrites and TraceRingCopiesOverwrite check both.
 */
package dev.jpipeline.internal.trace;
