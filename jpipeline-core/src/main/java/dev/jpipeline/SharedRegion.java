package dev.jpipeline;

import dev.jpipeline.internal.RegionFaults;
import dev.jpipeline.internal.RegionGroup;
import dev.jpipeline.internal.RegionLayout;
import dev.jpipeline.internal.RegionLocals;
import dev.jpipeline.internal.RegionMembers;
import dev.jpipeline.internal.wait.Deadlines;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A memory-mapped file that several JVM processes share: the home of {@link ThreadScope#SYSTEM} state and of the
 * data it guards, for example a file under {@code /dev/shm}. It mirrors what CUDA means by system scope: memory
 * that every thread of the system sees (host, devices, and other processes through shared or managed memory). No
 * CUDA counterpart as a class: CUDA code places system-scope objects in such memory itself.
 *
 * <p>A region starts with a versioned header (docs/system-scope.md has the layout), then the data. The header
 * holds the members: each process that {@link #join}s takes a rank, recorded with its pid and start time, so that
 * a process that died is recognised (a reused pid comes with another start time) and its rank can be taken again.
 *
 * <p>Who may use it: a region is created readable and writable by its owner only (mode {@code rw-------}) unless
 * {@link Sharing#GROUP} is asked for ({@code rw-rw----}). Opening a region of another user without group access,
 * or a file that is not a region, fails with an {@link IllegalArgumentException} naming the file and the rule.
 */
public final class SharedRegion implements AutoCloseable {

    /** Who may open a region. */
    public enum Sharing {
        /** The creating user only: mode {@code rw-------}. */
        OWNER,
        /** The creating user and its group: mode {@code rw-rw----}. */
        GROUP
    }

    /** The most members a region's group has: as many as its header has slots for. */
    public static final int MAX_MEMBERS = RegionLayout.SLOTS;

    /** The largest data part: a mapped segment is limited by the address space, not by an int. */
    public static final long MAX_DATA_BYTES = 1L << 40;

    private final Path file;
    private final Arena arena;
    private final MemorySegment region;
    private final MemorySegment data;
    /** The file's identity in this process's registry of pipeline handles (RegionLocals), shared by its mappings. */
    private final Object identity;
    /** Ranks this handle joined: left on close. Guarded by this. */
    private final List<Integer> joined = new ArrayList<>();
    /** Syncs under way in groups joined over this mapping: close waits for them before it unmaps. */
    private final AtomicInteger syncing = new AtomicInteger();
    /** Whether a close has counted this mapping out of RegionLocals (a close that failed after it is retried). */
    private boolean countedOut;

    /** How long close waits for syncs of groups joined over this mapping to end once it left their ranks. */
    private static final long SYNC_WAIT_NANOS = 1_000_000_000L;

    private SharedRegion(Path file, Arena arena, MemorySegment region) {
        this.file = file;
        this.arena = arena;
        this.region = region;
        this.data = region.asSlice(RegionLayout.HEADER_BYTES);
        this.identity = RegionLocals.mapped(file);
    }

    /**
     * Creates a region file of a header and {@code dataBytes} of data, and maps it.
     *
     * @param file      the file to create; it must not exist
     * @param dataBytes the data part's size, 0 to {@link #MAX_DATA_BYTES}
     * @param sharing   who may open it
     * @return the mapped region; close it to unmap
     * @throws IllegalArgumentException when {@code dataBytes} is out of range, or the file exists
     * @throws UncheckedIOException     when the file cannot be created or mapped; a permission denied names the
     *                                  folder this user cannot enter or write, its owner and mode
     */
    public static SharedRegion create(Path file, long dataBytes, Sharing sharing) {
        Objects.requireNonNull(file, "file");
        Objects.requireNonNull(sharing, "sharing");
        if (dataBytes < 0 || dataBytes > MAX_DATA_BYTES) {
            throw new IllegalArgumentException("a region's data has 0.." + MAX_DATA_BYTES + " bytes, got " + dataBytes);
        }
        Set<PosixFilePermission> mode = PosixFilePermissions.fromString(sharing == Sharing.OWNER ? "rw-------"
            : "rw-rw----");
        try {
            Files.createFile(file, PosixFilePermissions.asFileAttribute(mode));
            Files.setPosixFilePermissions(file, mode);          // the umask may have taken group bits away
        } catch (FileAlreadyExistsException e) {
            throw new IllegalArgumentException("cannot create region " + file + ": the file exists (open it, or "
                + "delete it first)", e);
        } catch (AccessDeniedException e) {
            throw new UncheckedIOException("cannot create region " + file + ": " + denied(file, true), e);
        } catch (IOException e) {
            deleteQuietly(file, e);
            throw new UncheckedIOException("cannot create region " + file + ": " + e.getMessage(), e);
        }
        Arena arena = Arena.ofShared();
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            MemorySegment region = channel.map(FileChannel.MapMode.READ_WRITE, 0,
                RegionLayout.HEADER_BYTES + dataBytes, arena);
            RegionLayout.format(region);
            return new SharedRegion(file, arena, region);
        } catch (IOException | RuntimeException e) {
            arena.close();
            deleteQuietly(file, e);                 // a file that never became a region must not block the next create
            throw e instanceof IOException io ? new UncheckedIOException("cannot map region " + file + ": "
                + io.getMessage(), io) : (RuntimeException) e;
        }
    }

    /**
     * Opens and maps an existing region, checking its header.
     *
     * @param file the region's file
     * @return the mapped region; close it to unmap
     * @throws IllegalArgumentException when the file does not exist, belongs to another user without group access,
     *                                  cannot be read and written (naming its mode), lies below a folder this user
     *                                  cannot enter (naming the folder, its owner and mode), or is not a region of this
     *                                  layout version (wrong magic, wrong version, wrong size, truncated)
     * @throws UncheckedIOException     when the file cannot be mapped
     */
    public static SharedRegion open(Path file) {
        Objects.requireNonNull(file, "file");
        checkAccess(file);
        Arena arena = Arena.ofShared();
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            awaitFormatting(channel);
            MemorySegment region = channel.map(FileChannel.MapMode.READ_WRITE, 0, channel.size(), arena);
            RegionLayout.check(region, "region " + file);
            return new SharedRegion(file, arena, region);
        } catch (AccessDeniedException e) {
            arena.close();
            throw new IllegalArgumentException("cannot open region " + file + ": " + denied(file, false), e);
        } catch (IOException e) {
            arena.close();
            throw new UncheckedIOException("cannot map region " + file + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    /**
     * A region being created is empty, then sized in one step and formatted, its magic last: an open that finds
     * the file empty, or sized with no magic yet, waits for the creator up to {@link #CREATION_WAIT_NANOS} before
     * judging it (a file still blank then is refused by the header check as not a region). Any other file is
     * judged at once.
     */
    private static void awaitFormatting(FileChannel channel) throws IOException {
        long deadline = System.nanoTime() + CREATION_WAIT_NANOS;
        java.nio.ByteBuffer magic = java.nio.ByteBuffer.allocate(Long.BYTES);
        for (;;) {
            long size = channel.size();
            magic.clear();
            boolean beingCreated = size == 0 || size >= RegionLayout.HEADER_BYTES
                && channel.read(magic, 0) == Long.BYTES && magic.getLong(0) == 0;
            if (!beingCreated || System.nanoTime() - deadline >= 0) {
                return;
            }
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
        }
    }

    /** How long an open waits for a region's creator to finish formatting it. */
    private static final long CREATION_WAIT_NANOS = 2_000_000_000L;

    /** Deletes a file whose creation failed; a failure to delete is added to {@code cause}. */
    private static void deleteQuietly(Path file, Exception cause) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            cause.addSuppressed(e);
        }
    }

    /** Refuses a file that does not exist, or that the region rules do not let this user join. */
    private static void checkAccess(Path file) {
        PosixFileAttributes attributes;
        try {
            attributes = Files.readAttributes(file, PosixFileAttributes.class);
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException("cannot open region " + file + ": no such file", e);
        } catch (AccessDeniedException e) {
            throw new IllegalArgumentException("cannot open region " + file + ": " + denied(file, false), e);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open region " + file + ": " + e.getMessage(), e);
        }
        if (!attributes.isRegularFile()) {
            throw new IllegalArgumentException("cannot open region " + file + ": not a regular file");
        }
        String me = System.getProperty("user.name");
        Set<PosixFilePermission> perms = attributes.permissions();
        boolean groupAccess = perms.contains(PosixFilePermission.GROUP_READ)
            && perms.contains(PosixFilePermission.GROUP_WRITE);
        if (!attributes.owner().getName().equals(me) && !groupAccess) {
            throw new IllegalArgumentException("cannot open region " + file + ": it belongs to user "
                + attributes.owner().getName() + " with mode " + PosixFilePermissions.toString(perms) + ", so only "
                + "its owner may join (create it with Sharing.GROUP to share it with a group)");
        }
    }

    /**
     * Why the system denied this user {@code file}: the first folder above it that this user cannot enter (search,
     * the x bit), or, to create it, its folder when this user cannot write there; each named with its owner and mode.
     */
    private static String denied(Path file, boolean creating) {
        String me = System.getProperty("user.name");
        Path absolute = file.toAbsolutePath();
        Path folder = absolute.getParent();
        for (int i = 1; folder != null && i <= folder.getNameCount(); i++) {
            Path d = folder.getRoot().resolve(folder.subpath(0, i));
            if (!Files.isExecutable(d)) {
                return "permission denied: user " + me + " cannot enter the folder " + d + " (" + mode(d) + "): "
                    + "a region's folder, and every folder above it, must be searchable (x) by the user of each "
                    + "process that creates or opens it";
            }
        }
        if (creating && folder != null && !Files.isWritable(folder)) {
            return "permission denied: user " + me + " cannot create files in the folder " + folder + " ("
                + mode(folder) + "): a region's creator must be able to write its folder";
        }
        return "permission denied to user " + me + " (" + mode(file) + ")";
    }

    private static String mode(Path file) {
        try {
            PosixFileAttributes a = Files.readAttributes(file, PosixFileAttributes.class);
            return "owner " + a.owner().getName() + ", mode " + PosixFilePermissions.toString(a.permissions());
        } catch (IOException e) {
            return "mode unknown: " + e.getMessage();
        }
    }

    /**
     * Joins the region's group as rank {@code rank} of {@code groupSize}: records this process (pid and start
     * time) in the rank's slot. The first join fixes the group's size. A member's death, or its leaving while
     * others live, breaks its group: the survivors' syncs fail naming it (a rank not joined yet is waited for).
     * A member that died before every rank of its group joined is named to each rank that comes after (its join
     * fails), and to any joiner of another size. Once every rank has come (joined, or been told) and none lives,
     * the region takes a new group of any size (a region left behind by a crash can be reopened). Every member
     * must be in the same pid namespace: a pid of another names no process here.
     *
     * @param groupSize the group's size, 1 to {@link #MAX_MEMBERS}
     * @param rank      this member's rank, 0 to {@code groupSize - 1}
     * @return this member's view of the group: {@code size()} and {@code threadRank()} as joined, and a
     *         {@code sync()} that waits for every member of every process (and throws an
     *         {@link IllegalStateException} naming a member that died or left before arriving)
     * @throws IllegalArgumentException when the size or the rank is out of range, or the region's live group has
     *                                  another size (naming both and the live members)
     * @throws IllegalStateException    when a live process holds the rank (naming its pid); when a member of the
     *                                  group died while other members live, or before every rank joined (naming
     *                                  its rank and pid, and the ranks not told yet); when a member is in
     *                                  another pid namespace (naming it and both namespaces); or when the region's
     *                                  file was truncated by another process while mapped here (the region is lost)
     */
    public synchronized Group join(int groupSize, int rank) {
        if (groupSize < 1 || groupSize > RegionLayout.SLOTS || rank < 0 || rank >= groupSize) {
            throw new IllegalArgumentException("a region's group has 1.." + RegionLayout.SLOTS + " members and "
                + "ranks 0..size-1, got rank " + rank + " of " + groupSize);
        }
        try {
            long epoch = RegionMembers.join(region, "region " + file, groupSize, rank);
            joined.add(rank);
            return new RegionGroup(region, "region " + file, groupSize, rank, epoch, syncing);
        } catch (InternalError fault) {
            throw RegionFaults.lost(fault, "join of region " + file, file, region.byteSize());
        }
    }

    /**
     * Describes the members: each rank's process and whether it lives.
     *
     * @return one line per rank of the current group, or "no group" when nobody has joined
     */
    public String members() {
        try {
            return RegionMembers.describe(region);
        } catch (InternalError fault) {
            throw RegionFaults.lost(fault, "members of region " + file, file, region.byteSize());
        }
    }

    /**
     * The data part: the region after its header, the same bytes in every process that maps the file.
     *
     * @return the data, 16-byte aligned (page aligned); valid until {@link #close()}
     */
    public MemorySegment data() {
        return data;
    }

    /** This process's handles on the pipelines of the state at {@code offset} of the data. */
    RegionLocals locals(long offset) {
        return RegionLocals.of(identity, offset);
    }

    /**
     * The region's file.
     *
     * @return the path it was created or opened with
     */
    public Path file() {
        return file;
    }

    /**
     * Quits the pipelines made over this mapping by the calling thread (and by threads that have ended) that have
     * not quit, as {@code quit()} would: their peers go on, or are told that this rank's region was closed without
     * quit. Then waits up to a second for {@code memcpyAsync} copies that pipelines made over this mapping handed
     * to copy workers and that have not landed yet (a copy outlives its producer's quit, and lands in this memory),
     * leaves every rank this handle joined, waits up to a second for other threads of this process that are in a
     * {@code sync()} of those groups (having lost their rank, they fail with an {@link IllegalStateException}
     * within about 100 ms), and unmaps the region.
     *
     * @throws IllegalStateException naming them, when other live threads hold pipelines made over this mapping
     *                               that they have not quit (nothing is closed then: they must quit first); or when
     *                               copies are still in flight after the second (nothing is unmapped then: close
     *                               again once they have landed); or when syncs are still under way after their
     *                               second (the ranks are left, nothing is unmapped: close again once they have
     *                               returned); or when the region's file was truncated by another process while
     *                               mapped here (the region is unmapped all the same)
     */
    @Override
    public synchronized void close() {
        if (!arena.scope().isAlive()) {
            return;
        }
        try {
            if (!countedOut) {
                RegionLocals.unmapped(identity, arena.scope());
                countedOut = true;
            }
            for (int rank : joined) {
                RegionMembers.leave(region, rank);
            }
        } catch (InternalError fault) {
            joined.clear();
            if (!countedOut) {
                RegionLocals.forget(identity, arena.scope());   // its handles can never leave: forget them
                countedOut = true;
            }
            arena.close();                  // a truncated region is unmapped all the same: nothing of it is usable
            throw RegionFaults.lost(fault, "close of region " + file, file, region.byteSize());
        }
        joined.clear();
        // a thread of this process in a sync of a group joined here sleeps in a futex call that holds the mapping,
        // and reads it between sleeps: its ranks are left, so its sync fails at its next look (within 100 ms)
        String inSync = Deadlines.pollUntilNone(SYNC_WAIT_NANOS, () -> syncing.get() == 0 ? null
            : Integer.toString(syncing.get()));
        if (inSync != null) {
            throw new IllegalStateException("cannot unmap region " + file + " while " + inSync + " threads of this "
                + "process wait in a sync of a group joined over it (its ranks are left): close again once they "
                + "have returned");
        }
        arena.close();
    }

    @Override
    public String toString() {
        return "SharedRegion[" + file + ", " + data.byteSize() + " data bytes]";
    }
}
