package dev.jpipeline.internal;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * This process's live handles on the pipelines of one state area of a shared region, whichever
 * {@code PipelineSharedState} object made them: a waiter's {@link RegionReaper} leaves for those whose thread ended
 * without quit, which no other process can see. One per mapped region and offset ({@code SharedRegion} keeps them);
 * a handle is added when it is made and removed when it leaves.
 */
public final class RegionLocals {

    final List<StageHandle> handles = new CopyOnWriteArrayList<>();
}
