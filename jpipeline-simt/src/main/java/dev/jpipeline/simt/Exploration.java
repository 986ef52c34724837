package dev.jpipeline.simt;

/**
 * What {@link CheckedExecution#explore} saw over its schedules. No CUDA counterpart.
 *
 * @param <R>            the run's result type
 * @param schedulesRun   schedules run, at least 1 (it stops at the first finding)
 * @param firstResult    the result of the first schedule; null when it threw
 * @param finding        the first finding (a checker's report, a failure, or a result other than the first
 *                       schedule's), or null when every schedule ran clean and gave an equal result
 * @param decisions      scheduling decisions made over all the schedules run, at least 0 (for cost figures)
 */
public record Exploration<R>(int schedulesRun, R firstResult, Finding finding, long decisions) {

    /**
     * Whether every schedule ran clean and gave the first schedule's result.
     *
     * @return {@code finding() == null}
     */
    public boolean clean() {
        return finding == null;
    }

    /**
     * Whether the results of the schedules run were all equal ({@code Objects.deepEquals}): false only when a schedule
     * gave another result than the first ({@link FindingKind#RESULT_DIFFERS}).
     *
     * @return whether no schedule's result differed from the first
     */
    public boolean identical() {
        return finding == null || finding.kind() != FindingKind.RESULT_DIFFERS;
    }
}
