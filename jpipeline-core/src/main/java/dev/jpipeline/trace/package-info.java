/**
 * Tracing of pipeline operations: a {@link dev.jpipeline.trace.Tracer} set on a shared state records every acquire,
 * commit, wait, release and copy as a {@link dev.jpipeline.trace.TraceEvent}, in bounded per-thread rings, at no
 * cost when no tracer is set. Events can be drained while pipelines run, or written as a Chrome / Perfetto
 * trace-event file. No CUDA counterpart (Nsight Systems plays this part on the GPU).
 */
package dev.jpipeline.trace;
