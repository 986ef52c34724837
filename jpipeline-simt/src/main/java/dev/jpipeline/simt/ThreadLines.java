package dev.jpipeline.simt;

/**
 * The per-thread lines of a hang report, with runs of consecutive threads that wait in the same place folded into
 * one line ("threads (1, 0, 0) to (62, 0, 0), 62 threads: waits in ..."), so that a block of 1024 threads waiting in
 * one __syncthreads reads as one line, not 1024.
 */
final class ThreadLines {

    private final StringBuilder out;
    private final Launch launch;
    private int runFirst = -1;
    private int runLast;
    private String runText;

    ThreadLines(StringBuilder out, Launch launch) {
        this.out = out;
        this.launch = launch;
    }

    /** The thread of block rank {@code rank}, after those added before it, waits as {@code text} says. */
    void add(int rank, String text) {
        if (runFirst >= 0 && rank == runLast + 1 && text.equals(runText)) {
            runLast = rank;
            return;
        }
        flush();
        runFirst = rank;
        runLast = rank;
        runText = text;
    }

    /** Writes the pending run: call once after the last {@link #add}. */
    void flush() {
        if (runFirst < 0) {
            return;
        }
        if (runFirst == runLast) {
            out.append("\n    thread ").append(launch.threadIndex(runFirst));
        } else {
            out.append("\n    threads ").append(launch.threadIndex(runFirst)).append(" to ")
                .append(launch.threadIndex(runLast)).append(", ").append(runLast - runFirst + 1).append(" threads");
        }
        out.append(": ").append(runText);
        runFirst = -1;
    }
}
