package dev.jpipeline.prefetch;

import dev.jpipeline.Teams;

/** Test support: the team threads of the parallel form ({@code jpipeline-team-*}). */
final class TeamThreads {

    private TeamThreads() {
    }

    /** Waits until every team thread has ended (a run's threads end soon after {@code reduce} returned or threw). */
    static void assertNoneLeft() {
        Teams.awaitTrue("the team threads end", () -> Thread.getAllStackTraces().keySet().stream()
            .noneMatch(t -> t.getName().startsWith("jpipeline-team-") && t.isAlive()));
    }
}
