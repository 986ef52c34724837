package dev.jpipeline;

/**
 * Test support: what a call did, in a few words. Tests that check a promise with several sub-cases collect the
 * outcomes of all of them and compare the list with the promised one, so that one failure message shows every
 * sub-case that broke (see {@link Bounded} for the bound on each).
 */
final class Outcomes {

    private Outcomes() {
    }

    /** A call whose outcome is in question. */
    @FunctionalInterface
    interface Action {
        void run() throws Exception;
    }

    /** A timed wait: whether its phase or stage completed. */
    @FunctionalInterface
    interface TimedWait {
        boolean await() throws Exception;
    }

    /** What a thread does with a pipeline handle; it returns its outcome in words. */
    @FunctionalInterface
    interface PipeBody {
        String run(Pipeline pipe) throws Exception;
    }

    /** "returned", or the exception's class and message. */
    static String of(Action action) {
        try {
            action.run();
            return "returned";
        } catch (Throwable t) {
            return Bounded.describe(t);
        }
    }

    /**
     * "no exception", or the simple name of what was thrown; an IllegalArgumentException that names a closed
     * segment and no overlap is "IllegalArgumentException naming the closed segment".
     */
    static String thrown(Action action) {
        try {
            action.run();
            return "no exception";
        } catch (IllegalArgumentException e) {
            String m = String.valueOf(e.getMessage());
            if (m.contains("closed") && !m.contains("overlap")) {
                return "IllegalArgumentException naming the closed segment";
            }
            return m.contains("overlap") ? "IllegalArgumentException: " + m : "IllegalArgumentException";
        } catch (Exception | Error e) {
            return e.getClass().getSimpleName();
        }
    }

    /** "false in time" when the wait returns false after at least {@code atLeastMillis} and not much later. */
    static String timedOut(long atLeastMillis, TimedWait wait) throws Exception {
        long start = System.nanoTime();
        boolean ready = wait.await();
        long millis = Teams.millisSince(start);
        if (ready) {
            return "true after " + millis + " ms";
        }
        return millis >= atLeastMillis && millis <= 1500 ? "false in time" : "false after " + millis + " ms";
    }

    /** "false at once" when the wait returns false within half a second; "true" when it returns true. */
    static String polled(TimedWait wait) throws Exception {
        long start = System.nanoTime();
        boolean ready = wait.await();
        long millis = Teams.millisSince(start);
        return ready ? "true" : millis < 500 ? "false at once" : "false after " + millis + " ms";
    }
}
