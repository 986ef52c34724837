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

    /**
     * Leaves for the handles whose thread ended without quit, as quit would have: run by waiters (RegionReaper),
     * and by every rank of a make before it proposes, so that a pipeline whose threads all ended is no live handle
     * to the next make even if nobody ever waited on it.
     */
    void abandonEnded() {
        for (StageHandle handle : handles) {
            if (handle.ownerEnded()) {
                handle.abandon();
            }
        }
    }
}
