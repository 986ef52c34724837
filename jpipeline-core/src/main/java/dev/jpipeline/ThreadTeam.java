package dev.jpipeline;

import dev.jpipeline.internal.wait.Deadlines;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A fixed team of {@code size} Java threads that act as one {@link Group}: the ready-made group for
 * pipelines on ordinary (platform or virtual) threads, in the role that
 * {@code cooperative_groups::this_thread_block()} plays in a CUDA kernel.
 *
 * <p>{@link #member(int)} gives the view of the thread with that rank; {@link Group#sync()} is a reusable
 * barrier over the whole team. {@link #run(Duration, Consumer)} starts one thread per rank, hands each its view,
 * and waits for all of them:
 *
 * <pre>{@code
 * PipelineSharedState state = PipelineSharedState.create(ThreadScope.BLOCK, 4);
 * ThreadTeam.ofPlatform(4).run(Duration.ofSeconds(10), group -> {
 *     try (Pipeline pipe = Pipeline.make(group, state, 2)) {   // ranks 0 and 1 produce
 *         ...
 *     }
 * });
 * }</pre>
 */
public final class ThreadTeam {

    private final int size;
    private final ThreadFactory factory;
    private final Barrier syncBarrier;
    private final Group[] members;

    private ThreadTeam(int size, ThreadFactory factory) {
        if (size < 1 || size > Barrier.max()) {
            throw new IllegalArgumentException("team size must be in 1.." + Barrier.max() + ", got " + size);
        }
        this.size = size;
        this.factory = factory;
        this.syncBarrier = new Barrier(size);
        this.members = new Group[size];
        for (int rank = 0; rank < size; rank++) {
            members[rank] = new Member(rank);
        }
    }

    /**
     * A team whose {@link #run} uses platform threads (daemon threads, named {@code jpipeline-team-<rank>}).
     *
     * @param size the number of threads, at least 1
     * @return a new team
     */
    public static ThreadTeam ofPlatform(int size) {
        return new ThreadTeam(size, Thread.ofPlatform().daemon().name("jpipeline-team-", 0).factory());
    }

    /**
     * A team whose {@link #run} uses virtual threads.
     *
     * @param size the number of threads, at least 1
     * @return a new team
     */
    public static ThreadTeam ofVirtual(int size) {
        return new ThreadTeam(size, Thread.ofVirtual().name("jpipeline-vteam-", 0).factory());
    }

    /**
     * The number of threads in the team.
     *
     * @return the team size
     */
    public int size() {
        return size;
    }

    /**
     * The group view of the thread with rank {@code rank}: hand it to exactly one thread.
     *
     * @param rank the rank, in {@code 0..size-1}
     * @return that rank's view of the team
     * @throws IllegalArgumentException when {@code rank} is outside {@code 0..size-1}
     */
    public Group member(int rank) {
        if (rank < 0 || rank >= size) {
            throw new IllegalArgumentException("team rank must be in 0.." + (size - 1) + ", got " + rank);
        }
        return members[rank];
    }

    /**
     * Runs {@code body} once per rank, each on its own new thread with that rank's view, and waits up to
     * {@code timeout} for all of them.
     *
     * <p>Memory consistency effects: actions of the caller before {@code run} <i>happen-before</i> actions of each
     * thread it starts, and every action of those threads <i>happens-before</i> {@code run} returns.
     *
     * @param timeout the longest time to wait for every thread
     * @param body    what each thread runs, given its rank's view
     * @throws IllegalArgumentException when {@code timeout} is negative (a huge one is clamped)
     * @throws TeamFailure when a thread throws (the first failure is the cause, the others are suppressed), or
     *                     when threads are still running after {@code timeout}; a thread that fails does not
     *                     make {@code run} wait for the others up to the timeout
     */
    public void run(Duration timeout, Consumer<Group> body) {
        Objects.requireNonNull(timeout, "timeout");
        Objects.requireNonNull(body, "body");
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("team run timeout must not be negative, got " + timeout);
        }
        // a timeout of centuries is clamped to about 146 years, so that deadline differences never wrap around
        long deadline = System.nanoTime() + Math.min(Deadlines.saturatedNanos(timeout), Long.MAX_VALUE / 2);
        List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
        java.util.concurrent.CountDownLatch finished = new java.util.concurrent.CountDownLatch(size);
        Thread[] threads = new Thread[size];
        for (int rank = 0; rank < size; rank++) {
            Group member = members[rank];
            threads[rank] = factory.newThread(() -> {
                try {
                    body.accept(member);
                } catch (Throwable t) {
                    failures.add(new TeamFailure("rank " + member.threadRank() + " failed: " + t, t));
                    while (finished.getCount() > 0) {
                        finished.countDown();   // fail fast: peers may now wait forever for this rank
                    }
                } finally {
                    finished.countDown();
                }
            });
        }
        for (Thread t : threads) {
            t.start();
        }
        boolean done;
        try {
            done = finished.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TeamFailure("interrupted while waiting for the team", e);
        }
        if (!failures.isEmpty()) {
            TeamFailure first;
            synchronized (failures) {
                first = (TeamFailure) failures.getFirst();
                failures.stream().skip(1).forEach(first::addSuppressed);
            }
            throw first;
        }
        if (!done) {
            List<String> running = new ArrayList<>();
            for (int rank = 0; rank < size; rank++) {
                if (threads[rank].isAlive()) {
                    running.add("rank " + rank + " in " + topFrame(threads[rank]));
                }
            }
            throw new TeamFailure("team of " + size + " did not finish within " + timeout + ": " + running, null);
        }
        for (Thread t : threads) {
            try {
                t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new TeamFailure("interrupted while joining the team", e);
            }
        }
    }

    /** The first frame of {@code t}'s stack outside the JDK and jpipeline's internals (package-private: tests). */
    static String topFrame(Thread t) {
        StackTraceElement[] stack = t.getStackTrace();
        for (StackTraceElement e : stack) {
            if (!e.getClassName().startsWith("java.") && !e.getClassName().startsWith("jdk.")
                && !e.getClassName().startsWith("dev.jpipeline.internal.")) {
                return e.toString();
            }
        }
        return stack.length > 0 ? stack[0].toString() : "(no stack)";
    }

    /** Thrown by {@link #run} when a member thread fails or the team does not finish in time. */
    public static final class TeamFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        TeamFailure(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** One rank's view of the team. */
    private final class Member implements Group {
        private final int rank;

        Member(int rank) {
            this.rank = rank;
        }

        @Override
        public int size() {
            return size;
        }

        @Override
        public int threadRank() {
            return rank;
        }

        @Override
        public void sync() {
            syncBarrier.arriveAndWait();
        }

        @Override
        public String toString() {
            return "ThreadTeam member " + rank + " of " + size;
        }
    }
}
