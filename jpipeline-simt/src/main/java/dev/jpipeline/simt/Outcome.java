package dev.jpipeline.simt;

/**
 * One run under one schedule: what it returned and what checked execution found. No CUDA counterpart.
 *
 * @param <R>       the run's result type
 * @param result    what the run returned; null when it threw
 * @param finding   the first finding, or null when the run was clean
 * @param decisions scheduling decisions the run made
 */
public record Outcome<R>(R result, Finding finding, long decisions) {
}
