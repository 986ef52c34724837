package dev.jpipeline.internal;

import dev.jpipeline.Pipeline;
import dev.jpipeline.PipelineSharedState;
import dev.jpipeline.copy.CopyEngine;
import dev.jpipeline.internal.copy.CopyService;
import dev.jpipeline.internal.trace.TraceSink;
import dev.jpipeline.trace.Tracer;

/**
 * The doors of the public facades that the engine (and the SIMT runtime) needs and the API does not show, in the
 * JDK's shared-secrets idiom: each facade's static initializer installs its door, once, so that no public method of
 * the API takes or returns an engine type. This package is exported to {@code dev.jpipeline.simt} only.
 *
 * <pre>
 * Pipeline     wrap a handle (a pipeline made in steps: MakeRendezvous.Making), a state's maker
 * CopyEngine   the engine's CopyService (its workers, with the engine's checked execution, if any)
 * Tracer       the tracer's TraceSink (lanes for traced pipelines)
 * </pre>
 *
 * A door is read after its facade's class is initialized (which installs it): the getters initialize the class
 * first where it may not be, and class initialization orders the install before every read.
 */
public final class ApiAccess {

    /** What {@code Pipeline} opens. */
    public interface PipelineDoors {
        /** {@code new Pipeline(handle)}. */
        Pipeline wrap(PipelineHandle handle);

        /** The state's collective maker. */
        PipelineMaker maker(PipelineSharedState state);
    }

    private static volatile PipelineDoors pipelines;
    private static volatile java.util.function.Function<CopyEngine, CopyService> copyEngines;
    private static volatile java.util.function.Function<Tracer, TraceSink> tracers;

    private ApiAccess() {
    }

    /** Called by {@code Pipeline}'s static initializer. @throws IllegalStateException when installed already */
    public static synchronized void installPipelineDoors(PipelineDoors doors) {
        pipelines = once(pipelines, doors, "Pipeline");
    }

    /** Called by {@code CopyEngine}'s static initializer. @throws IllegalStateException when installed already */
    public static synchronized void installCopyEngineDoor(java.util.function.Function<CopyEngine, CopyService> door) {
        copyEngines = once(copyEngines, door, "CopyEngine");
    }

    /** Called by {@code Tracer}'s static initializer. @throws IllegalStateException when installed already */
    public static synchronized void installTracerDoor(java.util.function.Function<Tracer, TraceSink> door) {
        tracers = once(tracers, door, "Tracer");
    }

    private static <T> T once(T installed, T door, String facade) {
        if (installed != null) {
            throw new IllegalStateException("the doors of " + facade + " are installed already");
        }
        return java.util.Objects.requireNonNull(door, "door");
    }

    /** {@code new Pipeline(handle)}. */
    public static Pipeline wrap(PipelineHandle handle) {
        return pipelineDoors().wrap(handle);
    }

    /** The collective maker of {@code state} (null when it is null). */
    public static PipelineMaker maker(PipelineSharedState state) {
        return state == null ? null : pipelineDoors().maker(state);
    }

    /** What the pipeline engine uses of {@code engine}: its workers, with its checked execution, if any. */
    public static CopyService copies(CopyEngine engine) {
        java.util.function.Function<CopyEngine, CopyService> door = copyEngines;
        if (door == null) {                 // engine is an instance: its class is initialized, the door installed
            throw new IllegalStateException("CopyEngine's door is not installed");
        }
        return door.apply(engine);
    }

    /** What the pipeline engine uses of {@code tracer}: where its handles get their lanes. */
    public static TraceSink sink(Tracer tracer) {
        java.util.function.Function<Tracer, TraceSink> door = tracers;
        if (door == null) {
            throw new IllegalStateException("Tracer's door is not installed");
        }
        return door.apply(tracer);
    }

    private static PipelineDoors pipelineDoors() {
        PipelineDoors d = pipelines;
        if (d == null) {
            try {   // Pipeline installs them as it is initialized
                Class.forName(Pipeline.class.getName(), true, Pipeline.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                throw new IllegalStateException(e);
            }
            d = pipelines;
        }
        return d;
    }
}
