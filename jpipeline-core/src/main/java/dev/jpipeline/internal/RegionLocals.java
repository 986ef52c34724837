package dev.jpipeline.internal;

import dev.jpipeline.internal.wait.Deadlines;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * This process's live handles on the pipelines of one state area of a shared region, whichever
 * {@code PipelineSharedState} object and whichever mapping of the region made them: a waiter's {@link RegionReaper},
 * and every {@link EndedThreadWatch#PERIOD_NANOS} the process's {@link EndedThreadWatch}, leave for those whose
 * thread ended without quit, which no other process can see. A handle is added when it is
 * made and removed when it leaves.
 *
 * <pre>
 * One per region file and state offset in a process. The file is known by its identity (the file system's file key,
 * device and inode on Linux; the absolute path where there is none), not by the SharedRegion object, so that every
 * mapping of one file in a process shares them: a waiter on one mapping must see a handle made over another.
 * Registry: file identity -> (mappings open, offset -> RegionLocals); mapped() counts a mapping in, unmapped()
 * counts it out, and the file's entry goes with its last mapping.
 * Landings: per state and mapping, the copies its handles handed to copy workers that have not finished landing
 * (the landing's arrival, its wake-up call into the mapped memory, the region's own count). They outlive a quit,
 * so unmapped() waits for them: a landing that reached unmapped memory would fail on the worker, and one inside
 * its wake-up call would make the unmapping fail ("session is acquired").
 * </pre>
 */
public final class RegionLocals {

    /** The registry, guarded by itself. */
    private static final Map<Object, MappedFile> FILES = new HashMap<>();

    private static final class MappedFile {
        int mappings;
        final Map<Long, RegionLocals> states = new ConcurrentHashMap<>();
    }

    final List<StageHandle> handles = new CopyOnWriteArrayList<>();
    /** Landings in flight of the handles made over each mapping (its memory's scope) of this state. */
    private final Map<MemorySegment.Scope, AtomicLong> landings = new ConcurrentHashMap<>();

    /** How long unmapped() waits for landings in flight before it refuses. */
    private static final long LANDING_WAIT_NANOS = 1_000_000_000L;

    /** The count of landings in flight of handles made over the mapping whose memory is {@code scope}. */
    AtomicLong landingsIn(MemorySegment.Scope scope) {
        return landings.computeIfAbsent(scope, s -> new AtomicLong());
    }

    /**
     * A new mapping of {@code file}: its identity, which {@link #of} and {@link #unmapped} take.
     */
    public static Object mapped(Path file) {
        Object identity;
        try {
            identity = Files.readAttributes(file, BasicFileAttributes.class).fileKey();
        } catch (IOException e) {
            identity = null;
        }
        if (identity == null) {
            identity = file.toAbsolutePath().normalize();
        }
        synchronized (FILES) {
            FILES.computeIfAbsent(identity, k -> new MappedFile()).mappings++;
        }
        return identity;
    }

    /** This process's handles on the state at {@code offset} of the mapped file {@code identity}. */
    public static RegionLocals of(Object identity, long offset) {
        MappedFile file;
        synchronized (FILES) {
            file = FILES.get(identity);
        }
        if (file == null) {
            throw new IllegalStateException("the region file " + identity + " is not mapped");
        }
        return file.states.computeIfAbsent(offset, o -> new RegionLocals());
    }

    /**
     * The mapping whose memory is {@code scope} is about to close: the handles made over it leave, as if they had
     * quit, if their thread is the caller's or has ended (a handle of the caller's thread quits; see
     * {@link StageHandle#regionClosed}); then the mapping is counted out.
     *
     * @throws IllegalStateException naming them, when handles of other live threads were made over the mapping:
     *                               they must quit first (leaving for a thread that is running could race its
     *                               operations); nothing is counted out then
     */
    public static void unmapped(Object identity, MemorySegment.Scope scope) {
        MappedFile file;
        synchronized (FILES) {
            file = FILES.get(identity);
        }
        List<String> running = new ArrayList<>();
        for (RegionLocals locals : file.states.values()) {
            for (StageHandle handle : locals.handles) {
                if (handle.mappedIn(scope) && !handle.regionClosed()) {
                    running.add(handle.toString() + " of thread '" + handle.ownerName() + "'");
                }
            }
        }
        if (!running.isEmpty()) {
            throw new IllegalStateException("cannot close the region while live threads hold pipelines made over it "
                + "(they must quit first, or their peers would wait for them forever): " + String.join(", ", running));
        }
        awaitLandings(file, scope);
        countOut(file, identity, scope);
    }

    /** Counts the mapping whose memory is {@code scope} out of {@code file}: its landings, then the mapping. */
    private static void countOut(MappedFile file, Object identity, MemorySegment.Scope scope) {
        for (RegionLocals locals : file.states.values()) {
            locals.landings.remove(scope);
        }
        synchronized (FILES) {
            if (--file.mappings == 0) {
                FILES.remove(identity);
            }
        }
    }

    /**
     * The mapping whose memory is {@code scope} is unmapped without {@link #unmapped} (its file was truncated, so
     * its memory can no longer be written): the handles made over it are forgotten without leaving, and the
     * mapping is counted out, so that a file that later gets the same identity (a region created anew at the path,
     * on the freed inode) does not inherit them.
     */
    public static void forget(Object identity, MemorySegment.Scope scope) {
        MappedFile file;
        synchronized (FILES) {
            file = FILES.get(identity);
        }
        if (file == null) {
            return;
        }
        for (RegionLocals locals : file.states.values()) {
            locals.handles.removeIf(handle -> handle.mappedIn(scope));
        }
        countOut(file, identity, scope);
    }

    /**
     * Waits up to {@link #LANDING_WAIT_NANOS} for the landings of copies that handles made over the mapping whose
     * memory is {@code scope} handed off (they outlive a quit).
     *
     * @throws IllegalStateException when some are still in flight then (nothing is closed: close again later)
     */
    private static void awaitLandings(MappedFile file, MemorySegment.Scope scope) {
        String inFlight = Deadlines.pollUntilNone(LANDING_WAIT_NANOS, () -> {
            long count = 0;
            for (RegionLocals locals : file.states.values()) {
                AtomicLong landing = locals.landings.get(scope);
                count += landing == null ? 0 : landing.get();
            }
            return count == 0 ? null : Long.toString(count);
        });
        if (inFlight != null) {
            throw new IllegalStateException("cannot close the region while " + inFlight + " memcpyAsync copies of "
                + "pipelines made over it are still in flight after " + LANDING_WAIT_NANOS / 1_000_000 + " ms (they "
                + "land in its memory): close it again once they have landed");
        }
    }

    /** Every state's live handles of this process, whichever file: a snapshot (EndedThreadWatch). */
    static List<RegionLocals> all() {
        List<RegionLocals> all = new ArrayList<>();
        synchronized (FILES) {
            for (MappedFile file : FILES.values()) {
                all.addAll(file.states.values());
            }
        }
        return all;
    }

    /** Whether no state of any mapped file has a live handle of this process (EndedThreadWatch). */
    static boolean none() {
        for (RegionLocals locals : all()) {
            if (!locals.handles.isEmpty()) {
                return false;
            }
        }
        return true;
    }

    /**
     * Leaves for the handles whose thread ended without quit, as quit would have: run by waiters (RegionReaper),
     * and by every rank of a make before it proposes, so that a pipeline whose threads all ended is no live handle
     * to the next make even if nobody ever waited on it.
     */
    void abandonEnded() {
        for (StageHandle handle : handles) {
            if (handle.ownerEnded()) {
                handle.abandon();
            }
        }
    }
}
