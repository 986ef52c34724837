package dev.jpipeline.cli;

import java.io.PrintStream;

/** A progress bar on a terminal, drawn only once a run has lasted a second. */
final class ProgressBar {

    private ProgressBar() {
    }

    static Thread start(java.util.concurrent.atomic.AtomicLong done, long total, PrintStream terminal) {
        return Thread.ofPlatform().daemon().name("jpipeline-progress").start(() -> {
            long start = System.nanoTime();
            boolean drawn = false;
            try {
                while (!Thread.currentThread().isInterrupted()) {
                    Thread.sleep(200);
                    if (System.nanoTime() - start < 1_000_000_000L) {
                        continue;
                    }
                    int percent = (int) (100 * done.get() / Math.max(1, total));
                    int filled = percent * 40 / 100;
                    terminal.print("\r[" + "#".repeat(filled) + ".".repeat(40 - filled) + "] " + percent + "%");
                    terminal.flush();
                    drawn = true;
                }
            } catch (InterruptedException finished) {
                // the run is over
            }
            if (drawn) {
                terminal.print("\r" + " ".repeat(48) + "\r");
                terminal.flush();
            }
        });
    }
}
