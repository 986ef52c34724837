package dev.jpipeline;

import java.lang.foreign.MemorySegment;
import java.util.Iterator;
import java.util.function.IntFunction;

/**
 * An endless {@code Iterable<MemorySegment>} whose iterator serves {@code segment.apply(i)} for i = 0, 1, ... and,
 * at index {@code failAt}, runs {@code failure}, which throws (a RuntimeException or an Error): a source that breaks
 * mid-iteration, for the prefetch tests.
 */
public final class FailingSegments implements Iterable<MemorySegment> {

    private final int failAt;
    private final IntFunction<MemorySegment> segment;
    private final Runnable failure;

    public FailingSegments(int failAt, IntFunction<MemorySegment> segment, Runnable failure) {
        this.failAt = failAt;
        this.segment = segment;
        this.failure = failure;
    }

    @Override
    public Iterator<MemorySegment> iterator() {
        return new Iterator<>() {
            int served;

            @Override
            public boolean hasNext() {
                return true;
            }

            @Override
            public MemorySegment next() {
                if (served == failAt) {
                    failure.run();
                    throw new AssertionError("the planted failure did not throw");
                }
                return segment.apply(served++);
            }
        };
    }
}
