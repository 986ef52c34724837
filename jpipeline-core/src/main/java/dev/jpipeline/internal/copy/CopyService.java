package dev.jpipeline.internal.copy;

import dev.jpipeline.AsyncContractFulfillment;
import dev.jpipeline.internal.checked.Interleaver;
import dev.jpipeline.internal.PhaseBarrier;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;

/**
 * What the pipeline engine needs of a copy engine: {@link CopyWorkers} implements it, and the public
 * {@code dev.jpipeline.copy.CopyEngine} implements it by delegating to its workers, so that the engine never
 * names the facade.
 */
public interface CopyService {

    /**
     * Copies {@code src} into {@code dst} (of the same size) for the current phase of {@code target}: inline
     * when it is small enough or {@code onIssuer} ({@link AsyncContractFulfillment#NONE}, landed on return),
     * else on a worker, tied to the phase with {@link PhaseBarrier#tieCopy()} and reported to {@code landing}
     * when it lands ({@link AsyncContractFulfillment#ASYNC}). The one place that decides inline or hand-off.
     *
     * @param onIssuer whether the issuing thread should copy whatever the size (it would only wait meanwhile)
     * @throws IllegalStateException when the engine is closed (whatever the size)
     */
    AsyncContractFulfillment copyInto(MemorySegment dst, MemorySegment src, PhaseBarrier target,
                                      CopyLanding landing, boolean onIssuer);

    /**
     * Like {@link #copyInto}, reading {@code dst.byteSize()} bytes of {@code channel} from {@code position}; a read
     * of any size goes to a worker unless {@code onIssuer}. Either way the read is tied to {@code target} and told to
     * {@code landing}, so that a failed read fails the phase: with {@code onIssuer} the issuing thread reads and
     * tells the landing before it returns ({@link AsyncContractFulfillment#NONE}).
     */
    AsyncContractFulfillment readInto(MemorySegment dst, FileChannel channel, long position, PhaseBarrier target,
                                      CopyLanding landing, boolean onIssuer);

    /**
     * Checked execution for the thread-scope pipelines that use this service (a checked {@code CopyEngine}'s), or
     * null (the default): such a pipeline takes it as its interleaver.
     *
     * @return the interleaver, or null
     */
    default Interleaver interleaver() {
        return null;
    }
}
