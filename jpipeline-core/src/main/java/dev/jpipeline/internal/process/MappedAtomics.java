package dev.jpipeline.internal.process;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;

/**
 * Compare-and-sets on the words of a mapped region that a truncation of its file turns into an exception in the
 * calling thread, never a fatal signal (issue 26).
 *
 * <pre>
 * Another process can shrink a region's file while it is mapped (ftruncate needs only write access, which every
 * member has); the pages past the new end are then gone from every mapping, and an access to them raises SIGBUS.
 * HotSpot turns that fault into an InternalError ("a fault occurred in an unsafe memory access operation") in
 * compiled code and in the interpreter's loads and stores, but not in the interpreter's compare-and-set
 * (Unsafe_CompareAndSetInt/Long), where it ends the JVM (measured on Temurin 25.0.3 with -Xint: exit 134).
 * So each CAS here loads its word first (a volatile load, which the interpreter guards): a word past a truncated
 * end faults in the load. What is left is a truncation between the load and the CAS of a CAS that the
 * interpreter runs: a window of one instruction sequence, where the unguarded CAS covered the whole run.
 * RegionFaults turns the InternalError into an exception that names the region and the rule.
 * </pre>
 */
public final class MappedAtomics {

    private static final VarHandle LONG = JAVA_LONG.varHandle();
    private static final VarHandle INT = JAVA_INT.varHandle();

    private MappedAtomics() {
    }

    /** {@code compareAndSet} of the aligned long at {@code at}, after a guarded load of it. */
    public static boolean casLong(MemorySegment segment, long at, long expect, long update) {
        long seen = (long) LONG.getVolatile(segment, at);
        return seen == expect && LONG.compareAndSet(segment, at, expect, update);
    }

    /** {@code compareAndSet} of the aligned int at {@code at}, after a guarded load of it. */
    public static boolean casInt(MemorySegment segment, long at, int expect, int update) {
        int seen = (int) INT.getVolatile(segment, at);
        return seen == expect && INT.compareAndSet(segment, at, expect, update);
    }
}
