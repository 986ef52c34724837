package dev.jpipeline.simt;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;

/**
 * A JDK Flight Recorder event, once per kernel class: its launches run uncompiled, and why
 * ({@code -XX:StartFlightRecording} shows it under "jpipeline").
 */
@Name("dev.jpipeline.KernelFallback")
@Label("Kernel not compiled")
@Category("jpipeline")
@Description("A kernel whose launches run uncompiled (on strands, or as a plain loop of its run calls), and why")
final class KernelFallbackEvent extends jdk.jfr.Event {

    @Label("Kernel class")
    String kernel;

    @Label("Runs")
    String runsAs;

    @Label("Reason")
    String reason;
}
