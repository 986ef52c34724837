package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** {@link ThreadTeam}: a team of Java threads run as one group. */
class ThreadTeamTest {

    /**
     * Hostile review of issue 8: ThreadTeam.run with a huge timeout threw ArithmeticException ("long overflow"),
     * naming no rule.
     */
    @Test
    void aHugeRunTimeoutIsClampedNotAnArithmeticException() {
        assertTimeoutPreemptively(Teams.LIMIT, () ->
            ThreadTeam.ofPlatform(1).run(Duration.ofSeconds(Long.MAX_VALUE), g -> { }));
    }
}
