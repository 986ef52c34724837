package dev.jpipeline.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * What the hidden child commands of a {@code --processes} run have in common (a picocli mixin): the region they
 * meet in, the side they play, and their lifeline to the parent.
 */
final class ChildOptions {

    /** The exit status of a child whose parent is gone. */
    static final int PARENT_GONE = 4;

    @Option(names = "--region", required = true, paramLabel = "FILE", description = "The shared region.")
    Path region;

    @Option(names = "--side", required = true, paramLabel = "SIDE", description = "producers or consumers.")
    ProcessSide side;

    /**
     * Halts this JVM with {@link #PARENT_GONE} once its standard input ends: the parent holds it open while it
     * waits for its children, so that none outlives it, even when it is killed. The region goes first: a parent
     * that was killed could not delete it.
     */
    void exitWithParent() {
        Thread.ofPlatform().daemon().name("jpipeline-parent-watch").start(() -> {
            try {
                while (System.in.read() >= 0) {
                    // the parent writes nothing: only the end counts
                }
            } catch (IOException e) {
                // a broken pipe ends it too
            }
            try {
                Files.deleteIfExists(region);
            } catch (IOException e) {
                // nobody is left to tell
            }
            Runtime.getRuntime().halt(PARENT_GONE);
        });
    }
}
