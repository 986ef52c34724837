package dev.jpipeline.internal;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A check drops the participants that have left (a kernel launch registers every CUDA thread, 262,144 for a
 * 1024 x 256 grid, and most have finished by the time the watching thread looks) but still counts them in the
 * report. The launch benchmark (SimtLaunchBenchmark, docs/performance.md) shows the cost this removes.
 */
@Timeout(60)
class HangDetectorTest {

    /** A participant with fixed answers. */
    private record Fixed(boolean isGone, String stalledIn) implements HangDetector.Participant {
        @Override
        public Thread thread() {
            return Thread.currentThread();
        }

        @Override
        public Throwable fault() {
            return null;
        }

        @Override
        public void abandon() {
            throw new AssertionError("a live thread's participant is never abandoned");
        }

        @Override
        public String name() {
            return isGone ? "gone" : "waiter";
        }
    }

    @Test
    void participantsThatLeftAreDroppedByACheckAndStillCountedInTheReport() throws InterruptedException {
        HangDetector detector = new HangDetector(2_000_000L, "test hung", () -> 0, () -> "");
        for (int i = 0; i < 1000; i++) {
            detector.register(new Fixed(true, null));
        }
        detector.register(new Fixed(false, "waiting for stage 0"));
        assertNull(detector.check(), "the first look only starts the clock");
        String report = null;
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (report == null && System.nanoTime() < deadline) {
            Thread.onSpinWait();
            report = detector.check();         // each check after the first sees the gone ones dropped
        }
        assertNotNull(report, "a waiter with everyone else gone is a hang");
        assertTrue(report.contains("waiter: waiting for stage 0"), report);
        assertTrue(report.contains("(1000 have left)"), report);
    }
}
