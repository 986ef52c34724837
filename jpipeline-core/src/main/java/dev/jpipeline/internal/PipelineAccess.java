package dev.jpipeline.internal;

import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineSharedState;

/**
 * The two package-private doors of {@link Pipeline} and {@link PipelineSharedState} that the SIMT runtime needs to
 * make a pipeline in steps ({@link MakeRendezvous.Making}): a shared state's maker, and a {@code Pipeline} around a
 * handle. {@code Pipeline}'s static initializer installs them, once (the JDK's shared-secrets idiom), so the public
 * API gains no method; this package is exported to {@code dev.jpipeline.simt} only.
 */
public final class PipelineAccess {

    /** What {@code Pipeline} opens. */
    public interface Doors {
        /** {@code new Pipeline(handle)}. */
        Pipeline wrap(PipelineHandle handle);

        /** The state's collective maker. */
        PipelineMaker maker(PipelineSharedState state);
    }

    /** Written once by Pipeline's static initializer; read after it has run (class initialization orders them). */
    private static volatile Doors doors;

    private PipelineAccess() {
    }

    /**
     * Installs the doors: called by {@code Pipeline}'s static initializer.
     *
     * @throws IllegalStateException when they are installed already
     */
    public static void install(Doors installed) {
        synchronized (PipelineAccess.class) {
            if (doors != null) {
                throw new IllegalStateException("the pipeline doors are installed already");
            }
            doors = installed;
        }
    }

    /** {@code new Pipeline(handle)}. */
    public static Pipeline wrap(PipelineHandle handle) {
        return doors().wrap(handle);
    }

    /** The collective maker of {@code state} (null when it is null). */
    public static PipelineMaker maker(PipelineSharedState state) {
        return state == null ? null : doors().maker(state);
    }

    private static Doors doors() {
        Doors d = doors;
        if (d == null) {
            try {   // Pipeline installs them as it is initialized
                Class.forName(Pipeline.class.getName(), true, Pipeline.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                throw new IllegalStateException(e);
            }
            d = doors;
        }
        return d;
    }
}
