package dev.jpipeline.internal.process;

import java.time.Instant;
import java.util.Optional;

/**
 * A process as a shared region records it: its pid and its start time, in milliseconds since the epoch. The pair
 * names one process for good: a pid that the system reuses after its process died comes with another start time,
 * so a reused pid is never taken for a live member.
 *
 * @param pid         the process id, above 0
 * @param startMillis the process's start time (from {@link ProcessHandle.Info#startInstant()}), or 0 where the
 *                    system does not tell it (then only the pid is matched)
 */
public record ProcessIdentity(long pid, long startMillis) {

    /** This process. */
    public static final ProcessIdentity CURRENT = of(ProcessHandle.current());

    /**
     * This process's pid namespace: the inode of {@code /proc/self/ns/pid} (the N of its link {@code pid:[N]}), or
     * 0 where the system does not tell it. A pid means a process only within its namespace: a region records each
     * member's, and refuses a joiner whose namespace differs from a member's (RegionMembers), because it could
     * not tell whether that member lives.
     */
    public static final long PID_NAMESPACE = pidNamespace();

    private static long pidNamespace() {
        try {
            String link = java.nio.file.Files.readSymbolicLink(java.nio.file.Path.of("/proc/self/ns/pid")).toString();
            if (link.startsWith("pid:[") && link.endsWith("]")) {
                return Long.parseLong(link, 5, link.length() - 1, 10);
            }
        } catch (java.io.IOException | UnsupportedOperationException | SecurityException | NumberFormatException e) {
            // not Linux, or /proc is not mounted: unknown
        }
        return 0;
    }

    /** The identity of {@code process}. */
    static ProcessIdentity of(ProcessHandle process) {
        return new ProcessIdentity(process.pid(), startOf(process).orElse(0L));
    }

    private static Optional<Long> startOf(ProcessHandle process) {
        return process.info().startInstant().map(Instant::toEpochMilli);
    }

    /**
     * Whether the process is alive: a live process with this pid and, where both are known, this start time.
     *
     * @return false when no process has the pid, or the one that has it started at another time
     */
    public boolean isAlive() {
        if (pid == CURRENT.pid) {
            return startMillis == CURRENT.startMillis;
        }
        Optional<ProcessHandle> process = ProcessHandle.of(pid).filter(ProcessHandle::isAlive);
        if (process.isEmpty()) {
            return false;
        }
        long started = startOf(process.get()).orElse(0L);
        return startMillis == 0 || started == 0 || started == startMillis;
    }

    @Override
    public String toString() {
        return "pid " + pid + (startMillis == 0 ? "" : " (started " + Instant.ofEpochMilli(startMillis) + ")");
    }
}
