package dev.jpipeline;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Test support: the child JVMs a test started, killed (SIGKILL) after it whatever happened, so that a failed test
 * leaves no process behind. A test class registers one per test instance:
 * {@code @RegisterExtension final ChildProcesses children = new ChildProcesses();}
 */
final class ChildProcesses implements AfterEachCallback {

    private final List<Process> started = new CopyOnWriteArrayList<>();

    /** Kills {@code child} after the test; returns it. */
    Process add(Process child) {
        started.add(child);
        return child;
    }

    @Override
    public void afterEach(ExtensionContext context) {
        started.forEach(Process::destroyForcibly);
        started.clear();
    }

    /** The child's standard output, a line at a time. */
    static BufferedReader out(Process child) {
        return new BufferedReader(new InputStreamReader(child.getInputStream()));
    }
}
