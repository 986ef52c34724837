package dev.jpipeline.internal;

import dev.jpipeline.Group;
import dev.jpipeline.PipelineRole;

/**
 * The collective {@code make_pipeline} of a shared state: every rank of the group states how it makes the
 * pipeline, and all get handles on one new pipeline or all get the same {@link IllegalArgumentException}. In one
 * process ({@link MakeRendezvous}) the proposals meet in a map; across processes ({@link RegionRendezvous}) in the
 * state's shared region.
 */
public sealed interface PipelineMaker permits MakeRendezvous, RegionRendezvous {

    /** {@code make_pipeline(group, &state)}: a unified pipeline. */
    PipelineHandle makeUnified(Group group);

    /** {@code make_pipeline(group, &state, producerCount)}: partitioned by count. */
    PipelineHandle makeByCount(Group group, int producerCount);

    /** {@code make_pipeline(group, &state, role)}: partitioned by role; {@code role} may be null (every rank is told). */
    PipelineHandle makeByRole(Group group, PipelineRole role);
}
