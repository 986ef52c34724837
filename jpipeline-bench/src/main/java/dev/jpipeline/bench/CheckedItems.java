package dev.jpipeline.bench;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The consumer's side of an end-to-end hand-off benchmark. Items are sequence numbers modulo {@link #ITEMS}; the
 * consumer thread checks that each is the next one ({@link #accept}) and publishes how many it has checked. The
 * producer (the benchmark thread) sends {@link #ITEMS} items per invocation and then waits in {@link #awaitAll}
 * until the consumer has checked every one, so an invocation's time covers the whole hand-off, not just the
 * producer's side of it.
 *
 * <p>The count is written by the consumer only (a release store, a plain store on x86) and read by the producer
 * once per invocation. It sits on a cache line of its own, padded on both sides, so that the consumer's write per
 * item never touches a line the producer writes (a benchmark state's fields, a queue's indices).
 */
final class CheckedItems extends CheckedItemsPadAfter {

    /** Items per invocation: 2^16. */
    static final int ITEMS = 1 << 16;
    static final int MASK = ITEMS - 1;
    /** How long the producer waits for the consumer at the end of an invocation before it gives up. */
    private static final long PATIENCE_NANOS = 10_000_000_000L;

    /** The consumer's failure, if it stopped on a wrong item; read by the waiting producer. */
    private volatile Throwable failure;

    /** Consumer thread: checks that {@code item} is the next in sequence and counts it. */
    void accept(long item) {
        long expected = seen;
        if (item != (expected & MASK)) {
            IllegalStateException e = new IllegalStateException(
                "item " + expected + " lost or reordered: expected " + (expected & MASK) + ", got " + item);
            failure = e;
            throw e;
        }
        SEEN.setRelease(this, expected + 1);
    }

    /** Consumer thread: records why it stopped early, so that the waiting producer fails instead of timing out. */
    void fail(Throwable t) {
        failure = t;
    }

    /** Producer thread: throws if the consumer has stopped on a failure. */
    void checkConsumer() {
        if (failure != null) {
            throw new IllegalStateException("consumer failed", failure);
        }
    }

    /** Producer thread: waits until the consumer has checked {@code total} items in all. */
    void awaitAll(long total) {
        long start = 0;
        for (int spins = 0; (long) SEEN.getAcquire(this) < total; spins++) {
            checkConsumer();
            if ((spins & 0xFFFF) == 0xFFFF) {
                long now = System.nanoTime();
                if (start == 0) {
                    start = now;
                } else if (now - start > PATIENCE_NANOS) {
                    throw new IllegalStateException("consumer checked " + SEEN.getAcquire(this) + " of " + total
                        + " items within 10 s");
                }
            }
            Thread.onSpinWait();
        }
    }

    private static final VarHandle SEEN;

    static {
        try {
            SEEN = MethodHandles.lookup().findVarHandle(CheckedItemsField.class, "seen", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}

/** 128 bytes of padding before the count. */
abstract class CheckedItemsPadBefore {
    long p00, p01, p02, p03, p04, p05, p06, p07;
    long p08, p09, p10, p11, p12, p13, p14, p15;
}

/** The count: written by the consumer thread only, through {@code SEEN}. */
abstract class CheckedItemsField extends CheckedItemsPadBefore {
    long seen;
}

/** 128 bytes of padding after the count. */
abstract class CheckedItemsPadAfter extends CheckedItemsField {
    long q00, q01, q02, q03, q04, q05, q06, q07;
    long q08, q09, q10, q11, q12, q13, q14, q15;
}
