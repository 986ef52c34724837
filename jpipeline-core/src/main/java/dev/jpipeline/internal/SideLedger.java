package dev.jpipeline.internal;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.jpipeline.internal.process.MappedAtomics;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;

/**
 * Who produces and who consumes in a pipeline partitioned by count ({@code make(group, state, P)}): as upstream
 * allows, any P threads may produce, so a thread's side is claimed by its first operation.
 *
 * <pre>
 * State: one word, updated by CAS:  producers claimed (20 bits) | consumers claimed (20) | undecided quitters (20)
 * (on the heap, or in a shared region for a system-scope pipeline whose threads are in several processes)
 *
 * A thread that quits before its first operation has no side yet: it stays undecided until the others' claims
 * determine it, and never takes a place that a live thread needs. Undecided quitters are settled when
 *   - every producer place is claimed            → they are all consumers;
 *   - every consumer place is claimed            → they are all producers;
 *   - the free places are exactly the quitters   → they fill both sides.
 * Places are numbered in the order they are taken, settled quitters included: a claim's number is the side's
 * count before it, and it is the thread's member number on that side (StageSide). Each settled quitter is
 * dropped from its place's barriers from round 0 (it never arrived anywhere). Until then no barrier of its place
 * can complete round 0 without it, so the drop always finds the barrier at round 0.
 * A claim beyond a side's places is refused: the mistake that hangs a CUDA kernel (consumer threads running
 * producer code) becomes an IllegalStateException.
 * </pre>
 */
final class SideLedger {

    private static final int BITS = 20;
    private static final long MASK = (1L << BITS) - 1;

    private final int producerPlaces;
    private final int consumerPlaces;
    /** The packed counts, a long at offset 0: accessed through {@code STATE} (volatile reads, CAS). */
    private final MemorySegment state;

    /** A ledger on the heap. */
    SideLedger(int producerPlaces, int consumerPlaces) {
        this(producerPlaces, consumerPlaces, MemorySegment.ofArray(new long[1]));
    }

    /** A ledger whose word is {@code word}'s first long, formatted to 0 (a shared region's). */
    SideLedger(int producerPlaces, int consumerPlaces, MemorySegment word) {
        this.producerPlaces = producerPlaces;
        this.consumerPlaces = consumerPlaces;
        this.state = word;
    }

    private long state() {
        return (long) STATE.getVolatile(state, 0L);
    }

    /**
     * Settled quitters to drop: {@code producers} places from {@code firstProducer} on, {@code consumers} places
     * from {@code firstConsumer} on.
     */
    record Drops(int firstProducer, int producers, int firstConsumer, int consumers) {
        static final Drops NONE = new Drops(0, 0, 0, 0);
    }

    /** A claimed place: the thread's member number on its side, and the quitters the claim settled. */
    record Claim(int member, Drops settled) {
    }

    /**
     * The thread of {@code rank} takes a side with its first operation.
     *
     * @return the place taken and the undecided quitters this claim settles
     * @throws IllegalStateException when that side has no free place
     */
    Claim claim(boolean producer, int rank, int groupSize) {
        for (;;) {
            long s = state();
            int p = producers(s);
            int c = consumers(s);
            if (producer ? p >= producerPlaces : c >= consumerPlaces) {
                throw tooMany(producer, (producer ? p : c) + 1, rank, groupSize);
            }
            long next = producer ? pack(p + 1, c, undecided(s)) : pack(p, c + 1, undecided(s));
            long settled = settle(next);
            if (MappedAtomics.casLong(state, 0L, s, settled)) {
                return new Claim(producer ? p : c, dropsBetween(next, settled));
            }
        }
    }

    /** A thread quits before its first operation. @return the quitters (itself included) this settles */
    Drops quitUndecided() {
        for (;;) {
            long s = state();
            long next = pack(producers(s), consumers(s), undecided(s) + 1);
            long settled = settle(next);
            if (MappedAtomics.casLong(state, 0L, s, settled)) {
                return dropsBetween(next, settled);
            }
        }
    }

    /** Undecided quitters not settled yet. */
    int undecided() {
        return undecided(state());
    }

    private long settle(long s) {
        int p = producers(s);
        int c = consumers(s);
        int u = undecided(s);
        if (u == 0) {
            return s;
        }
        if (p == producerPlaces) {
            return pack(p, c + u, 0);
        }
        if (c == consumerPlaces) {
            return pack(p + u, c, 0);
        }
        if ((producerPlaces - p) + (consumerPlaces - c) == u) {
            return pack(producerPlaces, consumerPlaces, 0);
        }
        return s;
    }

    private static Drops dropsBetween(long before, long after) {
        if (before == after) {
            return Drops.NONE;
        }
        return new Drops(producers(before), producers(after) - producers(before),
            consumers(before), consumers(after) - consumers(before));
    }

    private IllegalStateException tooMany(boolean producer, int nth, int rank, int groupSize) {
        int limit = producer ? producerPlaces : consumerPlaces;
        String role = producer ? "producer" : "consumer";
        return new IllegalStateException("rank " + rank + " is the " + ordinal(nth) + " thread to act as a " + role
            + ", but the pipeline was made with " + limit + " " + role + "s (producer count " + producerPlaces
            + " in a group of " + groupSize + "): each thread must keep to one side, and exactly " + producerPlaces
            + " threads may produce");
    }

    private static String ordinal(int n) {
        int mod100 = n % 100;
        String suffix = mod100 >= 11 && mod100 <= 13 ? "th"
            : switch (n % 10) { case 1 -> "st"; case 2 -> "nd"; case 3 -> "rd"; default -> "th"; };
        return n + suffix;
    }

    private static int producers(long s) {
        return (int) ((s >>> (2 * BITS)) & MASK);
    }

    private static int consumers(long s) {
        return (int) ((s >>> BITS) & MASK);
    }

    private static int undecided(long s) {
        return (int) (s & MASK);
    }

    private static long pack(int producers, int consumers, int undecided) {
        return ((long) producers << (2 * BITS)) | ((long) consumers << BITS) | undecided;
    }

    @Override
    public String toString() {
        long s = state();
        return producers(s) + "/" + producerPlaces + " producer places and " + consumers(s) + "/" + consumerPlaces
            + " consumer places taken, " + undecided(s) + " undecided quitters";
    }

    private static final VarHandle STATE = JAVA_LONG.varHandle();
}
