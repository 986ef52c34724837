package dev.jpipeline;

import dev.jpipeline.copy.CopyEngine;
import dev.jpipeline.internal.ApiAccess;
import dev.jpipeline.internal.copy.CopyService;
import dev.jpipeline.internal.checked.Interleaver;
import dev.jpipeline.internal.PhaseBarrier;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.util.Objects;

/**
 * Asynchronous copies whose completion is tracked by a pipeline stage or a barrier phase: mirrors
 * {@code cuda::memcpy_async}, thread and group forms, with a {@code size_t} or {@code aligned_size_t} size.
 *
 * <p>Each call copies {@code bytes} bytes from the start of {@code src} to the start of {@code dst} (slice
 * the segments for offsets; {@code MemorySegment.ofArray(...)} wraps heap arrays). With a pipeline, the copy
 * belongs to the calling thread's acquired head stage: consumers of that stage see the data once their
 * {@code consumerWait} returns. With a barrier, the copy belongs to the barrier's current phase.
 *
 * <p>The group form is cooperative: every thread of {@code group} calls it with the same arguments, and each
 * copies its own contiguous share (rank r copies the r-th of {@code size} alignment-preserving slices), like
 * CUDA's device path, which spreads the copy over the group's ranks. (CUDA's host path has rank 0 copy it all.)
 *
 * <p>Checked rules (undefined behaviour in CUDA; {@link IllegalArgumentException} here): {@code bytes} not
 * negative and within both segments; the destination writable; both segments alive (their arena not closed) and
 * accessible from the copy engine's threads (not of a confined arena: use {@code Arena.ofShared()} or
 * {@code Arena.ofAuto()}), whatever the size; source and destination ranges not overlapping (adjacent is fine);
 * with an {@link AlignedSize}, both segments aligned to its alignment. Copying into a pipeline needs an active
 * handle that has acquired its head stage ({@link IllegalStateException}); a closed copy engine refuses copies of
 * every size ({@link IllegalStateException}).
 *
 * <p>Copies no larger than the copy engine's inline threshold (64 KiB by default) are performed by the calling
 * thread before the call returns ({@link AsyncContractFulfillment#NONE}); larger ones run on the pipeline's
 * {@link CopyEngine} ({@link AsyncContractFulfillment#ASYNC}), while the caller goes on, unless the shared
 * state's {@link CopyPolicy} has the calling thread copy them itself ({@code NONE}): by default a partitioned
 * pipeline's producer does so on a machine with no more processors than twice the pipeline's threads, where a
 * worker copying while the producer only waits would be one busy thread too many. Reads from a file, whatever
 * their size, run on the engine unless the policy is {@code ON_ISSUING_THREAD}. Either way the stage (or barrier
 * phase) cannot complete before the copy has landed, as with {@code cp.async.mbarrier.arrive}; until then the
 * caller must not touch the destination or change the source. A copy that fails (a file read error) completes its
 * stage exceptionally: the consumers' wait throws {@link StageFailedException} with the cause.
 *
 * <p>In checked mode ({@link PipelineSharedState.Builder#checked(long)}, {@link CopyEngine#checked(long)}), a copy
 * into a pipeline of any size is held back ({@link AsyncContractFulfillment#ASYNC}) and its destination holds a
 * poison pattern until a wait for its stage needs it: a read that no wait covers reads poison every time.
 *
 * <p>Memory consistency effects: the copy's writes happen-before actions of any thread after its wait for the
 * stage (or barrier phase) the copy belongs to.
 */
public final class MemcpyAsync {

    private MemcpyAsync() {
    }

    /**
     * {@code cuda::memcpy_async(dst, src, size, pipe)}.
     *
     * @param dst   where the bytes go (its start)
     * @param src   where they come from (its start)
     * @param bytes how many bytes, 0 or more, within both segments
     * @param pipe  the calling thread's pipeline handle, with its head stage acquired: the stage the copy belongs to
     * @return {@link AsyncContractFulfillment#NONE} when the copy was done before the return, else
     *         {@link AsyncContractFulfillment#ASYNC}
     * @throws IllegalArgumentException when a checked rule of the class description is broken
     * @throws IllegalStateException    when the handle has not acquired its head stage or has quit, or the copy engine is closed
     */
    public static AsyncContractFulfillment memcpyAsync(MemorySegment dst, MemorySegment src, long bytes,
                                                       Pipeline pipe) {
        return intoPipeline(null, dst, src, bytes, 1, pipe);
    }

    /**
     * {@code cuda::memcpy_async(dst, src, aligned_size_t<A>(size), pipe)}.
     *
     * @param dst   where the bytes go (its start)
     * @param src   where they come from (its start)
     * @param bytes how many bytes, with the promise that they and both segments are aligned to its alignment
     * @param pipe  the calling thread's pipeline handle, with its head stage acquired: the stage the copy belongs to
     * @return {@link AsyncContractFulfillment#NONE} when the copy was done before the return, else
     *         {@link AsyncContractFulfillment#ASYNC}
     * @throws IllegalArgumentException when a checked rule of the class description is broken
     * @throws IllegalStateException    when the handle has not acquired its head stage or has quit, or the copy engine is closed
     */
    public static AsyncContractFulfillment memcpyAsync(MemorySegment dst, MemorySegment src, AlignedSize bytes,
                                                       Pipeline pipe) {
        return intoPipeline(null, dst, src, bytes.bytes(), bytes.alignment(), pipe);
    }

    /**
     * {@code cuda::memcpy_async(group, dst, src, size, pipe)}: cooperative, every thread of {@code group} calls it with the same arguments.
     *
     * @param group the threads that share the copy; each copies its own slice
     * @param dst   where the bytes go (its start)
     * @param src   where they come from (its start)
     * @param bytes how many bytes, 0 or more, within both segments
     * @param pipe  the calling thread's pipeline handle, with its head stage acquired: the stage the copy belongs to
     * @return {@link AsyncContractFulfillment#NONE} when the copy was done before the return, else
     *         {@link AsyncContractFulfillment#ASYNC}
     * @throws IllegalArgumentException when a checked rule of the class description is broken
     * @throws IllegalStateException    when the handle has not acquired its head stage or has quit, or the copy engine is closed
     */
    public static AsyncContractFulfillment memcpyAsync(Group group, MemorySegment dst, MemorySegment src,
                                                       long bytes, Pipeline pipe) {
        return intoPipeline(Objects.requireNonNull(group, "group"), dst, src, bytes, 1, pipe);
    }

    /**
     * {@code cuda::memcpy_async(group, dst, src, aligned_size_t<A>(size), pipe)}: cooperative, every thread of {@code group} calls it with the same arguments.
     *
     * @param group the threads that share the copy; each copies its own slice
     * @param dst   where the bytes go (its start)
     * @param src   where they come from (its start)
     * @param bytes how many bytes, with the promise that they and both segments are aligned to its alignment
     * @param pipe  the calling thread's pipeline handle, with its head stage acquired: the stage the copy belongs to
     * @return {@link AsyncContractFulfillment#NONE} when the copy was done before the return, else
     *         {@link AsyncContractFulfillment#ASYNC}
     * @throws IllegalArgumentException when a checked rule of the class description is broken
     * @throws IllegalStateException    when the handle has not acquired its head stage or has quit, or the copy engine is closed
     */
    public static AsyncContractFulfillment memcpyAsync(Group group, MemorySegment dst, MemorySegment src,
                                                       AlignedSize bytes, Pipeline pipe) {
        return intoPipeline(Objects.requireNonNull(group, "group"), dst, src, bytes.bytes(), bytes.alignment(),
            pipe);
    }

    /**
     * {@code cuda::memcpy_async(dst, src, size, barrier)}.
     *
     * @param dst     where the bytes go (its start)
     * @param src     where they come from (its start)
     * @param bytes   how many bytes, 0 or more, within both segments
     * @param barrier the barrier whose current phase the copy belongs to
     * @return {@link AsyncContractFulfillment#NONE} when the copy was done before the return, else
     *         {@link AsyncContractFulfillment#ASYNC}
     * @throws IllegalArgumentException when a checked rule of the class description is broken
     * @throws IllegalStateException    when the copy engine is closed
     */
    public static AsyncContractFulfillment memcpyAsync(MemorySegment dst, MemorySegment src, long bytes,
                                                       Barrier barrier) {
        return intoBarrier(null, dst, src, bytes, 1, barrier);
    }

    /**
     * {@code cuda::memcpy_async(dst, src, aligned_size_t<A>(size), barrier)}.
     *
     * @param dst     where the bytes go (its start)
     * @param src     where they come from (its start)
     * @param bytes   how many bytes, with the promise that they and both segments are aligned to its alignment
     * @param barrier the barrier whose current phase the copy belongs to
     * @return {@link AsyncContractFulfillment#NONE} when the copy was done before the return, else
     *         {@link AsyncContractFulfillment#ASYNC}
     * @throws IllegalArgumentException when a checked rule of the class description is broken
     * @throws IllegalStateException    when the copy engine is closed
     */
    public static AsyncContractFulfillment memcpyAsync(MemorySegment dst, MemorySegment src, AlignedSize bytes,
                                                       Barrier barrier) {
        return intoBarrier(null, dst, src, bytes.bytes(), bytes.alignment(), barrier);
    }

    /**
     * {@code cuda::memcpy_async(group, dst, src, size, barrier)}: cooperative, every thread of {@code group} calls it with the same arguments.
     *
     * @param group   the threads that share the copy; each copies its own slice
     * @param dst     where the bytes go (its start)
     * @param src     where they come from (its start)
     * @param bytes   how many bytes, 0 or more, within both segments
     * @param barrier the barrier whose current phase the copy belongs to
     * @return {@link AsyncContractFulfillment#NONE} when the copy was done before the return, else
     *         {@link AsyncContractFulfillment#ASYNC}
     * @throws IllegalArgumentException when a checked rule of the class description is broken
     * @throws IllegalStateException    when the copy engine is closed
     */
    public static AsyncContractFulfillment memcpyAsync(Group group, MemorySegment dst, MemorySegment src,
                                                       long bytes, Barrier barrier) {
        return intoBarrier(Objects.requireNonNull(group, "group"), dst, src, bytes, 1, barrier);
    }

    /**
     * {@code cuda::memcpy_async(group, dst, src, aligned_size_t<A>(size), barrier)}: cooperative, every thread of {@code group} calls it with the same arguments.
     *
     * @param group   the threads that share the copy; each copies its own slice
     * @param dst     where the bytes go (its start)
     * @param src     where they come from (its start)
     * @param bytes   how many bytes, with the promise that they and both segments are aligned to its alignment
     * @param barrier the barrier whose current phase the copy belongs to
     * @return {@link AsyncContractFulfillment#NONE} when the copy was done before the return, else
     *         {@link AsyncContractFulfillment#ASYNC}
     * @throws IllegalArgumentException when a checked rule of the class description is broken
     * @throws IllegalStateException    when the copy engine is closed
     */
    public static AsyncContractFulfillment memcpyAsync(Group group, MemorySegment dst, MemorySegment src,
                                                       AlignedSize bytes, Barrier barrier) {
        return intoBarrier(Objects.requireNonNull(group, "group"), dst, src, bytes.bytes(), bytes.alignment(),
            barrier);
    }

    /**
     * Reads {@code bytes} bytes of {@code channel}, from file position {@code position}, into the start of
     * {@code dst}, asynchronously, as part of the calling thread's acquired head stage: the file-source form of
     * {@code memcpy_async} (no CUDA counterpart). Positional reads: the channel's own position is neither used
     * nor changed, so several producers can read one channel. The read runs on the copy engine, so that the
     * producer never blocks on I/O, unless the shared state's {@link CopyPolicy} is
     * {@link CopyPolicy#ON_ISSUING_THREAD}, where the calling thread reads; either way an I/O error, or the file
     * ending first, completes the stage exceptionally ({@link StageFailedException} in the consumers' wait).
     *
     * @param dst      where the bytes go (its start)
     * @param channel  the file to read
     * @param position the file position of the first byte, 0 or more
     * @param bytes    how many bytes, 0 or more, at most {@code dst}'s size
     * @param pipe     the calling thread's pipeline handle, with its head stage acquired
     * @return {@link AsyncContractFulfillment#ASYNC}, or {@link AsyncContractFulfillment#NONE} when the shared
     *         state's {@link CopyPolicy} had the calling thread read (the read has then landed, or failed its stage)
     * @throws IllegalArgumentException when {@code bytes} or {@code position} is negative, {@code bytes} exceeds
     *                                  {@code dst}, or {@code dst} is read-only
     * @throws IllegalStateException    when the pipeline handle may not copy (see the class description)
     */
    public static AsyncContractFulfillment memcpyAsync(MemorySegment dst, FileChannel channel, long position,
                                                       long bytes, Pipeline pipe) {
        Objects.requireNonNull(dst, "dst");
        Objects.requireNonNull(channel, "channel");
        Objects.requireNonNull(pipe, "pipe");
        if (bytes < 0 || position < 0) {
            throw new IllegalArgumentException("memcpy_async from a file needs bytes >= 0 and position >= 0, got "
                + bytes + " bytes at position " + position);
        }
        checkDestination(dst, bytes);
        checkUsable(dst, "destination");
        return pipe.handle().read(slice(dst, 0, bytes), channel, position);
    }

    private static AsyncContractFulfillment intoPipeline(Group group, MemorySegment dst, MemorySegment src,
                                                         long bytes, long alignment, Pipeline pipe) {
        Objects.requireNonNull(pipe, "pipe");
        validate(dst, src, bytes, alignment);
        long from = shareStart(group, bytes, alignment);
        long length = shareEnd(group, bytes, alignment) - from;
        return pipe.handle().copy(slice(dst, from, length), slice(src, from, length));
    }

    private static AsyncContractFulfillment intoBarrier(Group group, MemorySegment dst, MemorySegment src,
                                                        long bytes, long alignment, Barrier barrier) {
        Objects.requireNonNull(barrier, "barrier");
        validate(dst, src, bytes, alignment);
        long from = shareStart(group, bytes, alignment);
        long length = shareEnd(group, bytes, alignment) - from;
        PhaseBarrier phases = barrier.phases();
        phases.checkNotCompleting("memcpy_async");
        Interleaver checked = Interleaver.current();
        CopyService shared = ApiAccess.copies(CopyEngine.shared());
        CopyService copies = checked == null ? shared : checked.copies(shared);
        return copies.copyInto(slice(dst, from, length), slice(src, from, length), phases, phases, false);                             // a barrier's thread goes on to other work: the engine copies
    }

    /** Checks the rules of the class description. */
    private static void validate(MemorySegment dst, MemorySegment src, long bytes, long alignment) {
        Objects.requireNonNull(dst, "dst");
        Objects.requireNonNull(src, "src");
        if (bytes < 0) {
            throw new IllegalArgumentException("memcpy_async byte count must not be negative, got " + bytes);
        }
        checkUsable(dst, "destination");
        checkUsable(src, "source");
        checkDestination(dst, bytes);
        if (bytes > src.byteSize()) {
            throw new IllegalArgumentException("memcpy_async of " + bytes + " bytes runs past the end of the "
                + "source (" + src.byteSize() + " bytes)");
        }
        if (dst.maxByteAlignment() < alignment || src.maxByteAlignment() < alignment) {
            throw new IllegalArgumentException("memcpy_async with AlignedSize alignment " + alignment
                + " needs both segments " + alignment + "-byte aligned; destination alignment is "
                + dst.maxByteAlignment() + ", source alignment is " + src.maxByteAlignment());
        }
        if (bytes > 0 && overlap(dst, src, bytes)) {
            throw new IllegalArgumentException("memcpy_async source and destination overlap: " + bytes
                + " bytes at " + describe(src) + " and at " + describe(dst));
        }
    }

    /** Whether the first {@code bytes} bytes of the two segments overlap (adjacent ranges do not). */
    private static boolean overlap(MemorySegment a, MemorySegment b, long bytes) {
        if (a.isNative() && b.isNative()) {      // the common case, without allocating slices
            return a.address() < b.address() + bytes && b.address() < a.address() + bytes;
        }
        return a.asSlice(0, bytes).asOverlappingSlice(b.asSlice(0, bytes)).isPresent();
    }

    /*
     * A cooperative copy is cut into size() contiguous shares of whole alignment units; rank r copies the r-th.
     * Contiguous shares (rather than CUDA's interleaved 16-byte chunks) keep each thread's copy one bulk
     * MemorySegment.copy, or one engine submission, which is what makes the group form fast on the JVM.
     */

    /** Where the calling thread's share of a {@code bytes}-byte copy starts. */
    private static long shareStart(Group group, long bytes, long alignment) {
        return group == null ? 0 : Math.min(bytes, checkedRank(group) * perRank(group, bytes, alignment));
    }

    /** Where the calling thread's share ends (exclusive). */
    private static long shareEnd(Group group, long bytes, long alignment) {
        return group == null ? bytes : Math.min(bytes, (checkedRank(group) + 1) * perRank(group, bytes, alignment));
    }

    private static long perRank(Group group, long bytes, long alignment) {
        long units = bytes / alignment;
        return (units + group.size() - 1) / group.size() * alignment;
    }

    private static long checkedRank(Group group) {
        int n = group.size();
        int rank = group.threadRank();
        if (n < 1 || rank < 0 || rank >= n) {
            throw new IllegalArgumentException("memcpy_async group rank must be in 0.." + (n - 1) + " with group "
                + "size " + n + ", got rank " + rank);
        }
        return rank;
    }

    /** {@code segment.asSlice(from, length)}, without a new segment when that is the whole segment. */
    private static MemorySegment slice(MemorySegment segment, long from, long length) {
        return from == 0 && length == segment.byteSize() ? segment : segment.asSlice(from, length);
    }

    private static void checkDestination(MemorySegment dst, long bytes) {
        if (dst.isReadOnly()) {
            throw new IllegalArgumentException("memcpy_async destination is read-only");
        }
        if (bytes > dst.byteSize()) {
            throw new IllegalArgumentException("memcpy_async of " + bytes + " bytes runs past the end of the "
                + "destination (" + dst.byteSize() + " bytes)");
        }
    }

    /** A thread that is never any arena's owner: a confined segment is not accessible from it. */
    private static final Thread ANOTHER_THREAD = Thread.ofVirtual().unstarted(() -> { });

    /**
     * The segment's arena is alive, and the copy engine's threads may access it (a confined arena's segments only
     * its owner may): checked whatever the size, so that whether a copy runs inline never changes the outcome.
     */
    private static void checkUsable(MemorySegment segment, String which) {
        if (!segment.scope().isAlive()) {
            throw new IllegalArgumentException("memcpy_async " + which + " segment is closed (its arena was closed): "
                + describe(segment) + ", " + segment.byteSize() + " bytes");
        }
        if (!segment.isAccessibleBy(ANOTHER_THREAD)) {
            throw new IllegalArgumentException("memcpy_async " + which + " segment belongs to a confined arena, which "
                + "only its owner thread may access, but asynchronous copies run on the copy engine's threads: use "
                + "Arena.ofShared() or Arena.ofAuto() (" + describe(segment) + ")");
        }
    }

    private static String describe(MemorySegment segment) {
        return segment.isNative() ? "address 0x" + Long.toHexString(segment.address())
            : "heap offset " + segment.address();
    }
}
