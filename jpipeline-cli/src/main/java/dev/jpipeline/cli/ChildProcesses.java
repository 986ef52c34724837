package dev.jpipeline.cli;

import dev.jpipeline.Pipeline;
import dev.jpipeline.SharedRegion;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The child JVMs of a {@code --processes} run, from the parent's side: the shared region they meet in, the
 * children themselves and what they report ({@link ChildReport}).
 * <ul>
 *   <li>The region is a new file under {@code /dev/shm} when that has room, else under {@code java.io.tmpdir},
 *       readable by this user only. Its name is unlinked as soon as every member has mapped it: when a child first
 *       reports {@link ChildReport#MADE}, since the make is collective over every rank of both children, each of
 *       which maps the region before it proposes. The mappings keep the memory until the last child ends, and
 *       nothing opens the file by name after that, so a SIGKILL of the whole process group from then on leaves
 *       nothing in /dev/shm. Before it (the children's start-up), {@link #close} deletes it, and so does a
 *       shutdown hook if this JVM is stopped meanwhile, or a child whose parent is gone; a SIGKILL of every
 *       process in that window still leaves it.</li>
 *   <li>Each child runs this JVM's {@code java} on its class path (or module path), with native access (the
 *       futex waits across processes); its standard output is its report, its standard error is kept for the
 *       message when it fails.</li>
 *   <li>None outlives the run: {@link #close} and the shutdown hook kill those still running, and a child exits by
 *       itself when its standard input, which this JVM holds open, ends.</li>
 *   <li>{@link #run} fails when a child fails or dies, naming it; the others then get {@link #GRACE} to finish
 *       (they learn of a dead peer from the pipeline within about 100 ms) and are killed after it. A child must
 *       make its pipeline within {@link #START_LIMIT}.</li>
 * </ul>
 */
final class ChildProcesses implements AutoCloseable {

    /** How long a child may take from its start to its first pipeline: JVM start-up, class loading, the make. */
    static final Duration START_LIMIT = Duration.ofSeconds(60);
    /** How long the other children may take to finish once one has failed, before they are killed. */
    static final Duration GRACE = Duration.ofSeconds(10);
    /** Lines of a child's standard error kept for the message when it fails. */
    private static final int ERROR_LINES = 5;

    /** Why a run over child JVMs failed, naming each child that failed or was stopped. */
    static final class Failure extends Exception {
        private static final long serialVersionUID = 1L;

        Failure(String message) {
            super(message);
        }
    }

    /** A started child: its process, what it reported, and the tail of its standard error. */
    private record Child(ProcessSide side, Process process, ChildReport report, Deque<String> errors,
                         AtomicReference<String> unreadable, List<Thread> readers) {
    }

    private final Path region;
    private final Map<ProcessSide, Child> children = new EnumMap<>(ProcessSide.class);
    private final AtomicLong progress = new AtomicLong();
    private final Thread cleanup = new Thread(this::stop, "jpipeline-children-cleanup");
    /** Children this JVM killed, with why. */
    private final Map<ProcessSide, String> stopped = new EnumMap<>(ProcessSide.class);
    /** The children in the order in which their end was seen: the first to fail is named first. */
    private final List<Child> ended = new ArrayList<>();

    private ChildProcesses(Path region) {
        this.region = region;
    }

    /**
     * Creates the region, of {@code dataBytes} of data, for children to be started.
     *
     * @throws StreamJob.TooLargeException when no candidate directory has room for it
     * @throws Failure                     when the region cannot be created
     */
    static ChildProcesses create(long dataBytes) throws Failure {
        Path file = regionFile(dataBytes);
        try {
            SharedRegion.create(file, dataBytes, SharedRegion.Sharing.OWNER).close();
        } catch (UncheckedIOException e) {
            throw new Failure(e.getMessage());
        }
        ChildProcesses children = new ChildProcesses(file);
        Runtime.getRuntime().addShutdownHook(children.cleanup);
        return children;
    }

    /** A new file name under /dev/shm when it has room for {@code dataBytes} and the header, else the temp dir. */
    private static Path regionFile(long dataBytes) {
        String name = "jpipeline-" + ProcessHandle.current().pid() + "-" + System.nanoTime() + ".region";
        List<String> full = new ArrayList<>();
        for (String dir : new String[] {"/dev/shm", System.getProperty("java.io.tmpdir")}) {
            Path directory = Path.of(dir);
            if (!Files.isDirectory(directory) || !Files.isWritable(directory)) {
                continue;
            }
            try {
                long free = Files.getFileStore(directory).getUsableSpace();
                if (free >= dataBytes + (1 << 20)) {
                    return directory.resolve(name);
                }
                full.add(directory + " (" + ByteSize.format(free) + " free)");
            } catch (IOException e) {
                full.add(directory + " (" + OutputFile.reason(e) + ")");
            }
        }
        throw new StreamJob.TooLargeException("--processes needs " + ByteSize.format(dataBytes) + " of shared "
            + "memory for the stages, more than " + (full.isEmpty() ? "any writable directory" : String.join(" or ",
            full)) + " has room for; use fewer --stages or a smaller --chunk");
    }

    /** The region's file. */
    Path region() {
        return region;
    }

    /** Bytes the consumers have reported consumed so far. */
    AtomicLong progress() {
        return progress;
    }

    /**
     * What both children reported, and the run's span between them: from the first pipeline handle either made
     * ({@link ChildReport#MADE}) to the later end ({@link ChildReport#ENDED}), in {@code System.nanoTime()}, which
     * the JVMs of one machine share.
     */
    record Reports(ChildReport produced, ChildReport consumed, long start, long end) {
    }

    /**
     * Starts the producers' child, then the consumers' child, each this JVM's command with the hidden
     * {@code command}, its {@code --side} and the {@code --region}, then {@code options} and, for the producers
     * only, {@code producerOptions}; waits for both to end and returns what they reported.
     *
     * @throws Failure when a child cannot be started, failed, died, did not make its pipeline in time, or was
     *                 stopped after another failed: each named with its pid, its exit status and its last words
     */
    Reports run(String command, List<String> options, List<String> producerOptions) throws Failure {
        for (ProcessSide side : ProcessSide.values()) {
            List<String> arguments = new ArrayList<>(List.of(command, "--side", side.toString(), "--region",
                region.toString()));
            arguments.addAll(options);
            if (side == ProcessSide.PRODUCERS) {
                arguments.addAll(producerOptions);
            }
            start(side, arguments);
        }
        Map<ProcessSide, ChildReport> reports = await();
        ChildReport produced = reports.get(ProcessSide.PRODUCERS);
        ChildReport consumed = reports.get(ProcessSide.CONSUMERS);
        long start = Math.min(produced.number(ChildReport.MADE, Long.MAX_VALUE),
            consumed.number(ChildReport.MADE, Long.MAX_VALUE));
        long end = Math.max(produced.number(ChildReport.ENDED, start), consumed.number(ChildReport.ENDED, start));
        return new Reports(produced, consumed, start, end);
    }

    /**
     * Starts the child for {@code side}: this JVM's command with {@code arguments} (a hidden command and its
     * options).
     *
     * @throws Failure when the JVM cannot be started
     */
    private void start(ProcessSide side, List<String> arguments) throws Failure {
        List<String> command = javaCommand();
        command.addAll(arguments);
        Process process;
        try {
            process = new ProcessBuilder(command).start();
        } catch (IOException e) {
            throw new Failure("cannot start the " + side + "' JVM (" + command.getFirst() + "): "
                + OutputFile.reason(e));
        }
        ChildReport report = new ChildReport();
        Deque<String> errors = new ArrayDeque<>();
        AtomicReference<String> unreadable = new AtomicReference<>();
        Thread out = Thread.ofPlatform().daemon().name("jpipeline-" + side + "-out").start(() -> {
            try (BufferedReader lines = process.inputReader()) {
                for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                    try {
                        report.accept(line);
                        if (line.startsWith(ChildReport.PROGRESS + " ")) {
                            progress.set(report.number(ChildReport.PROGRESS, 0));
                        }
                    } catch (IllegalArgumentException e) {
                        unreadable.compareAndSet(null, e.getMessage());
                    }
                }
            } catch (IOException e) {
                unreadable.compareAndSet(null, "its output could not be read: " + e);
            }
        });
        Thread err = Thread.ofPlatform().daemon().name("jpipeline-" + side + "-err").start(() -> {
            try (BufferedReader lines = process.errorReader()) {
                for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                    synchronized (errors) {
                        errors.addLast(line);
                        if (errors.size() > ERROR_LINES) {
                            errors.removeFirst();
                        }
                    }
                }
            } catch (IOException e) {
                // the process is gone; what it wrote before is kept
            }
        });
        synchronized (children) {
            children.put(side, new Child(side, process, report, errors, unreadable, List.of(out, err)));
        }
    }

    /** The command that runs {@link Main} in a new JVM like this one, with native access. */
    private static List<String> javaCommand() {
        String java = ProcessHandle.current().info().command()
            .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        List<String> command = new ArrayList<>(List.of(java));
        String classPath = System.getProperty("java.class.path", "");
        Module module = Main.class.getModule();
        if (module.isNamed()) {
            command.addAll(List.of("--enable-native-access=" + Pipeline.class.getModule().getName(),
                "--module-path", System.getProperty("jdk.module.path", "")));
            if (!classPath.isEmpty()) {
                command.addAll(List.of("--class-path", classPath));
            }
            command.addAll(List.of("--module", module.getName() + "/" + Main.class.getName()));
        } else {
            command.addAll(List.of("--enable-native-access=ALL-UNNAMED", "--class-path", classPath,
                Main.class.getName()));
        }
        return command;
    }

    /**
     * Waits for every child to end and returns their reports.
     *
     * @throws Failure when a child failed, died, did not make its pipeline in time, or was stopped after another
     *                 failed: each named with its pid, its exit status and its last words
     */
    private Map<ProcessSide, ChildReport> await() throws Failure {
        long start = System.nanoTime();
        long graceUntil = Long.MAX_VALUE;
        boolean unlinked = false;
        try {
            for (List<Child> running = running(); !running.isEmpty(); running = running()) {
                running.getFirst().process().waitFor(10, TimeUnit.MILLISECONDS);
                noteEnded();
                long now = System.nanoTime();
                if (!unlinked && all().stream().anyMatch(c -> c.report().text(ChildReport.MADE) != null)) {
                    unlinked = true;                // every rank of both children has mapped it: see the class comment
                    deleteRegion();
                }
                if (graceUntil == Long.MAX_VALUE && failed()) {
                    graceUntil = now + GRACE.toNanos();
                }
                for (Child child : running()) {
                    if (now > graceUntil) {
                        kill(child, "still running " + GRACE.toSeconds() + " s after the other failed");
                    } else if (now - start > START_LIMIT.toNanos() && child.report().text(ChildReport.MADE) == null) {
                        kill(child, "it had not made its pipeline " + START_LIMIT.toSeconds() + " s after its start");
                    }
                }
            }
            noteEnded();
            for (Child child : all()) {
                for (Thread reader : child.readers()) {
                    reader.join(GRACE.toMillis());      // the rest of its output, up to its end
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stop();
            throw new Failure("interrupted while waiting for the child JVMs (stopped them)");
        }
        List<String> problems = new ArrayList<>();
        for (Child child : ended) {
            String problem = problem(child);
            if (problem != null) {
                problems.add(problem);
            }
        }
        if (!problems.isEmpty()) {
            throw new Failure(String.join("; ", problems));
        }
        Map<ProcessSide, ChildReport> reports = new EnumMap<>(ProcessSide.class);
        all().forEach(child -> reports.put(child.side(), child.report()));
        return reports;
    }

    /** Notes the children that have ended since the last look, in {@link #ended}. */
    private void noteEnded() {
        for (Child child : all()) {
            if (!child.process().isAlive() && !ended.contains(child)) {
                ended.add(child);
            }
        }
    }

    /** Whether a child has failed: it ended with a non-zero status, or reported a failure or a line out of protocol. */
    private boolean failed() {
        return all().stream().anyMatch(child -> child.report().text(ChildReport.FAILURE) != null
            || child.unreadable().get() != null || !child.process().isAlive() && child.process().exitValue() != 0);
    }

    /** What went wrong with {@code child}, one sentence naming it, or null when it ended well. */
    private String problem(Child child) {
        Process p = child.process();
        String failure = child.report().text(ChildReport.FAILURE);
        String why = stopped.get(child.side());
        if (why == null && p.exitValue() == 0 && failure == null && child.unreadable().get() == null) {
            return null;
        }
        int status = p.exitValue();
        StringBuilder b = new StringBuilder("the " + child.side() + "' JVM (pid " + p.pid() + ") ");
        b.append(why != null ? "was killed: " + why
            : status > 128 ? "died of signal " + (status - 128) + " (exit status " + status + ")"
            : "exited with status " + status);
        if (failure != null) {
            b.append(": ").append(failure);
        } else if (child.unreadable().get() != null) {
            b.append(": ").append(child.unreadable().get());
        } else if (why == null) {
            synchronized (child.errors()) {
                if (!child.errors().isEmpty()) {
                    b.append(": ").append(String.join(" / ", child.errors()).strip());
                } else if (status <= 128) {
                    b.append(" and printed no message");
                }
            }
        }
        return b.toString();
    }

    private void kill(Child child, String why) {
        stopped.putIfAbsent(child.side(), why);
        child.process().destroyForcibly();
    }

    private List<Child> all() {
        synchronized (children) {
            return List.copyOf(children.values());
        }
    }

    private List<Child> running() {
        return all().stream().filter(child -> child.process().isAlive()).toList();
    }

    /** The children, for the report: "producers in pid 4711, consumers in pid 4712". */
    String describe() {
        return String.join(", ", all().stream().map(c -> c.side() + " in pid " + c.process().pid()).toList());
    }

    /** Kills the children still running and deletes the region: what {@link #close} and the shutdown hook do. */
    private void stop() {
        for (Child child : all()) {
            child.process().destroyForcibly();
        }
        deleteRegion();
    }

    private void deleteRegion() {
        try {
            Files.deleteIfExists(region);
        } catch (IOException e) {
            System.err.println("jpipeline: cannot delete the region " + region + ": " + OutputFile.reason(e));
        }
    }

    /** Kills the children still running, deletes the region, and waits (briefly) for the children's end. */
    @Override
    public void close() {
        stop();
        for (Child child : all()) {
            try {
                child.process().waitFor(GRACE.toMillis(), TimeUnit.MILLISECONDS);
                child.process().getOutputStream().close();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (IOException e) {
                // the pipe is gone with the process
            }
        }
        try {
            Runtime.getRuntime().removeShutdownHook(cleanup);
        } catch (IllegalStateException shuttingDown) {
            // the hook runs anyway
        }
    }
}
