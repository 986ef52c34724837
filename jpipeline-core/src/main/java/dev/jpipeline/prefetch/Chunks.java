package dev.jpipeline.prefetch;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.function.Consumer;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

/**
 * An open prefetching iteration: the chunks of a source, in order, each read into a stage buffer while the
 * chunks before it are computed on. Made by {@link Prefetch#open()}; iterate it once, then close it (or use
 * try-with-resources). No CUDA counterpart: the front over a thread-scope pipeline, see {@link Prefetch}.
 *
 * <p>A chunk handed out is valid until the iteration's next step ({@code hasNext()} or {@code next()}, which
 * release its stage for refilling) or {@link #close()}. Each chunk is a view whose scope ends with it: using it
 * afterwards, or keeping a {@code ByteBuffer} of it, fails with an {@link IllegalStateException} from the JDK
 * ("Already closed"), never with stale or refilled bytes. The view is confined to the iterating thread (another
 * thread gets a {@link WrongThreadException}): hand a chunk's bytes to other threads by copying them, or use the
 * parallel form. The views are made with {@link MemorySegment#reinterpret(long, Arena, java.util.function.Consumer)},
 * a restricted method: run with {@code --enable-native-access=dev.jpipeline.core} (or {@code ALL-UNNAMED} on the
 * class path) to keep the JDK from warning about it.
 *
 * <p>A failed read surfaces as a {@link ChunkFailedException} at the chunk where it happened, after every earlier
 * chunk was delivered intact; the iteration ends there. The iteration, and {@link #close()}, belong to the thread
 * that opened it. {@code close()} never waits for a source that does not answer (a stream's read that blocks),
 * and it frees the stage buffers once nothing can write into them.
 *
 * <p>Decisions: the waits of {@code hasNext()} and {@code next()} are uninterruptible, like the pipeline's (a
 * stream that does not answer holds the iteration until it does; close the stream from another thread to end it).
 * Memory from a user's buffer allocator ({@link Prefetch#buffers}) is checked to be alive when a chunk is handed
 * out; freeing it while a chunk is in use is outside what the views can check (the view's scope is its own), so
 * free it only after {@code close()}. After a {@link ChunkFailedException}, {@code hasNext()} throws rather than
 * returning false, so that a loop that swallowed the failure cannot mistake it for the end. An iteration that is
 * never closed (its thread ended without {@code close()}) keeps its off-heap buffers and a file opened by path:
 * nothing closes it from another thread, so use try-with-resources. After a stream source's early close, its reader
 * thread (a daemon) stays in a read that does not return until the stream answers or is closed by its owner.
 *
 * <p>Implementation: a state machine (open, ended, failed, closed) over a {@link ChunkFeed}, confined to the
 * thread that opened it (every entry checks it), so no field here is shared; the feed advances once per chunk,
 * whether {@code hasNext()} or {@code next()} asks first, and the view of the chunk handed out is a confined arena
 * closed at the next step.
 */
public final class Chunks implements Iterable<MemorySegment>, AutoCloseable {

    private enum State { OPEN, ENDED, FAILED, CLOSED }

    private final ChunkFeed feed;
    private final String name;
    private final long size;
    /** The number of chunks, when the size is known, else -1. */
    private final long count;
    private final Thread owner = Thread.currentThread();
    private State state = State.OPEN;
    private boolean iterated;
    /** Whether the feed has advanced past the chunk last handed out (by hasNext), and {@link #ahead} is its result. */
    private boolean stepped;
    private long ahead;
    /** The scope of the chunk handed out, or null. */
    private Arena view;
    /** The index of the chunk the feed holds, and where it starts; where the next one starts. */
    private long index = -1;
    private long position;
    private long nextPosition;

    /** @param size the source's size, or -1; then {@code chunk}, the chunk size, gives the number of chunks */
    Chunks(ChunkFeed feed, String name, long size, long chunk) {
        this.feed = feed;
        this.name = name;
        this.size = size;
        this.count = size < 0 ? -1 : (size + chunk - 1) / chunk;
    }

    /**
     * The source's size, when it was known at {@link Prefetch#open()}.
     *
     * @return the bytes the iteration delivers, or -1 for a source read to its end (a stream, an {@code Iterable})
     */
    public long size() {
        return size;
    }

    /**
     * The chunks as a sequential, ordered stream, sized when the source's size is known: one use of the iteration
     * (instead of {@link #iterator()}), and closing the stream closes the chunks. Each element is valid until the
     * stream takes the next one: map a chunk to what you need from it ({@code mapToLong}, {@code map}) in the
     * stage that receives it. Operations that keep elements (sorting, collecting the segments themselves) keep
     * views that fail when used, not stale bytes. The stream does not split: a parallel stream runs it on its own
     * thread or fails, naming the thread; use {@link Prefetch#parallel} for parallel computation.
     *
     * @return the chunks, in order
     * @throws IllegalStateException as {@link #iterator()}
     */
    public Stream<MemorySegment> stream() {
        Iterator<MemorySegment> chunks = iterator();
        int characteristics = Spliterator.ORDERED | Spliterator.NONNULL
            | (count >= 0 ? Spliterator.SIZED | Spliterator.SUBSIZED : 0);
        Spliterator<MemorySegment> spliterator = new Spliterators.AbstractSpliterator<>(
                count >= 0 ? count : Long.MAX_VALUE, characteristics) {
            private long delivered;

            @Override
            public boolean tryAdvance(Consumer<? super MemorySegment> action) {
                if (!chunks.hasNext()) {
                    return false;
                }
                MemorySegment chunk = chunks.next();
                delivered++;
                action.accept(chunk);
                return true;
            }

            @Override
            public Spliterator<MemorySegment> trySplit() {
                return null;        // a chunk lives until the next step: no batch of chunks may be taken ahead
            }

            @Override
            public long estimateSize() {
                return count >= 0 ? count - delivered : Long.MAX_VALUE;
            }
        };
        return StreamSupport.stream(spliterator, false).onClose(this::close);
    }

    /**
     * The iterator over the chunks: one only, since the chunks are read once.
     *
     * @return the iteration's iterator
     * @throws IllegalStateException when called a second time, by another thread than the one that opened the
     *                               iteration, or after {@link #close()}
     */
    @Override
    public Iterator<MemorySegment> iterator() {
        checkOwner("iterator()");
        if (iterated) {
            throw new IllegalStateException("the chunks of " + name + " can be iterated once: iterator() was called "
                + "before (open the source again to read it again)");
        }
        if (state == State.CLOSED) {
            throw new IllegalStateException("the chunks of " + name + " are closed");
        }
        iterated = true;
        return new Iterator<>() {
            @Override
            public boolean hasNext() {
                return step();
            }

            @Override
            @SuppressWarnings("restricted")   // reinterpret: the scoped view is the point (class comment)
            public MemorySegment next() {
                if (!step()) {
                    throw new NoSuchElementException("the chunks of " + name + " ended after " + (index + 1)
                        + " chunks (" + nextPosition + " bytes)");
                }
                stepped = false;
                MemorySegment buffer;
                try {
                    buffer = StageBuffers.alive(feed.buffer(), name);
                } catch (IllegalStateException e) {
                    state = State.FAILED;
                    throw e;
                }
                view = Arena.ofConfined();
                return buffer.reinterpret(ahead, view, null);
            }
        };
    }

    /** Advances the feed past the chunk handed out, once per chunk: whether there is a next one. */
    private boolean step() {
        checkOwner("the iteration");
        if (stepped) {
            return true;
        }
        switch (state) {
            case ENDED:
                return false;
            case FAILED:
                throw new IllegalStateException("the chunks of " + name + " failed at chunk " + (index + 1)
                    + ": the iteration ended there");
            case CLOSED:
                throw new IllegalStateException("the chunks of " + name + " are closed");
            default:
                break;
        }
        endView();
        try {
            ahead = feed.advance();
        } catch (ChunkFeed.SourceFailure failure) {
            state = State.FAILED;
            throw new ChunkFailedException(index + 1, nextPosition, "reading", name, failure.getCause());
        }
        if (ahead < 0) {
            state = State.ENDED;
            return false;
        }
        index++;
        position = nextPosition;
        nextPosition += ahead;
        stepped = true;
        return true;
    }

    /** Ends the scope of the chunk handed out: any later use of it fails. */
    private void endView() {
        if (view != null) {
            Arena ending = view;
            view = null;
            ending.close();
        }
    }

    /**
     * Ends the iteration: the chunk handed out becomes unusable, copies in flight are waited for (they end),
     * the stage buffers are freed once nothing writes into them, and a file opened by path is closed. A stream
     * source is not closed (it is the caller's), and a read of it that blocks is not waited for. Idempotent.
     *
     * @throws IllegalStateException when called by another thread than the one that opened the iteration
     */
    @Override
    public void close() {
        checkOwner("close()");
        if (state == State.CLOSED) {
            return;
        }
        state = State.CLOSED;
        endView();
        feed.close();
    }

    private void checkOwner(String what) {
        if (Thread.currentThread() != owner) {
            throw new IllegalStateException(what + " of the chunks of " + name + " belongs to the thread that opened "
                + "them, '" + owner.getName() + "', not '" + Thread.currentThread().getName() + "'");
        }
    }

    @Override
    public String toString() {
        return "Chunks[" + name + ", " + state.name().toLowerCase(java.util.Locale.ROOT)
            + (index >= 0 ? ", chunk " + index + " at byte " + position : "") + "]";
    }
}
