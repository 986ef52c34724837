package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jpipeline.copy.CopyEngine;
import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Test support: every worker of a copy engine held in a gated read until {@link #close()}, each observed inside it
 * (so that only a waiting thread can perform a copy meanwhile). The gated reads are of a channel no waiter may read.
 */
final class HeldWorkers implements AutoCloseable {

    private final GatedFileChannel channel = new GatedFileChannel(new byte[1 << 16]);
    private final List<CountDownLatch> gates = new ArrayList<>();
    private final List<CountDownLatch> landed = new ArrayList<>();
    private boolean closed;

    HeldWorkers(CopyEngine engine) {
        for (int w = 0; w < engine.workers(); w++) {
            long position = 4096L * w;
            gates.add(channel.gate(position));
            CountDownLatch done = new CountDownLatch(1);
            landed.add(done);
            engine.read(Arena.ofAuto().allocate(4096), channel, position, failure -> done.countDown());
        }
        for (int w = 0; w < engine.workers(); w++) {
            long position = 4096L * w;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (channel.reader(position) == null && System.nanoTime() - deadline < 0) {
                Thread.onSpinWait();                    // observed: a worker is inside the gated read
            }
            assertTrue(channel.reader(position) != null, "worker " + w + " never started its gated read");
        }
    }

    /** Opens the gates and waits (bounded) until every held read has landed; a second call does nothing. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        gates.forEach(CountDownLatch::countDown);
        try {
            for (CountDownLatch done : landed) {
                assertTrue(done.await(10, TimeUnit.SECONDS), "a held worker's read never landed");
            }
        } catch (InterruptedException e) {
            throw new AssertionError("interrupted while the held workers' reads landed", e);
        }
    }
}
