package dev.jpipeline.internal.trace;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.Timespan;

/**
 * A JDK Flight Recorder event for a traced pipeline operation ({@code -XX:StartFlightRecording} shows it under
 * "jpipeline" while a tracer is attached).
 */
@Name("dev.jpipeline.Stage")
@Label("Pipeline stage operation")
@Category("jpipeline")
@Description("An acquire, commit, copy, wait or release of a jpipeline stage")
final class StageEvent extends Event {

    @Label("Operation")
    String operation;

    @Label("Stage")
    int stage;

    @Label("Batch")
    long batch;

    @Label("Rank")
    int rank;

    @Label("Role")
    String role;

    @Label("Time spent")
    @Timespan(Timespan.NANOSECONDS)
    long spent;
}
